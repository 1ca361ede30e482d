#!/bin/sh
# gpiobrokerctl on the bench: output and exit codes of every command, as real uids,
# against the real broker (persistent requests across processes, busy, denied,
# not found, monitor text and JSON, wait), and the libgpiod v2 tools' option letters,
# outputs and error forms it speaks; every command's --json read by a real parser,
# also with a consumer that is not UTF-8 (another program's). TAP output.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${GB_BENCH:-}" ] || exec "$here/../bench/run" --chip gbcli:6:0=lamp,1=switch,2=fan,3=door -- "$here/$(basename "$0")" "$@"

broker=${GB_TEST_BROKER:?GB_TEST_BROKER must name the gpiod-broker binary}
ctl=${GB_TEST_CTL:?GB_TEST_CTL must name the gpiobrokerctl binary}
. "$here/../bench/gpiosim.sh"
. "$here/../bench/test-lib.sh"
# run USER ARGS...: output (stdout+stderr) in $out, exit code in $rc
run() { u=$1; shift; out=$(as "$u" "$ctl" "$@" 2>&1); rc=$?; }
# json DESCRIPTION EXPR: $out is one JSON value, strict UTF-8, read by Python's parser
# as d (chip: the bench chip's name), and the Python expression EXPR holds for it.
json() {
	if printf '%s' "$out" | python3 -c 'import json, sys
chip = sys.argv[2]
d = json.loads(sys.stdin.buffer.read().decode("utf-8"))
sys.exit(0 if eval(sys.argv[1]) else 1)' "$2" "$chip"; then
		ok "$1"
	else
		not_ok "$1" "$out"
	fi
}
# jsonl DESCRIPTION FILE EXPR: each line of FILE is one JSON object; d is their list.
jsonl() {
	if python3 -c 'import json, sys
chip = sys.argv[3]
d = [json.loads(l) for l in open(sys.argv[1], "rb").read().decode("utf-8").splitlines()]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$2" "$3" "$chip"; then
		ok "$1"
	else
		not_ok "$1" "$(cat "$2")"
	fi
}
# used_wait OFFSET true|false: until the broker's Line object says so.
used_wait() {
	for i in $(seq 200); do
		[ "$(busctl --system get-property org.gpiodbroker1 /org/gpiodbroker1/chip/$chip/line$1 org.gpiodbroker1.Line Used)" = "b $2" ] && return
		sleep 0.02
	done
}

chip=$(sim_chip_dev gbcli)
mkdir -p /run/gb-cli-policy
cat > /run/gb-cli-policy/10-cli.conf <<'POLICY'
[group bench]
chip = gbcli
offsets = 0-3
users = gb-alice, gb-bob
directions = input, output
direction-may-change = yes
edges = none, rising, falling, both
bias = as-is, disabled, pull-up, pull-down
drive = push-pull, open-drain
persistent = yes
watch-users = gb-bob

[line porch-light]
chip = gbcli
offset = 4
users = gb-alice
directions = input, output
persistent = no
POLICY

# wait: no broker yet -> timeout code 6; then the broker appears -> 0.
run gb-alice wait --timeout 0.3
check "wait times out with code 6 while no broker" 6 "$rc"
run gb-alice detect
check "detect without a broker: code 7" 7 "$rc"
check "... one wording" "gpiobrokerctl: gpiod-broker is not running (start it, or wait for it: gpiobrokerctl wait)" "$out"
run gb-alice get switch
check "get without a broker: code 7" 7 "$rc"
check "... the same wording as detect" "gpiobrokerctl: gpiod-broker is not running (start it, or wait for it: gpiobrokerctl wait)" "$out"
run gb-alice status
check "status without a broker: code 7" 7 "$rc"
check "... says so" "gpiod-broker: not running" "$out"
"$broker" --log-level=warning --policy-dir=/run/gb-cli-policy &
bpid=$!
run gb-alice wait --timeout 10
check "wait returns 0 once the broker is up" 0 "$rc"

