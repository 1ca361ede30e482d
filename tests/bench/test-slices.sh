#!/bin/sh
# Slices: gpiod-broker-slices (run as root, as its unit runs it) makes a policy
# [slice] into a chip of its own with the kernel's gpio-aggregator, for its users
# only, used by Debian's unmodified gpioinfo, gpioset, gpioget and gpiomon; a sync
# keeps what has not changed, revokes what left the policy (the lines to their safe
# states, the holder named in the log); stop removes every slice. TAP output.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${GB_BENCH:-}" ] || exec "$here/run" --chip gbslice:4:0=sl-out,1=sl-in,2=sl-busy,3=sl-x \
	-- "$here/$(basename "$0")" "$@"

broker=${GB_TEST_BROKER:?GB_TEST_BROKER must name the gpiod-broker binary}
helper=${GB_TEST_SLICES:-$(dirname "$broker")/gpiod-broker-slices}
. "$here/gpiosim.sh"
. "$here/test-lib.sh"
parent=$(sim_chip_dev gbslice)
pol=/run/gb-slices-policy
log=/run/gb-slices.log
state=/run/gpiod-broker-slices
slice=/dev/gpio/slice/alice

if [ ! -e /sys/bus/platform/drivers/gpio-aggregator/new_device ]; then
	not_ok "the bench kernel has the gpio-aggregator (CONFIG_GPIO_AGGREGATOR)"
	tap_done
	exit 1
fi

# Lines a slice may hand out: their entries allow everything a chip's consumer can set.
entry() { # entry ALIAS OFFSET SAFE-STATE
	cat <<POLICY
[line $1]
chip = gbslice
offset = $2
users = gb-alice
directions = input, output
direction-may-change = yes
edges = rising, falling, both
bias = as-is, disabled, pull-up, pull-down
drive = push-pull, open-drain, open-source
safe-state = $3

POLICY
}
mkdir -p "$pol"
lines_policy() { entry sl-out 0 output-low; entry sl-in 1 input; entry sl-busy 2 input; }
write_policy() { # write_policy [SLICE SECTIONS...]: the entries and the sections given
	{ lines_policy; printf '%s\n' "$@"; } > "$pol/10-slice.conf"
}
alice_slice='[slice alice]
lines = sl-out, gbslice:1
users = gb-alice'
write_policy "$alice_slice"

# sync: the helper as its unit runs it; its exit code in $rc, its log appended to $log.
sync_slices() { "$helper" --policy-dir="$pol" --log-level=info "$@" sync 2>> "$log"; rc=$?; }
# wait_for DESCRIPTION COMMAND...: until COMMAND succeeds (10 s), never a blind sleep.
wait_for() {
	_d=$1; shift
	for _i in $(seq 200); do "$@" && { ok "$_d"; return 0; }; sleep 0.05; done
	not_ok "$_d" "still false after 10 s: $*"
	return 1
}
value_is() { [ "$(sim_value gbslice "$1")" = "$2" ]; }
# consumer_is OFFSET NAME: the slice's line OFFSET is held by NAME (as root sees it).
consumer_is() { gpioinfo -c "$slice" "$1" 2>/dev/null | grep -Eq "consumer=\"?$2\"?( |$)"; }

: > "$log"
sync_slices
check "sync makes the slice (exit 0)" 0 "$rc"
chip=$(sed -n 's/^chip=//p' "$state/alice" 2>/dev/null)
device=$(sed -n 's/^device=//p' "$state/alice" 2>/dev/null)
check "the link names the slice's chip" "../../$chip" "$(readlink "$slice")"
check "the state file has the lines in slice order, with their safe states" \
	"line=$parent 0 output-low sl-out|line=$parent 1 input gbslice:1" \
	"$(grep '^line=' "$state/alice" | paste -sd '|')"
check "the chip node is root's, 0600 but for its ACL" "root:root" "$(stat -c %U:%G "/dev/$chip")"
out=$(setpriv --reuid=gpiod-broker --regid=gpiod-broker --init-groups -- gpioinfo -c "$slice" 2>&1)
check "... and its ACL lets the broker's user open it" 2 "$(printf '%s\n' "$out" | grep -c '^[[:space:]]*line ')"

