#!/bin/sh
# gpiobrokerctl on the bench: output and exit codes of every command, as real uids,
# against the real broker (persistent requests across processes, busy, denied,
# not found, monitor text and JSON, wait). TAP output.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${GB_BENCH:-}" ] || exec "$here/../bench/run" --chip gbcli:6:0=lamp,1=switch,2=fan,3=door -- "$here/$(basename "$0")" "$@"

broker=${GB_TEST_BROKER:?GB_TEST_BROKER must name the gpiod-broker binary}
ctl=${GB_TEST_CTL:?GB_TEST_CTL must name the gpiobrokerctl binary}
. "$here/../bench/gpiosim.sh"
. "$here/../bench/test-lib.sh"
# run USER ARGS...: output (stdout+stderr) in $out, exit code in $rc
run() { u=$1; shift; out=$(as "$u" "$ctl" "$@" 2>&1); rc=$?; }

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
persistent = yes
watch-users = gb-bob
POLICY

# wait: no broker yet -> timeout code 6; then the broker appears -> 0.
run gb-alice wait --timeout 0.3
check "wait times out with code 6 while no broker" 6 "$rc"
run gb-alice detect
check "detect without a broker: code 7" 7 "$rc"
"$broker" --log-level=warning --policy-dir=/run/gb-cli-policy &
bpid=$!
run gb-alice wait --timeout 10
check "wait returns 0 once the broker is up" 0 "$rc"

run gb-alice detect
check "detect lists the chip" "$chip [gbcli] (6 lines)" "$out"
run gb-alice find switch
check "find prints chip and offset" "$chip 1" "$out"
run gb-alice find nothing-here
check "find: not found is code 3" 3 "$rc"
contains "find: the broker's message" "NotFound" "$out"

run gb-alice request --persistent --label lamp-ctl lamp=1
check "persistent request prints its path" "/org/gpiodbroker1/request/1" "$out"
check "... code 0" 0 "$rc"
check "the simulator sees the output high" 1 "$(sim_value gbcli 0)"
run gb-carol info lamp
contains "info shows the consumer" 'consumer="lamp-ctl"' "$out"
contains "info shows the request and label" 'request=/org/gpiodbroker1/request/1 label="lamp-ctl"' "$out"
contains "info has the chip header" "$chip - 6 lines [gbcli]:" "$out"
run gb-carol info gbcli
check "info CHIP lists all its lines" 7 "$(printf '%s\n' "$out" | wc -l)"
run gb-carol info lamp
contains "info LINE: the policy's answer for a user it leaves out" \
	"access: denied: uid 60003 is not among the users or groups of [group bench] (/run/gb-cli-policy/10-cli.conf:1)" "$out"
run gb-alice info fan
contains "info LINE: the covering entry and what it allows" \
	"access: allowed by [group bench] (/run/gb-cli-policy/10-cli.conf:1): directions=input,output edges=none,rising,falling,both persistent=yes" "$out"
run gb-alice info "$chip:5"
contains "info LINE: no entry covers it" "access: denied: " "$out"

run gb-alice set lamp=0
check "set on own persistent request: no new request" "" "$out"
check "... the output follows" 0 "$(sim_value gbcli 0)"
run gb-alice get lamp
check "get through own persistent request" 0 "$out"
run gb-alice get /org/gpiodbroker1/request/1
check "get by request path" 0 "$out"

run gb-bob set lamp=1
check "another user's line: busy, code 4" 4 "$rc"
contains "... says who holds it" "lamp-ctl" "$out"
check "... and the output did not change" 0 "$(sim_value gbcli 0)"
run gb-bob get /org/gpiodbroker1/request/1
check "another user's persistent request: denied, code 5" 5 "$rc"
contains "... with the broker's error" "PermissionDenied" "$out"
run gb-bob release /org/gpiodbroker1/request/1
check "release of another user's request: denied, code 5" 5 "$rc"
run gb-carol request door
check "policy denies carol: code 5" 5 "$rc"
run gb-alice request --persistent gbcli:5
check "line outside the policy: code 5" 5 "$rc"
run gb-alice get gbcli:42
check "no such offset: code 3" 3 "$rc"

run gb-alice requests
check "requests lists it" "$(printf '/org/gpiodbroker1/request/1\tlamp-ctl\tpersistent\tuid=60001\towner=-')" "$out"

# set on a free line: a new persistent request, printed; the value stays.
run gb-alice set fan=1
check "set on a free line makes a persistent request" "/org/gpiodbroker1/request/2" "$out"
check "... the output is high after the command exited" 1 "$(sim_value gbcli 2)"
run gb-alice set fan=0
check "a second set reuses it" "" "$out"
check "... the output is low" 0 "$(sim_value gbcli 2)"
run gb-alice reconfigure --active-low fan
check "reconfigure a held line" 0 "$rc"
check "... active-low: logical 0 is physical 1" 1 "$(sim_value gbcli 2)"
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
run gb-alice get switch door
check "get free lines (inputs, released after)" "1 0" "$out"
run gb-alice requests
check "... nothing left held" "" "$out"

# A managed request held by a running "request" is released when it is killed.
# (setpriv directly, not through "as": $! must be the CLI itself)
setpriv --reuid=gb-alice --regid=gb-alice --init-groups -- "$ctl" request switch > /run/req.out 2>&1 &
rpid=$!
for i in $(seq 200); do [ -s /run/req.out ] && break; sleep 0.02; done
contains "managed request prints its path" "/org/gpiodbroker1/request/" "$(cat /run/req.out)"
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
run gb-bob get switch
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
check "monitor --timeout: code 6" 6 "$rc"

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
run gb-alice monitor --help
check "per-command help: code 0" 0 "$rc"
contains "per-command help text" "usage: gpiobrokerctl monitor" "$out"

kill "$bpid"
wait "$bpid"
check "broker exits cleanly" 0 "$?"
tap_done