# The bench has no udev: the chip has no /dev/gpio/by-* links nor serial, and the
# rows stay gpiodetect's and gpioinfo's, with nothing after them (not even a space).
run gb-alice detect
check "detect lists the chip, gpiodetect's row exactly" "$chip [gbcli] (6 lines)" "$out"
run gb-carol info -c "$chip"
check "info: gpioinfo's chip header exactly, nothing after it" "$chip - 6 lines:" "$(printf '%s\n' "$out" | head -n 1)"
run gb-alice find switch
check "find prints chip and offset" "$chip 1" "$out"
run gb-alice find nothing-here
check "find: not found is code 3" 3 "$rc"
contains "find: the broker's message" "NotFound" "$out"
run gb-alice find swich
check "find: a misspelt line name is code 3" 3 "$rc"
contains "... did you mean, from the broker's line names" "did you mean 'switch'?" "$out"
run gb-alice get porch-lite
contains "get: did you mean, from the policy's aliases" "did you mean 'porch-light'?" "$out"
run gb-carol info "$chip"
check "info CHIP (a chip where LINEs go, as gpioinfo gpiochip0): code 3" 3 "$rc"
contains "... and the hint: -c CHIP" "gpiobrokerctl: info: $chip is a chip, not a line: did you mean '-c $chip'?" "$out"
run gb-alice get gbcli
contains "get LABEL: the same hint, for the chip's label" "gpiobrokerctl: get: gbcli is a chip, not a line: did you mean '-c gbcli'?" "$out"
run gb-alice set "/dev/$chip=1"
contains "set /dev/CHIP=1: the same hint" "/dev/$chip is a chip, not a line: did you mean '-c /dev/$chip'?" "$out"
run gb-alice find "$chip"
contains "find CHIP (find has no -c): where its lines are" "$chip is a chip, not a line (gpiobrokerctl info -c $chip lists its lines)" "$out"
run gb-alice find --json switch
check "find --json" "{\"chip\":\"$chip\",\"offset\":1,\"path\":\"/org/gpiodbroker1/chip/$chip/line1\"}" "$out"
run gb-alice detect --json
check "detect --json: the identity keys, null where there is no udev" "[{\"name\":\"$chip\",\"label\":\"gbcli\",\"num_lines\":6,\"path\":\"/org/gpiodbroker1/chip/$chip\",\"by_path\":null,\"by_id\":null,\"serial\":null}]" "$out"

run gb-alice request -p lamp=1
check "request: -p is the debounce period (libgpiod), not --persistent: refused" 2 "$rc"
contains "... naming the bad period" "bad debounce period 'lamp=1'" "$out"
run gb-alice request --persistent -C lamp-ctl lamp=1
check "persistent request prints its short id" "1" "$out"
check "... code 0" 0 "$rc"
check "the simulator sees the output high" 1 "$(sim_value gbcli 0)"
run gb-carol info lamp
contains "info -C: the consumer" 'consumer="lamp-ctl"' "$out"
contains "info shows the request by id" 'request=1' "$out"
check "info LINE: gpioinfo's one-row form" "$(printf '%s 0\t"lamp"          \toutput consumer="lamp-ctl" request=1' "$chip")" "$out"
run gb-carol info --unquoted lamp
check "info --unquoted" "$(printf '%s 0\tlamp            \toutput consumer=lamp-ctl request=1' "$chip")" "$out"
run gb-carol info
contains "info has gpioinfo's chip header" "$chip - 6 lines:" "$out"
contains "info: gpioinfo's padded rows" "$(printf '\tline   1:\t"switch"        \tinput')" "$out"
contains "info: unnamed lines, alias after the attributes" "$(printf '\tline   4:\tunnamed         \tinput alias="porch-light"')" "$out"
run gb-carol info -c gbcli
check "info -c CHIP (label) lists all its lines" 7 "$(printf '%s\n' "$out" | wc -l)"
run gb-carol info -c "$chip" 3
check "info -c CHIP OFFSET: that line only, code 0" "0 $(printf '%s 3\t"door"          \tinput' "$chip")" "$rc $out"
run gb-carol info -c "${chip#gpiochip}" 3
check "info -c NUMBER OFFSET" "$(printf '%s 3\t"door"          \tinput' "$chip")" "$out"
run gb-carol info -c "/dev/$chip" door
check "info -c /dev/PATH NAME" "$(printf '%s 3\t"door"          \tinput' "$chip")" "$out"
run gb-carol info -c "$chip" 9
check "info -c CHIP with no such offset: code 3" 3 "$rc"
run gb-carol info -c gbclu 3
check "info -c: unknown chip, code 3" 3 "$rc"
contains "... did you mean" "did you mean 'gbcli'?" "$out"
run gb-carol info --json lamp
if printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[0]["consumer"]=="lamp-ctl" and d[0]["request"]=="1" and d[0]["offset"]==0' 2>/dev/null; then
	ok "info --json"; else not_ok "info --json" "$out"; fi