out=$(as gb-alice gpioinfo -c "$slice" 2>&1)
check "gb-alice's gpioinfo shows the slice's 2 lines" 2 "$(printf '%s\n' "$out" | grep -c '^[[:space:]]*line ')"

out=$(as gb-bob gpioinfo -c "$slice" 2>&1); brc=$?
if [ "$brc" -ne 0 ]; then contains "gb-bob may not open it (EACCES)" "Permission denied" "$out"
else not_ok "gb-bob may not open it (EACCES)" "$out"; fi

setpriv --reuid=gb-alice --regid=gb-alice --init-groups -- gpioset -c "$slice" 0=1 &
setpid=$!
wait_for "gb-alice's gpioset drives slice line 0: the parent line follows" value_is 0 1

sim_pull gbslice 1 pull-up
check "gpioget reads the parent line's pull-up" 1 "$(as gb-alice gpioget --numeric -c "$slice" 1 2>&1)"
sim_pull gbslice 1 pull-down
check "... and its pull-down" 0 "$(as gb-alice gpioget --numeric -c "$slice" 1 2>&1)"

setpriv --reuid=gb-alice --regid=gb-alice --init-groups -- \
	gpiomon -c "$slice" -e rising -n 1 1 > /run/gb-slices-mon 2>&1 &
monpid=$!
if wait_for "gpiomon holds slice line 1" consumer_is 1 gpiomon; then
	sim_pull gbslice 1 pull-up
	wait_for "gpiomon sees the rising edge" grep -q rising /run/gb-slices-mon ||
		sed 's/^/# /' /run/gb-slices-mon
else
	{ cat /run/gb-slices-mon; gpioinfo -c "$slice"; } 2>&1 | sed 's/^/# /'
fi
kill "$monpid" 2>/dev/null; wait "$monpid" 2>/dev/null

# A container's view: gb-alice in a user and mount namespace of her own whose /dev
# holds the slice's node alone (as docker run --device=/dev/gpio/slice/alice gives).
in_container() {
	as gb-alice unshare --user --map-root-user --mount sh -c '
		node=$1; shift
		mount -t tmpfs none /mnt && touch /mnt/gpiochip0 &&
			mount --bind "$node" /mnt/gpiochip0 && mount --rbind /mnt /dev || exit 99
		exec "$@"' sh "$(readlink -f "$slice")" "$@"
}
check "in the container, /dev has the slice's chip only" gpiochip0 "$(in_container ls /dev 2>&1)"
out=$(in_container gpiodetect 2>&1)
check "... gpiodetect finds one chip, the aggregator's" "1 1" \
	"$(printf '%s\n' "$out" | wc -l) $(printf '%s\n' "$out" | grep -c '\[gpio-aggregator\.')"
out=$(in_container gpioinfo -c gpiochip0 2>&1)
check "... gpioinfo shows the slice's 2 lines" 2 "$(printf '%s\n' "$out" | grep -c '^[[:space:]]*line ')"
sim_pull gbslice 1 pull-up
check "... gpioget reads slice line 1 (the parent's pull-up)" 1 \
	"$(in_container gpioget --numeric -c gpiochip0 1 2>&1)"
sim_pull gbslice 1 pull-down
check "... no node there is the real chip's ($parent)" "" \
	"$(in_container stat -c '%t:%T' /dev/gpiochip0 | grep -x "$(stat -c '%t:%T' "/dev/$parent")")"
major_minor=$(stat -c '%t %T' "/dev/$parent" | { read -r ma mi; printf '%d %d' "0x$ma" "0x$mi"; })
out=$(in_container sh -c "mknod /dev/real c $major_minor" 2>&1); prc=$?
check "... and cannot be made there (mknod refused)" "1 yes" \
	"$([ "$prc" -ne 0 ] && echo 1 || echo 0) $(printf '%s' "$out" | grep -q 'Operation not permitted' && echo yes || echo no)"

