#!/bin/sh
# gpiobrokerctl on another host: -H USER@HOST through a real OpenSSH server on the
# bench's loopback (sshd.sh), key authentication as the test users,
# systemd-stdio-bridge at the far end. The broker sees the SSH login: alice's policy
# for gb-alice, the same refusals for gb-bob as locally; edges stream over the link;
# a link killed under a monitor ends it with its own exit code and message. TAP output.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${GB_BENCH:-}" ] || exec "$here/run" --chip gbrm:4:0=lamp,1=button,2=spare -- "$here/$(basename "$0")" "$@"

broker=${GB_TEST_BROKER:?GB_TEST_BROKER must name the gpiod-broker binary}
ctl=${GB_TEST_CTL:?GB_TEST_CTL must name the gpiobrokerctl binary}
. "$here/gpiosim.sh"
. "$here/test-lib.sh"
. "$here/sshd.sh"
[ -z "${GB_TEST_LIBDIR:-}" ] || export LD_LIBRARY_PATH="$GB_TEST_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
A=gb-alice@localhost
B=gb-bob@localhost

mkdir -p /run/gb-remote-policy
cat > /run/gb-remote-policy/10-remote.conf <<'POLICY'
[line lamp]
chip = gbrm
offset = 0
users = gb-alice
directions = output
persistent = yes
safe-state = output-low

[line button]
chip = gbrm
offset = 1
users = gb-alice
directions = input
edges = both
watch-users = gb-alice
POLICY
"$broker" --log-level=warning --policy-dir=/run/gb-remote-policy &
bpid=$!
wait_broker || { not_ok "the broker is on the bus"; tap_done; exit 1; }
if ! sshd_start; then
	not_ok "an OpenSSH server on loopback logs the test users in"
	kill "$bpid"
	tap_done
	exit 1
fi
ok "an OpenSSH server on loopback logs the test users in"

out=$("$ctl" -H "$A" set lamp=1 2>&1)
check "set over -H exits 0" 0 $?
check "... and prints the id of the request that holds the line" 1 "$out"
check "... and the line is driven" 1 "$(sim_value gbrm 0)"
check "get over -H reads alice's persistent request" '"lamp"=active' "$("$ctl" -H "$A" get lamp 2>&1)"
check "... as a local gb-alice reads it" '"lamp"=active' "$(as gb-alice "$ctl" get lamp 2>&1)"
check "-H after the command means the same" '"lamp"=active' "$("$ctl" get --host="$A" lamp 2>&1)"
out=$("$ctl" -H "$A" status 2>&1)
contains "status over -H names the login's uid, not this process's" "you: uid 60001," "$out"

remote=$("$ctl" -H "$B" set lamp=0 2>&1); rc_remote=$?
local=$(as gb-bob "$ctl" set lamp=0 2>&1); rc_local=$?
check "gb-bob's login is refused alice's line (exit 5)" 5 "$rc_remote"
check "... with the exit code a local gb-bob gets" "$rc_local" "$rc_remote"
check "... and the same message" "$local" "$remote"
check "... and the line did not change" 1 "$(sim_value gbrm 0)"
remote=$("$ctl" -H "$B" get button 2>&1); rc_remote=$?
local=$(as gb-bob "$ctl" get button 2>&1); rc_local=$?
check "gb-bob's get of alice's input: the local refusal" "$rc_local:$local" "$rc_remote:$remote"

# monitor: the level, then two edges, over the link.
: > /run/gb-remote-mon
"$ctl" -H "$A" monitor -n 2 button > /run/gb-remote-mon 2>&1 &
mpid=$!
for _i in $(seq 200); do grep -q initial /run/gb-remote-mon && break; sleep 0.05; done
sim_pull gbrm 1 pull-up
sleep 0.05
sim_pull gbrm 1 pull-down
for _i in $(seq 200); do kill -0 "$mpid" 2>/dev/null || break; sleep 0.05; done
wait "$mpid"
check "monitor over -H ran as asked (-n 2)" 0 $?
check "... printed the level, then a rising and a falling edge" "initial rising falling" \
	"$(awk '{print $2}' /run/gb-remote-mon | tr '\n' ' ' | sed 's/ $//')"