run gb-carol info lamp
check "info without --verbose: no access rows" 1 "$(printf '%s\n' "$out" | wc -l)"
run gb-carol info --verbose lamp
contains "info LINE: the policy's answer for a user it leaves out" \
	"access: denied: uid 60003 is not among the users or groups of [group bench] (/run/gb-cli-policy/10-cli.conf:1)" "$out"
run gb-alice info --verbose fan
contains "info LINE: the covering entry and what it allows" \
	"access: allowed by [group bench] (/run/gb-cli-policy/10-cli.conf:1): directions=input,output edges=none,rising,falling,both persistent=yes" "$out"
run gb-alice info --verbose --json fan
contains "info --verbose --json: the entry's grants, direct line fds among them" '"persistent":true,"direct":false' "$out"
run gb-alice info --verbose "$chip:5"
contains "info LINE: no entry covers it" "access: denied: " "$out"

run gb-alice set lamp=0
check "set on own persistent request: says which request, as every time" "1" "$out"
check "... the output follows" 0 "$(sim_value gbcli 0)"
run gb-alice get lamp
check "get through own persistent request: gpioget's output" '"lamp"=inactive' "$out"
run gb-alice get --numeric lamp
check "get --numeric" 0 "$out"
run gb-alice get --numeric /org/gpiodbroker1/request/1
check "get by request path" 0 "$out"
run gb-alice get 1
check "get by request id, the line's name shown" '"lamp"=inactive' "$out"
run gb-alice get -l --numeric lamp
check "get -l on a line held active-high: the active-low sense" 1 "$out"
run gb-alice get -b pull-up lamp
check "get with settings on a held line: refused" 2 "$rc"
contains "... naming reconfigure" "gpiobrokerctl reconfigure" "$out"

run gb-bob set lamp=1
check "another user's line: busy, code 4" 4 "$rc"
contains "... says who holds it" "lamp-ctl" "$out"
check "... and the output did not change" 0 "$(sim_value gbcli 0)"
run gb-bob get /org/gpiodbroker1/request/1
check "another user's persistent request: denied, code 5" 5 "$rc"
contains "... with the broker's error" "PermissionDenied" "$out"
run gb-bob release 1
check "release of another user's request (by id): denied, code 5" 5 "$rc"
run gb-alice release 99
check "release of no such request: code 3" 3 "$rc"
check "... in plain words, no D-Bus jargon" "gpiobrokerctl: release: no request 99 (gpiobrokerctl requests lists them)" "$out"
run gb-alice get /org/gpiodbroker1/request/99
check "get of no such request path: the same words" "3 gpiobrokerctl: get: no request 99 (gpiobrokerctl requests lists them)" "$rc $out"
run gb-carol request door
check "policy denies carol: code 5" 5 "$rc"
run gb-alice request --persistent gbcli:5
check "line outside the policy: code 5" 5 "$rc"
run gb-alice get gbcli:42
check "no such offset: code 3" 3 "$rc"

run gb-alice requests
check "requests lists it by id" "$(printf '1\tlamp-ctl\tpersistent\tuid=60001\towner=-')" "$out"
run gb-alice requests --json
check "requests --json" '[{"request":"1","path":"/org/gpiodbroker1/request/1","label":"lamp-ctl","persistent":true,"owner_uid":60001,"owner":null}]' "$out"