sync_slices
check "a second sync changes nothing (exit 0)" 0 "$rc"
check "... the same aggregator device" "$device" "$(sed -n 's/^device=//p' "$state/alice")"
check "... and gpioset's output is still driven" 1 "$(sim_value gbslice 0)"

out=$("$helper" list 2>&1)
contains "list: a line per slice" "alice: $chip ($device) users=gb-alice groups= lines=sl-out($parent:0,output-low),gbslice:1($parent:1,input)" "$out"

# A line someone holds cannot go into a slice: the slice's .error names the holder.
gpioset -c "$parent" 2=1 &
busypid=$!
for _i in $(seq 200); do gpioinfo -c "$parent" 2 | grep -q consumer && break; sleep 0.05; done
write_policy "$alice_slice" '
[slice busy]
lines = sl-busy
users = gb-bob'
sync_slices
check "a slice with a busy line: partial (exit 2)" 2 "$rc"
contains "... its .error names the line's consumer" "$parent:2 is busy, held by 'gpioset'" \
	"$(cat "$state/busy.error" 2>&1)"
check "... and the other slice stays" "$device" "$(sed -n 's/^device=//p' "$state/alice")"
kill "$busypid"; wait "$busypid" 2>/dev/null

write_policy '[slice typo]
lines = no-such-line
users = gb-alice'
sync_slices
check "a slice of a line no entry covers: the policy is rejected (exit 1)" 1 "$rc"
contains "... with the policy's file:line" "$pol/10-slice.conf:" "$(tail -n 5 "$log")"
check "... and the slices made stay" "$device" "$(sed -n 's/^device=//p' "$state/alice")"

# Revocation: the slice leaves the policy while gpioset holds its line 0 high, and
# another gpioset toggles its line 1 every 20 ms (an ioctl each time).
setpriv --reuid=gb-alice --regid=gb-alice --init-groups -- \
	gpioset -t 20ms -c "$slice" 1=1 > /run/gb-slices-toggle 2>&1 &
togpid=$!
wait_for "a second gpioset toggles slice line 1" consumer_is 1 gpioset
write_policy
sync_slices
# gpioset reports a failed toggle and goes on toggling: its message is the evidence.
toggle_failed() { grep -q "unable to set values.*: No such device" /run/gb-slices-toggle; }
wait_for "the toggling gpioset's next ioctl fails with ENODEV" toggle_failed
kill "$togpid" 2>/dev/null; wait "$togpid" 2>/dev/null
check "sync without the slice (exit 0)" 0 "$rc"
contains "the log names the holder of the revoked line" \
	"slice alice revoked: line 0 (sl-out, $parent:0) held by 'gpioset'" "$(cat "$log")"
contains "... and puts the line in its safe state" \
	"slice alice: line $parent:0 (sl-out) put in its safe state output-low" "$(cat "$log")"
check "the parent line is low (its safe state)" 0 "$(sim_value gbslice 0)"
check "the busy slice's .error went with it" no "$([ -e "$state/busy.error" ] && echo yes || echo no)"
check "the link, the state and the device are gone" "no no no" \
	"$([ -e "$slice" ] && echo yes || echo no) $([ -e "$state/alice" ] && echo yes || echo no) $([ -e "/sys/bus/platform/devices/$device" ] && echo yes || echo no)"
kill "$setpid" 2>/dev/null; wait "$setpid" 2>/dev/null

# stop: every slice goes; on the bench's bus no systemd answers ListJobs, so
# --unless-restart finds no restart.
write_policy "$alice_slice" '
[slice bob]
lines = sl-busy
users = gb-bob'
sync_slices
check "two slices made (exit 0)" 0 "$rc"
check "list shows both" 2 "$("$helper" list | wc -l)"
"$helper" stop --unless-restart=gpiod-broker.service 2>> "$log"; rc=$?
check "stop (exit 0)" 0 "$rc"
check "no slice, link or aggregator device is left" "0 0" \
	"$(ls /dev/gpio/slice | wc -l) $(ls /sys/bus/platform/devices | grep -c '^gpio-aggregator\.')"
check "list is empty" "" "$("$helper" list)"
sed 's/^/# /' "$log"
tap_done