# The link killed (the server's end of the login) under a monitor.
: > /run/gb-remote-mon
"$ctl" -H "$A" monitor button > /run/gb-remote-mon 2> /run/gb-remote-err &
mpid=$!
for _i in $(seq 200); do grep -q initial /run/gb-remote-mon && break; sleep 0.05; done
check "the broker holds the monitored line for the remote client" true \
	"$(busctl --system get-property org.gpiodbroker1 /org/gpiodbroker1/chip/$(sim_chip_dev gbrm)/line1 \
		org.gpiodbroker1.Line Used | awk '{print $2}')"
# shellcheck disable=SC2046
kill -KILL $(sshd_sessions gb-alice)
for _i in $(seq 200); do kill -0 "$mpid" 2>/dev/null || break; sleep 0.05; done
wait "$mpid"
check "monitor ends when its link is killed, with exit code 7" 7 $?
contains "... saying the connection was lost" "monitor: lost the connection to the bus of $A" \
	"$(cat /run/gb-remote-err)"
used=true
for _i in $(seq 200); do
	used=$(busctl --system get-property org.gpiodbroker1 /org/gpiodbroker1/chip/$(sim_chip_dev gbrm)/line1 \
		org.gpiodbroker1.Line Used | awk '{print $2}')
	[ "$used" = false ] && break
	sleep 0.05
done
check "... and the broker released the line it held for it" false "$used"
check "a persistent request outlives the link" 1 "$(sim_value gbrm 0)"
out=$("$ctl" -H "$A" release lamp 2>&1)
check "it is released over a new link" 0 $?
check "... to its safe state" 0 "$(sim_value gbrm 0)"

# watch and notify end the same way.
: > /run/gb-remote-mon
"$ctl" -H "$A" watch button > /run/gb-remote-mon 2> /run/gb-remote-err &
mpid=$!
for _i in $(seq 200); do grep -q initial /run/gb-remote-mon && break; sleep 0.05; done
# shellcheck disable=SC2046
kill -KILL $(sshd_sessions gb-alice)
for _i in $(seq 200); do kill -0 "$mpid" 2>/dev/null || break; sleep 0.05; done
wait "$mpid"
check "watch ends when its link is killed, with exit code 7" 7 $?
contains "... saying so" "watch: lost the connection to the bus of $A" "$(cat /run/gb-remote-err)"
: > /run/gb-remote-mon
"$ctl" -H "$A" notify lamp > /run/gb-remote-mon 2> /run/gb-remote-err &
mpid=$!
# Ready once it reports a request: alice's local requests make them. Not merely
# any change: a notify that subscribed in the middle of a set and release sees only
# that cycle's tail (reconfigured, released), and the next cycle brings "requested".
for _i in $(seq 100); do
	as gb-alice "$ctl" set lamp=1 > /dev/null 2>&1
	as gb-alice "$ctl" release lamp > /dev/null 2>&1
	grep -q requested /run/gb-remote-mon && break
	sleep 0.1
done
contains "notify over -H reports line changes" "requested" "$(cat /run/gb-remote-mon)"
# shellcheck disable=SC2046
kill -KILL $(sshd_sessions gb-alice)
for _i in $(seq 200); do kill -0 "$mpid" 2>/dev/null || break; sleep 0.05; done
wait "$mpid"
check "notify ends when its link is killed, with exit code 7" 7 $?
contains "... saying so" "notify: lost the connection to the bus of $A" "$(cat /run/gb-remote-err)"

out=$(GPIOBROKER_TRANSPORT=p2p "$ctl" -H "$A" get lamp 2>&1)
check "a private connection asked for over SSH: exit 7" 7 $?
contains "... it cannot be had there" "Operation not supported" "$out"

out=$("$ctl" -H nobody@localhost get lamp 2>&1)
check "an SSH login that fails: exit 7" 7 $?
contains "... saying where it could not connect" "cannot connect to the system bus of nobody@localhost" "$out"
out=$("$ctl" -M no-such-container get lamp 2>&1)
check "-M with no such container: exit 7" 7 $?
contains "... naming it" "cannot connect to the system bus of no-such-container" "$out"
out=$("$ctl" -H "$A" --address unix:path=/x get lamp 2>&1)
check "-H and --address together: a usage error" 2 $?

sshd_stop
kill "$bpid"
wait "$bpid"
tap_done