# set on a free line: a new persistent request, printed; the value stays.
run gb-alice set -l fan=0
check "set -l is active-low (libgpiod), not a label: code 0" 0 "$rc"
check "... set -l fan=0 drives the line high" 1 "$(sim_value gbcli 2)"
check "... and prints the persistent request's id" "2" "$out"
run gb-alice release 2
check "release by id" 0 "$rc"
run gb-alice set fan=1
check "set on a free line makes a persistent request" "3" "$out"
check "... the output is high after the command exited" 1 "$(sim_value gbcli 2)"
run gb-alice set fan=0
check "a second set reuses it and prints the same" "3" "$out"
check "... the output is low" 0 "$(sim_value gbcli 2)"
run gb-alice set -l fan=1
check "set -l on a line it holds: applied (a reconfigure)" "0 3" "$rc $out"
check "... active-low 1 is physical 0" 0 "$(sim_value gbcli 2)"
# On a terminal (or with --verbose: the UML bench's kernel has no ptys), set says
# what holds the line and how to free it.
run gb-alice set --verbose fan=0
check "set --verbose (a terminal's output): what holds it and how to free it" "fan=0, held by request 3 (persistent): gpiobrokerctl release 3" "$out"
# All or nothing: fan is ours, door is bob's; nothing may be driven.
run gb-alice set fan=1
as gb-bob "$ctl" request --persistent door=0 >/dev/null 2>&1
run gb-alice set fan=0 door=1
check "multi-line set with one line busy: code 4" 4 "$rc"
check "... the line it holds was not driven" 0 "$(sim_value gbcli 2)"
as gb-bob "$ctl" release door >/dev/null 2>&1
run gb-alice set fan=0 switch=1
check "multi-line set, one held and one new: code 0" 0 "$rc"
check "... both driven (fan is active-low now)" "1 1" "$(sim_value gbcli 2) $(sim_value gbcli 1)"
run gb-alice set -d open-drain switch=0
run gb-carol info switch
contains "set -d on a held line: applied" "drive=open-drain" "$out"
run gb-alice release switch
run gb-alice set porch-light=1
check "set on a persistent = no line: denied, code 5" 5 "$rc"
contains "... pointing to request" "hold it with: gpiobrokerctl request porch-light=VALUE" "$out"
run gb-alice reconfigure --active-low fan
check "reconfigure a held line" 0 "$rc"
run gb-alice release fan
check "release by line" 0 "$rc"
run gb-alice release lamp
check "release the lamp" 0 "$rc"
run gb-alice requests
check "nothing held" "" "$out"
run gb-alice release fan
check "release of a line not held: code 3" 3 "$rc"

# get on a free line: a temporary request, gone afterwards.
sim_pull gbcli 1 pull-up
run gb-alice get --numeric switch door
check "get free lines (inputs, released after)" "1 0" "$out"
run gb-alice get switch door
check "get: gpioget's output" '"switch"=active "door"=inactive' "$out"
run gb-alice get --unquoted switch
check "get --unquoted" 'switch=active' "$out"
run gb-alice get -a --numeric switch
check "get -a is as-is (gpioget), not active-low: the value is not inverted" "0 1" "$rc $out"
run gb-alice get -l --numeric switch
check "get -l is active-low: inverted" 0 "$out"
run gb-alice get -c "$chip" --numeric 1 3
check "get -c CHIP OFFSET..." "1 0" "$out"
run gb-alice get -c "$chip" 1
check "... offsets shown as given, as gpioget" '"1"=active' "$out"
run gb-alice get -p 10ms --numeric switch
check "get -p hold period with a unit" 1 "$out"
run gb-alice get --json switch door
check "get --json" '[{"line":"switch","value":1},{"line":"door","value":0}]' "$out"
run gb-alice get -b sideways switch
check "bad bias: usage, code 2" 2 "$rc"
check "... one line naming the value and the allowed ones, then where to look" "$(printf "gpiobrokerctl: get: bad bias 'sideways' (allowed: as-is, disabled, pull-up, pull-down)\ntry 'gpiobrokerctl get --help'")" "$out"
run gb-alice get --numerc switch
check "unknown option: did you mean" "$(printf "gpiobrokerctl: get: unknown option '--numerc' (did you mean '--numeric'?)\ntry 'gpiobrokerctl get --help'")" "$out"
run gb-alice get -s switch
check "a libgpiod letter that cannot be honoured is refused" 2 "$rc"
contains "... saying so" "-s/--strict is not supported" "$out"
run gb-alice set -z switch=1
contains "set -z refused" "-z/--daemonize is not supported" "$out"
run gb-alice get -v
check "-v/--version on a command: code 0" 0 "$rc"
contains "... the version" "gpiobrokerctl (gpiod-broker) " "$out"
run gb-alice -v
contains "-v/--version" "gpiobrokerctl (gpiod-broker) " "$out"
run gb-alice requests
check "... nothing left held" "" "$out"

