#!/bin/sh
# Edge actions where no systemd runs (the bench's bus has no org.freedesktop.systemd1):
# each action observes its line whether or not a client holds it, debounces, fires on
# its edge, a long press after its hold, and every job is refused by the bus, so each
# firing is counted as suppressed, with the bus's error in the log. What systemd does
# with the jobs is the real-systemd bench's (tests/systemd). TAP output.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${GB_BENCH:-}" ] || exec "$here/run" --chip gbact:4:0=act-a,1=act-b,2=act-c -- "$here/$(basename "$0")" "$@"

broker=${GB_TEST_BROKER:?GB_TEST_BROKER must name the gpiod-broker binary}
ctl=${GB_TEST_CTL:?GB_TEST_CTL must name the gpiobrokerctl binary}
. "$here/gpiosim.sh"
. "$here/test-lib.sh"
chip=$(sim_chip_dev gbact)
log=/run/gb-actions.log

mkdir -p /run/gb-actions-policy
cat > /run/gb-actions-policy/10-actions.conf <<'POLICY'
[action rise]
line = gbact:0
trigger = rising
debounce = 2s
unit = gb-rise.service

[action hold]
line = act-b
trigger = long-press
hold = 1s
unit = gb-hold@.service

[action nowhere]
line = no-such-line
trigger = both
unit = gb-nowhere.service

[line act-c]
line-name = act-c
users = gb-alice
directions = input
persistent = yes
POLICY
cat >> /run/gb-actions-policy/10-actions.conf <<'POLICY'

[action held]
line = act-c
trigger = both
unit = gb-held.service
POLICY
# Under make distcheck (GB_TEST_VALGRIND), valgrind's verdict is the exit code.
${GB_TEST_VALGRIND:+valgrind -q --error-exitcode=97 --leak-check=full \
	--errors-for-leak-kinds=definite --show-leak-kinds=definite} \
	"$broker" --log-level=info --policy-dir=/run/gb-actions-policy 2> "$log" &
bpid=$!
wait_broker

# action NAME: its line of gpiobrokerctl status.
action() { "$ctl" status | grep "^  $1: "; }
# wait_action NAME TEXT: until its status line has TEXT (15 s).
wait_action() {
	for _i in $(seq 300); do
		case "$(action "$1")" in *"$2"*) return 0 ;; esac
		sleep 0.05
	done
	return 1
}

contains "an action on a present line observes it" \
	"rise: gbact:0 rising -> gb-rise.service; fired 0, suppressed 0, last never; observing $chip:0" \
	"$(action rise)"
contains "an action whose line is not there says so" "nowhere: no-such-line both -> gb-nowhere.service; fired 0, suppressed 0, last never; no line: " \
	"$(action nowhere)"

sim_pull gbact 0 pull-up
if wait_action rise "fired 0, suppressed 1"; then
	ok "a rising edge fires; the bus has no systemd, so the job is refused and counted suppressed"
else
	not_ok "a rising edge fires; the bus has no systemd, so the job is refused and counted suppressed" "$(action rise)"
fi
contains "... and the log names the action, the unit and the bus's error" \
	"action rise: gbact:0 rising: systemd refused the job on gb-rise.service" "$(cat "$log")"
# A glitch well within the 2 s debounce (the bench's kernel merges edges
# within its 10 ms tick, and its sleeps run long): nothing more.
sim_pull gbact 0 pull-down; sleep 0.03; sim_pull gbact 0 pull-up
sleep 3
contains "a glitch within the debounce fires nothing" "fired 0, suppressed 1," "$(action rise)"

sim_pull gbact 1 pull-up
t0=$(date +%s%N)
if wait_action hold "suppressed 1"; then
	t1=$(date +%s%N)
	if [ $((t1 - t0)) -ge 900000000 ]; then ok "a long press fires after its hold ($(((t1 - t0) / 1000000)) ms)"
	else not_ok "a long press fires after its hold" "after $(((t1 - t0) / 1000000)) ms"; fi
else
	not_ok "a long press fires after its hold" "$(action hold)"
fi
contains "... as the template's instance for the line and the event" "gb-hold@act\\x2db:long\\x2dpress.service" "$(cat "$log")"
sim_pull gbact 1 pull-down

# A client holds act-c as an input without edge detection: the action still sees it.
req=$(as gb-alice "$ctl" request --persistent -i act-c)
sim_pull gbact 2 pull-up
if wait_action held "suppressed 1"; then
	ok "a line a client holds without edge detection still fires its action"
else
	not_ok "a line a client holds without edge detection still fires its action" "$(action held)"
fi
as gb-alice "$ctl" release "$req"

kill "$bpid"
wait "$bpid"; rc=$?
check "the broker exits cleanly${GB_TEST_VALGRIND:+ (valgrind: no error, no leak)}" 0 "$rc"
tap_done