# A managed request held by a running "request" is released when it is killed.
# (setpriv directly, not through "as": $! must be the CLI itself)
setpriv --reuid=gb-alice --regid=gb-alice --init-groups -- "$ctl" request switch > /run/req.out 2>&1 &
rpid=$!
for i in $(seq 200); do [ -s /run/req.out ] && break; sleep 0.02; done
if grep -qxE '[0-9]+' /run/req.out; then ok "managed request prints its id"; else not_ok "managed request prints its id" "$(cat /run/req.out)"; fi
run gb-bob request switch
check "... busy for others while it runs" 4 "$rc"
kill -TERM "$rpid"; wait "$rpid"
check "... exits 0 on SIGTERM" 0 "$?"
# (Wait for the broker's line-info watch: right after a release it may still answer
# Busy from its cached kernel line info, a broker race reported separately.)
for i in $(seq 200); do
	[ "$(busctl --system get-property org.gpiodbroker1 /org/gpiodbroker1/chip/$chip/line1 org.gpiodbroker1.Line Used)" = "b false" ] && break
	sleep 0.02
done
run gb-bob get --numeric switch
check "... and the line is free again" 1 "$out"

# monitor: events, in order, text and JSON; the request is released at exit.
mon() { # mon FORMAT: run monitor --count 3 in the background into /run/mon.out
	sim_pull gbcli 3 pull-down
	as gb-alice "$ctl" monitor --count 3 --format "$1" --timeout 20 door > /run/mon.out 2>&1 &
	mpid=$!
	for i in $(seq 200); do
		[ "$(busctl --system get-property org.gpiodbroker1 /org/gpiodbroker1/chip/$chip/line3 org.gpiodbroker1.Line Used)" = "b true" ] && break
		sleep 0.02
	done
	sim_pull gbcli 3 pull-up; sleep 0.03; sim_pull gbcli 3 pull-down; sleep 0.03; sim_pull gbcli 3 pull-up
	wait "$mpid"; mrc=$?
}
mon text
check "monitor --count exits 0" 0 "$mrc"
check "monitor text: the level first" "initial door $chip:3 value=0" "$(head -n 1 /run/mon.out | cut -f2-5 | tr '\t' ' ')"
check "monitor text: edges in order" "rising falling rising" "$(tail -n +2 /run/mon.out | cut -f2 | tr '\n' ' ' | sed 's/ $//')"
check "monitor text: line and seqno" "door $chip:3 seqno=1" "$(sed -n 2p /run/mon.out | cut -f3-5 | tr '\t' ' ')"
if [ "$(cut -f1 /run/mon.out | grep -cE '^[0-9]+\.[0-9]{9}$')" = 4 ]; then ok "monitor text: timestamps"; else not_ok "monitor text: timestamps" "$(cat /run/mon.out)"; fi
mon json
check "monitor json exits 0" 0 "$mrc"
contains "monitor json: initial state" "\"edge\":\"initial\",\"line\":\"door\",\"chip\":\"$chip\",\"offset\":3,\"index\":0,\"seqno\":0,\"value\":0}" "$(head -n 1 /run/mon.out)"
first=$(sed -n 2p /run/mon.out)
contains "monitor json: fields" "\"edge\":\"rising\",\"line\":\"door\",\"chip\":\"$chip\",\"offset\":3,\"index\":0,\"seqno\":1," "$first"
contains "monitor json: lost count" '"lost":0}' "$first"
if python3 -c 'import json,sys; [json.loads(l) for l in open("/run/mon.out")]' 2>/dev/null; then
	ok "monitor json: every line parses"
else
	not_ok "monitor json: every line parses" "$(cat /run/mon.out)"
fi
run gb-alice monitor --timeout 0.3 door
check "monitor --timeout that ran as asked: code 0" 0 "$rc"
run gb-alice monitor --timeout 300ms -e rising -p 1ms door
check "monitor --timeout with a unit, -e, -p: code 0" 0 "$rc"
run gb-alice monitor --idle-timeout 200ms door
check "monitor --idle-timeout: code 0" 0 "$rc"
run gb-alice monitor --idle-timeout 2x door
check "... a bad period is named" "$(printf "gpiobrokerctl: monitor: bad idle timeout '2x' (a period: 10ms, 5s; bare number: ms)\ntry 'gpiobrokerctl monitor --help'")" "$out"
run gb-alice monitor -e sideways door
contains "monitor: bad edges named with the allowed ones" "bad edges 'sideways' (allowed: none, rising, falling, both)" "$out"
# -F: gpiomon's specifiers; -n N events.
sim_pull gbcli 3 pull-down
as gb-alice "$ctl" monitor -n 2 -F '%o %c %E %e %l %%' -t 20 door > /run/monf.out 2>&1 &
mpid=$!
for i in $(seq 200); do
	[ "$(busctl --system get-property org.gpiodbroker1 /org/gpiodbroker1/chip/$chip/line3 org.gpiodbroker1.Line Used)" = "b true" ] && break
	sleep 0.02
done
sleep 0.05; sim_pull gbcli 3 pull-up; sleep 0.03; sim_pull gbcli 3 pull-down
wait "$mpid"
check "monitor -F with gpiomon's specifiers" "$(printf '3 %s rising 1 door %%\n3 %s falling 2 door %%' "$chip" "$chip")" "$(cat /run/monf.out)"

# watch: bob watches door (nobody holds it), alice requests it meanwhile.
sim_pull gbcli 3 pull-up
as gb-bob "$ctl" watch --count 2 --timeout 20 door > /run/watch.out 2>&1 &
wpid=$!
for i in $(seq 200); do
	[ -s /run/watch.out ] && break
	sleep 0.02
done
check "watch text: the level first" "initial door $chip:3 value=1" "$(head -n 1 /run/watch.out | cut -f2-5 | tr '\t' ' ')"
sim_pull gbcli 3 pull-down; sleep 0.03; sim_pull gbcli 3 pull-up
wait "$wpid"; wrc=$?
check "watch --count exits 0" 0 "$wrc"
check "watch text: edges" "falling rising" "$(grep -v initial /run/watch.out | cut -f2 | tr '\n' ' ' | sed 's/ $//')"
run gb-alice watch door
check "watch without watch permission: code 5" 5 "$rc"
contains "watch: the missing rule is named" "watch-users or watch-groups" "$out"

# Usage errors, help.
run gb-alice set lamp
check "set without a value: usage, code 2" 2 "$rc"
run gb-alice frobnicate
check "unknown command: code 2" 2 "$rc"
check "... one line and where to look, not the whole help" "$(printf "gpiobrokerctl: unknown command 'frobnicate'\ntry 'gpiobrokerctl --help'")" "$out"
run gb-alice reqests
contains "unknown command: did you mean" "did you mean 'requests'?" "$out"

# notify: line-info changes, as gpionotify.
as gb-alice "$ctl" notify -n 3 --idle-timeout 20s door > /run/notify.out 2>&1 &
npid=$!
sleep 2 # (its match must be in place: there is no banner to wait for)
as gb-alice "$ctl" request --persistent door >/dev/null 2>&1
as gb-alice "$ctl" reconfigure -i -e both door >/dev/null 2>&1
as gb-alice "$ctl" release door >/dev/null 2>&1
wait "$npid"
check "notify: requested, reconfigured, released" "requested reconfigured released" "$(cut -f2 /run/notify.out | tr '\n' ' ' | sed 's/ $//')"
contains "notify: the line and its attributes" "$(printf '\t"door"\tinput')" "$(head -n 1 /run/notify.out)"
run gb-alice notify --idle-timeout 100ms door
check "notify --idle-timeout: code 0" 0 "$rc"

# status: broker, version, counts, the caller and its lines.
run gb-alice status
contains "status: running and its version" "gpiod-broker: running, version " "$out"
contains "status: chips and lines" "chips: 1, lines: 6" "$out"
contains "status: the lines alice may use" "lines you may use: lamp switch fan door porch-light" "$out"
contains "status: the policy status, or that it is not reported" "policy" "$out"
contains "status: the policy loaded, with its entries" "$(printf 'policy state: loaded\npolicy directory: /run/gb-cli-policy\npolicy entries: 2')" "$out"
contains "status: no policy errors" "policy errors: none" "$out"
run gb-alice status --json
if printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); p=d["policy_status"]; assert d["running"] and d["chips"]==1 and len(d["usable_lines"])==5 and d["policy_status_reported"] and p["state"]=="loaded" and p["entries"]==2 and p["errors"]==[] and p["loaded-at"]>0 and d["groups"]' 2>/dev/null; then
	ok "status --json"; else not_ok "status --json" "$out"; fi

# A rejected reload: status says so, with the error as file:line, and a denial
# says it comes from the rejected policy, not from a missing entry.
printf '[line spare]\nchip = gbcli\noffset = 5\nusers = gb-alice\ncolour = red\ndirections = input\n' > /run/gb-cli-policy/20-bad.conf
busctl --system call org.gpiodbroker1 /org/gpiodbroker1 org.gpiodbroker1.Manager ReloadPolicy > /dev/null 2>&1
check "ReloadPolicy of a broken policy fails" 1 "$?"
run gb-alice status
contains "status: the policy rejected" "policy state: rejected" "$out"
contains "status: running with the previous policy" "policy running-with: previous" "$out"
contains "status: the error, file:line" "$(printf 'policy errors:\n  /run/gb-cli-policy/20-bad.conf:5: ')" "$out"
run gb-alice status --json
if printf '%s' "$out" | python3 -c 'import json,sys; p=json.load(sys.stdin)["policy_status"]; assert p["state"]=="rejected" and len(p["errors"])==1 and p["errors"][0].startswith("/run/gb-cli-policy/20-bad.conf:5: ") and p["entries"]==2' 2>/dev/null; then
	ok "status --json: rejected, its error"; else not_ok "status --json: rejected, its error" "$out"; fi
run gb-alice info --verbose -c "$chip" 5
contains "info --verbose: the denial comes from the rejected policy" "access: denied: the policy in /run/gb-cli-policy was rejected (1 error;" "$out"
run gb-alice request -c "$chip" 5
contains "request: the denial comes from the rejected policy" "so the broker runs with the previous policy: no policy entry covers" "$out"
rm -f /run/gb-cli-policy/20-bad.conf
busctl --system call org.gpiodbroker1 /org/gpiodbroker1 org.gpiodbroker1.Manager ReloadPolicy > /dev/null 2>&1
check "ReloadPolicy of the fixed policy" 0 "$?"
run gb-alice status
contains "status: loaded again" "policy state: loaded" "$out"
run gb-alice monitor --help
check "per-command help: code 0" 0 "$rc"
contains "per-command help text" "usage: gpiobrokerctl monitor" "$out"

# gpiod-broker --check-policy against the chips present: entries that can never
# match there are warnings, two entries on one line an error.
mkdir -p /run/gb-cli-check
printf '[line far]\nchip = gbcli\noffset = 100\nusers = gb-alice\ndirections = input\n[line ghost]\nline-name = no-such-name\nusers = gb-alice\ndirections = input\n' > /run/gb-cli-check/10-a.conf
chmod 644 /run/gb-cli-check/10-a.conf
out=$("$broker" --check-policy=/run/gb-cli-check 2>&1); rc=$?
check "--check-policy with chips present: warnings only, code 0" 0 "$rc"
contains "--check-policy: an offset beyond the chip" "/run/gb-cli-check/10-a.conf:1: warning: [line far]: offset 100 is beyond chip $chip (gbcli), which has 6 lines" "$out"
contains "--check-policy: a line name no line has" "/run/gb-cli-check/10-a.conf:6: warning: [line ghost]: no line of the chips present is named 'no-such-name'" "$out"
printf '[line lamp2]\nline-name = lamp\nusers = gb-alice\ndirections = input\n[line zero]\nchip = gbcli\noffset = 0\nusers = gb-alice\ndirections = input\n' > /run/gb-cli-check/10-a.conf
out=$("$broker" --check-policy=/run/gb-cli-check 2>/dev/null); rc=$?
check "--check-policy: two entries meeting on a real line, code 1" 1 "$rc"
contains "--check-policy: the overlap, led by file:line" "/run/gb-cli-check/10-a.conf:5: $chip:0 is covered by both [line lamp2]" "$out"
rm -rf /run/gb-cli-check

# --json of every command that prints: each output parses (strict UTF-8), and says
# what the text says.
run gb-alice request --persistent --json -C json-ctl lamp=1
json "request --json" 'd["persistent"] is True and d["path"] == "/org/gpiodbroker1/request/" + d["request"]'
rid=$(printf '%s' "$out" | python3 -c 'import json, sys; print(json.load(sys.stdin)["request"])')
run gb-alice requests --json
json "requests --json" 'd == [{"request": "'"$rid"'", "path": "/org/gpiodbroker1/request/'"$rid"'", "label": "json-ctl", "persistent": True, "owner_uid": 60001, "owner": None}]'
run gb-alice get --json lamp "$rid"
json "get --json LINE ID: the line, then the request's lines by name" 'd == [{"line": "lamp", "value": 1}, {"line": "lamp", "value": 1}]'
run gb-carol info --json
json "info --json: every line" '[x["offset"] for x in d] == list(range(6)) and d[0]["consumer"] == "json-ctl" and d[0]["request"] == "'"$rid"'" and d[0]["request_label"] == "json-ctl" and d[4]["alias"] == "porch-light" and d[4]["name"] is None and d[1]["used"] is False and d[1]["consumer"] is None'
json "info --json: each line with its chip's identity, null where there is no udev" 'all(k in x and x[k] is None for x in d for k in ("by_path", "by_id", "serial"))'
run gb-alice info --verbose --json -c "$chip" 1 lamp
json "info --verbose --json -c CHIP LINE...: in argument order, with the policy's answer" '[x["offset"] for x in d] == [1, 0] and all(x["access"]["may_use"] and x["access"]["directions"] == "input,output" for x in d)'
run gb-alice find --json porch-light
json "find --json" 'd == {"chip": chip, "offset": 4, "path": "/org/gpiodbroker1/chip/%s/line4" % chip}'
run gb-alice detect --json
json "detect --json" 'd == [{"name": chip, "label": "gbcli", "num_lines": 6, "path": "/org/gpiodbroker1/chip/" + chip, "by_path": None, "by_id": None, "serial": None}]'
run gb-alice status --json
json "status --json" 'd["running"] and d["requests"] == 1 and d["uid"] == 60001 and d["policy_status"]["state"] == "loaded"'
as gb-alice "$ctl" release "$rid"
# watch --json: the level, then an edge, with the watch's id.
sim_pull gbcli 3 pull-up
as gb-bob "$ctl" watch --json --count 1 --timeout 20 door > /run/watch.json 2>&1 &
wpid=$!
for i in $(seq 200); do [ -s /run/watch.json ] && break; sleep 0.02; done
sim_pull gbcli 3 pull-down
wait "$wpid"
jsonl "watch --json" /run/watch.json 'len(d) == 2 and d[0]["edge"] == "initial" and d[0]["value"] == 1 and d[1]["edge"] == "falling" and d[0]["watch"] == d[1]["watch"] and d[1]["line"] == "door" and d[1]["chip"] == chip'

# A consumer that is not UTF-8, as another program may set it (the kernel keeps its
# bytes): the broker shows it with U+FFFD for them (as Python's errors="replace"),
# and every --json output stays valid.
weird=$(printf 'bad\377\376x\303(')
want='"bad\ufffd\ufffdx\ufffd("'
as gb-alice "$ctl" notify --json -e requested -n 1 --idle-timeout 60s "$chip:5" > /run/notify.json 2>&1 &
npid=$!
# (notify has no banner to say its match is in place: the line is taken until it tells)
for i in $(seq 30); do
	gpioset -c "$chip" -C "$weird" 5=1 & spid=$!
	used_wait 5 true
	kill -0 "$npid" 2>/dev/null || break
	kill "$spid"; wait "$spid" 2>/dev/null
	used_wait 5 false
done
wait "$npid"
jsonl "notify --json: a consumer that is not UTF-8" /run/notify.json 'd[0]["event"] == "requested" and d[0]["offset"] == 5 and d[0]["consumer"] == '"$want"
run gb-carol info --json "$chip:5"
json "info --json: a consumer that is not UTF-8, with U+FFFD" 'd[0]["consumer"] == '"$want"' and d[0]["used"]'
run gb-carol info --json
json "info --json: every line, that one among them" 'd[5]["consumer"] == '"$want"
run gb-carol info "$chip:5"
check "info: the text too (the broker's objects are read)" 0 "$rc"
run gb-alice status --json
json "status --json with it" 'd["running"] and d["chips"] == 1'
# Asked for, the line is Busy, and the error quotes that consumer as UTF-8 (sd-bus
# could not send it otherwise: the call would wait for its timeout).
out=$(timeout 20 "$ctl" get "$chip:5" 2>&1); rc=$?
check "get of that line: busy at once (exit 4), not a timeout" 4 "$rc"
case "$out" in *"in use outside the broker"*"bad$(printf '\357\277\275\357\277\275')x"*) ok "the Busy error quotes its consumer with U+FFFD" ;;
*) not_ok "the Busy error quotes its consumer with U+FFFD (got: $out)" ;; esac
kill "$spid"; wait "$spid" 2>/dev/null

kill "$bpid"
wait "$bpid"
check "broker exits cleanly" 0 "$?"
tap_done
