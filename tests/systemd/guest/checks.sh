#!/bin/sh
# The real-systemd bench's checks, run by gb-test.service inside the guest once
# multi-user.target is reached, as root. Each check is one TAP line (without a
# number: the host numbers them and writes the plan) in /gb-test/results.tap, which
# the host reads after the guest powered off; a failing check is followed by "# "
# lines saying what was seen.
set -u
T=/gb-test
out=$T/results.tap
diag=$T/diag
: > "$out"
. "$T/gpiosim.sh"
variant=$(cat "$T/variant")
unit=gpiod-broker.service

pass() { echo "ok - $1" >> "$out"; }
fail() {
	echo "not ok - $1" >> "$out"
	[ -s "$diag" ] && sed 's/^/# /' "$diag" >> "$out"
	return 0
}
# check DESCRIPTION COMMAND...: one assertion; what COMMAND prints is the diagnosis.
check() { _d=$1; shift; if "$@" > "$diag" 2>&1; then pass "$_d"; else fail "$_d"; fi; }
# wait_until SECONDS COMMAND...: poll every 0.1 s until COMMAND succeeds.
wait_until() {
	_n=$(($1 * 10)); shift
	until "$@" >/dev/null 2>&1; do
		_n=$((_n - 1)); [ "$_n" -gt 0 ] || return 1
		sleep 0.1
	done
}
prop() { systemctl show -P "$1" "$unit"; }
# A client as an unprivileged user, with its real uid on the bus.
as_user() { setpriv --reuid=gb-user --regid=gb-user --init-groups -- "$@"; }

# --- the system ----------------------------------------------------------------

t_bus() {
	id=$(systemctl show -P Id dbus.service)
	echo "dbus.service is $id; bus processes: $(ps -o comm= -C dbus-daemon,dbus-broker | tr '\n' ' ')"
	case $variant in
	dbus-daemon) [ "$id" = dbus.service ] && ps -C dbus-daemon >/dev/null && ! ps -C dbus-broker >/dev/null ;;
	dbus-broker) [ "$id" = dbus-broker.service ] && ps -C dbus-broker >/dev/null && ! ps -C dbus-daemon >/dev/null ;;
	*) false ;;
	esac
}
check "the system bus is $variant" t_bus

t_no_failed() {
	systemctl list-units --state=failed --no-legend --plain --no-pager
	[ -z "$(systemctl list-units --state=failed --no-legend --plain --no-pager)" ]
}
check "boot: no failed units" t_no_failed

# --- activation ------------------------------------------------------------------

t_activation() {
	before=$(prop ActiveState)
	echo "before the call: $before"
	[ "$before" = inactive ] || return 1
	as_user gpiobrokerctl detect > "$T/detect" || { cat "$T/detect"; return 1; }
	cat "$T/detect"
	echo "after the call: $(prop ActiveState)"
	[ "$(prop ActiveState)" = active ] && grep -q '\[gbsim0\]' "$T/detect"
}
check "D-Bus activation: broker inactive, a client call (gpiobrokerctl detect as gb-user) starts it and is answered" t_activation

t_ready() {
	echo "SubState=$(prop SubState) StatusText=$(prop StatusText)"
	# Type=notify: "running" only once READY=1 came.
	[ "$(prop SubState)" = running ] || return 1
	case "$(prop StatusText)" in
	"policy: "*" from /etc/gpiod-broker/policy.d") return 0 ;;
	esac
	return 1
}
check "READY=1 and StatusText 'policy: N entries from /etc/gpiod-broker/policy.d'" t_ready

t_sysusers() {
	getent passwd gpiod-broker && getent group gpiod-broker || return 1
	uid=$(getent passwd gpiod-broker | cut -d: -f3)
	shell=$(getent passwd gpiod-broker | cut -d: -f7)
	user=$(ps -o user= -p "$(prop MainPID)")
	echo "uid $uid, shell $shell, broker runs as '$user'"
	[ "$uid" -lt 1000 ] && [ "$shell" = /usr/sbin/nologin ] && [ "$user" = gpiod-broker ]
}
check "sysusers.d: system user gpiod-broker (made by the package's postinst), the broker runs as it" t_sysusers

t_udev() {
	set -- /dev/gpiochip*
	[ -e "$1" ] || { echo "no /dev/gpiochip*"; return 1; }
	bad=0
	for n; do
		stat -c '%n %U:%G %a' "$n"
		# A slice's chip (gpio-aggregator) is its helper's to give: see the slices.
		case $(realpath "/sys/bus/gpio/devices/${n#/dev/}") in
		*/gpio-aggregator.*) continue ;;
		esac
		[ "$(stat -c '%G %a' "$n")" = "gpiod-broker 660" ] || bad=1
	done
	[ "$bad" -eq 0 ]
}
check "udev: /dev/gpiochip* group gpiod-broker, mode 0660 (but the slices' aggregator chips)" t_udev

# exposure UNIT: systemd-analyze security of the running UNIT, its score first, then
# what it did not tick; true at 1.5 or less.
exposure() {
	systemd-analyze security --no-pager "$1" > "$T/security" 2>&1
	score=$(sed -n "s/.*Overall exposure level for $1: \([0-9.]*\).*/\1/p" "$T/security")
	echo "exposure ${score:-unknown}"
	grep -v '^  ✓' "$T/security" | tail -n 25
	[ -n "$score" ] && systemd-analyze security --no-pager --threshold=15 "$1" >/dev/null 2>&1
}
t_security() { exposure "$unit"; }
t_security > "$diag" 2>&1 && pass "systemd-analyze security on the running unit: $(head -n1 "$diag") <= 1.5" \
	|| fail "systemd-analyze security on the running unit: exposure <= 1.5"

# --- restarts that keep an output ---------------------------------------------------

chip=$(sim_chip_dev gbsim0)
lamp_value=$(sim_line_dir gbsim0 0)/value

t_set() {
	as_user gpiobrokerctl set lamp=1 > "$T/lamp-path" || return 1
	path=$(cat "$T/lamp-path")
	echo "request $path, level $(cat "$lamp_value")"
	echo "fds in systemd's fd store: $(prop NFileDescriptorStore)"
	# gpiobrokerctl prints the request's short id (an object path is accepted too).
	case $path in /org/gpiodbroker1/request/*|[1-9]*) ;; *) return 1 ;; esac
	[ "$(cat "$lamp_value")" = 1 ] && [ "$(prop NFileDescriptorStore)" = 1 ]
}
check "a persistent output: gpiobrokerctl set lamp=1 as gb-user drives the line high, its fd in the fd store" t_set
lamp_path=$(cat "$T/lamp-path" 2>/dev/null || echo none)

# The sampler reads the simulator's view of the line (what the pin is driven to)
# in a loop, from before the broker goes down until the new one is ready, and
# counts every sample that is not 1.
sampler_start() {
	rm -f "$T/sampler.stop" "$T/samples"
	(
		n=0; bad=0
		while [ ! -e "$T/sampler.stop" ]; do
			read -r v < "$lamp_value"
			n=$((n + 1))
			[ "$v" = 1 ] || bad=$((bad + 1))
		done
		echo "$n $bad" > "$T/samples"
	) &
	sampler=$!
}
sampler_stop() {
	touch "$T/sampler.stop"
	wait "$sampler"
	samples=0 glitches=0
	read -r samples glitches < "$T/samples"
}
new_broker_ready() {
	p=$(prop MainPID)
	[ "$p" != 0 ] && [ "$p" != "$1" ] && [ "$(prop SubState)" = running ]
}
request_kept() {
	as_user gpiobrokerctl requests > "$T/requests" || return 1
	grep -q "^$lamp_path	" "$T/requests"
}

# t_survive HOW COMMAND...: COMMAND takes the broker down; the next broker must be
# ready within 30 s with the output never changed and the request at its path.
t_survive() {
	how=$1; shift
	old=$(prop MainPID)
	restarts=$(prop NRestarts)
	since=$(date +%s)
	sampler_start
	"$@"
	wait_until 30 new_broker_ready "$old"; up=$?
	request_kept; kept=$?
	sampler_stop
	new=$(prop MainPID)
	echo "$how: broker $old -> $new, NRestarts $restarts -> $(prop NRestarts)"
	echo "sampler: $samples samples of the line, $glitches not 1; level now $(cat "$lamp_value")"
	echo "fds in the fd store: $(prop NFileDescriptorStore)"
	echo "requests after:"; cat "$T/requests"
	[ "$up" -eq 0 ] && [ "$kept" -eq 0 ] && [ "$samples" -ge 10 ] && [ "$glitches" -eq 0 ] &&
		[ "$(cat "$lamp_value")" = 1 ] && [ "$(prop NFileDescriptorStore)" = 1 ] || return 1
	case $how in
	kill|watchdog) [ "$(prop NRestarts)" -eq $((restarts + 1)) ] || return 1 ;;
	esac
	if [ "$how" = watchdog ]; then
		journalctl -u "$unit" --since "@$since" --no-pager -q | grep -i watchdog
		journalctl -u "$unit" --since "@$since" --no-pager -q | grep -q 'Watchdog timeout' || return 1
	fi
}
stop_broker() { kill -STOP "$(prop MainPID)"; }

t_survive kill systemctl kill -s KILL "$unit" > "$diag" 2>&1 \
	&& pass "systemctl kill -s KILL: restarted, output never changed ($samples samples), same request $lamp_path" \
	|| fail "systemctl kill -s KILL: restarted, output never changed, same request $lamp_path"
t_survive restart systemctl restart "$unit" > "$diag" 2>&1 \
	&& pass "systemctl restart: output never changed ($samples samples), same request $lamp_path" \
	|| fail "systemctl restart: output never changed, same request $lamp_path"
t_survive watchdog stop_broker > "$diag" 2>&1 \
	&& pass "watchdog (broker SIGSTOPped, WatchdogSec=4s): killed and restarted, output never changed ($samples samples), same request" \
	|| fail "watchdog (broker SIGSTOPped, WatchdogSec=4s): killed and restarted, output never changed, same request"

# --- edge actions ----------------------------------------------------------------------

# fired INSTANCE: how often gb-fired@INSTANCE.service ran (its own effect).
fired() { _c=$(grep -cx "$1" "$T/fired" 2>/dev/null); echo "${_c:-0}"; }
fired_is() { [ "$(fired "$1")" -eq "$2" ]; }
# astate ACTION KEY: the broker's saved trigger state of an action.
astate() { sed -n "s/^$2=//p" "/run/gpiod-broker/action-$1" 2>/dev/null; }
astate_is() { [ "$(astate "$1" "$2")" = "$3" ]; }
btn() { sim_pull gbbtn "$1" "$2"; }
as_broker() { setpriv --reuid=gpiod-broker --regid=gpiod-broker --clear-groups -- "$@"; }
start_unit() {
	as_broker busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 \
		org.freedesktop.systemd1.Manager StartUnit ss "$1" replace
}
# jcount ID ACTION: the broker's journal lines with that MESSAGE_ID for that action.
jcount() { journalctl -b -q --no-pager MESSAGE_ID="$1" GPIO_ACTION="$2" | grep -c .; }
FIRED_ID=6f1d2b5c8a0e4c2f9b7d3e41a5c08d17
SUPPRESSED_ID=c43e9a70b15f4d8e8a26f0d93b7e5c42

t_polkit() {
	gpiod-broker --polkit-rules > /etc/polkit-1/rules.d/60-gpiod-broker.rules || return 1
	cat /etc/polkit-1/rules.d/60-gpiod-broker.rules
	n=$(fired knob:press)
	# polkitd reads its rules again when the directory changes.
	wait_until 20 start_unit 'gb-fired@knob:press.service' || return 1
	wait_until 10 fired_is knob:press $((n + 1)) || return 1
	echo "gb-other.service:"; start_unit gb-other.service && return 1
	echo "gb-fired@other.service:"; start_unit 'gb-fired@other.service' && return 1
	echo "stop gb-fired@knob:press.service:"
	as_broker busctl call org.freedesktop.systemd1 /org/freedesktop/systemd1 \
		org.freedesktop.systemd1.Manager StopUnit ss 'gb-fired@knob:press.service' replace && return 1
	[ ! -e "$T/other" ]
}
check "edge actions: with gpiod-broker --polkit-rules installed, the broker's user may start an action's unit, and not another unit, another instance, or another job" t_polkit

t_short() {
	n=$(fired btn-a:press) l=$(fired btn-a:long-press)
	btn 0 pull-down; sleep 0.5; btn 0 pull-up
	wait_until 10 fired_is btn-a:press $((n + 1)) || { cat "$T/fired"; return 1; }
	wait_until 5 astate_is short level 0
	sleep 1
	echo "press: $n -> $(fired btn-a:press), long-press: $l -> $(fired btn-a:long-press)"
	fired_is btn-a:press $((n + 1)) && fired_is btn-a:long-press "$l" &&
		[ "$(jcount $FIRED_ID short)" -ge 1 ]
}
check "edge actions: a short press starts gb-fired@btn\\x2da:press.service once (its own effect), not the long-press unit; the journal has its MESSAGE_ID" t_short

t_long() {
	n=$(fired btn-a:press) l=$(fired btn-a:long-press)
	t0=$(date +%s%N)
	btn 0 pull-down
	wait_until 10 fired_is btn-a:long-press $((l + 1)) || return 1
	t1=$(date +%s%N)
	sleep 1
	btn 0 pull-up
	wait_until 5 astate_is short level 0
	sleep 1
	echo "held $(((t1 - t0) / 1000000)) ms until the long-press unit ran"
	echo "press: $n -> $(fired btn-a:press), long-press: $l -> $(fired btn-a:long-press)"
	[ $((t1 - t0)) -ge 3000000000 ] && fired_is btn-a:long-press $((l + 1)) && fired_is btn-a:press "$n"
}
check "edge actions: a 3 s hold starts the long-press unit once, after 3 s, and the release does not start the short-press unit" t_long

t_bounce() {
	r=$(fired door:rising) f=$(fired door:falling)
	for i in 1 2 3 4; do btn 2 pull-up; sleep 0.03; btn 2 pull-down; sleep 0.03; done
	btn 2 pull-up
	wait_until 20 fired_is door:rising $((r + 1)) || return 1
	wait_until 10 astate_is door level 1
	sleep 1
	echo "rising: $r -> $(fired door:rising), falling: $f -> $(fired door:falling)"
	fired_is door:rising $((r + 1)) && fired_is door:falling "$f"
}
check "edge actions: a contact bouncing 9 times within its 3 s debounce fires once (rising), not on the bounces" t_bounce

t_burst() {
	for i in 1 2 3 4 5 6 7 8; do btn 1 pull-up; sleep 0.05; btn 1 pull-down; sleep 0.05; done
	wait_until 10 sh -c "[ \$(journalctl -b -q --no-pager MESSAGE_ID=$SUPPRESSED_ID GPIO_ACTION=burst | grep -c .) -ge 5 ]"
	sleep 1
	echo "fired (journal): $(jcount $FIRED_ID burst), suppressed (journal): $(jcount $SUPPRESSED_ID burst), unit ran: $(fired btn-b:rising)"
	as_user gpiobrokerctl status | grep '^  burst:'
	[ "$(jcount $FIRED_ID burst)" -eq 3 ] && [ "$(jcount $SUPPRESSED_ID burst)" -eq 5 ] &&
		[ "$(fired btn-b:rising)" -ge 1 ] && [ "$(fired btn-b:rising)" -le 3 ] &&
		as_user gpiobrokerctl status | grep -q '^  burst: btn-b rising -> gb-fired@.service; fired 3, suppressed 5, last '
}
check "edge actions: a burst of 8 presses against rate-limit-burst = 3 fires 3 and suppresses 5 (journal MESSAGE_IDs, gpiobrokerctl status)" t_burst

# t_across HOW COMMAND...: a press begins, COMMAND takes the broker down, the press
# ends (while it is down, or after: either way) and the action fires exactly once.
t_across() {
	how=$1; shift
	n=$(fired knob:press)
	old=$(prop MainPID)
	btn 3 pull-up
	wait_until 5 astate_is knob level 1 || return 1
	"$@"
	btn 3 pull-down
	wait_until 30 new_broker_ready "$old" || return 1
	wait_until 10 fired_is knob:press $((n + 1)) || return 1
	wait_until 5 astate_is knob level 0
	sleep 1
	echo "$how: knob:press $n -> $(fired knob:press); broker $old -> $(prop MainPID)"
	journalctl -b -q --no-pager MESSAGE_ID=$FIRED_ID GPIO_ACTION=knob | tail -n 3
	fired_is knob:press $((n + 1))
}
t_across restart systemctl restart "$unit" > "$diag" 2>&1 \
	&& pass "edge actions: a press begun before systemctl restart and ended after it fires once" \
	|| fail "edge actions: a press begun before systemctl restart and ended after it fires once"
t_across kill systemctl kill -s KILL "$unit" > "$diag" 2>&1 \
	&& pass "edge actions: a press begun before the broker is killed and ended as it comes back fires once" \
	|| fail "edge actions: a press begun before the broker is killed and ended as it comes back fires once"

t_held() {
	n=$(fired held:rising)
	id=$(as_user gpiobrokerctl request --persistent -i held) || return 1
	echo "request $id"
	btn 4 pull-up
	wait_until 10 fired_is held:rising $((n + 1)); r=$?
	btn 4 pull-down
	as_user gpiobrokerctl release "$id"
	[ "$r" -eq 0 ]
}
check "edge actions: a line a client holds as an input without edge detection still fires its action" t_held

# --- hot-plug ------------------------------------------------------------------------

chip_listed() { as_user gpiobrokerctl detect | grep -q "\[$1\]"; }
t_hotplug_add() {
	dev=$(sim_chip_add gbsim1:4) || return 1
	echo "added $dev"
	wait_until 15 chip_listed gbsim1 || { as_user gpiobrokerctl detect; return 1; }
	busctl --system introspect org.gpiodbroker1 "/org/gpiodbroker1/chip/$dev" >/dev/null || return 1
	stat -c '%n %G %a' "/dev/$dev"
	[ "$(stat -c '%G %a' "/dev/$dev")" = "gpiod-broker 660" ]
}
check "hot-plug: a gpio-sim chip made through configfs appears on the bus (udev group and mode set)" t_hotplug_add
t_hotplug_remove() {
	sim_chip_remove gbsim1 || return 1
	wait_until 15 eval '! chip_listed gbsim1' || { as_user gpiobrokerctl detect; return 1; }
	chip_listed gbsim0
}
check "hot-plug: the chip removed through configfs disappears from the bus, the others stay" t_hotplug_remove

# --- chips by identity, and replug ----------------------------------------------------

# gbrep's device keeps its platform id (gpio-sim.N) while it is unplugged ("live" 0)
# and plugged back, as a USB expander keeps its serial; its gpiochip number is the
# kernel's next free one each time.
rep_dev=$(sim_chip_add gbrep:4)
rep_pdev=$(cat "$GB_SIM_CONFIGFS/gbrep/dev_name")
rep_link=/dev/gpio/by-path/platform-$rep_pdev
rep_value() { cat "/sys/devices/platform/$rep_pdev/$(sim_chip_dev gbrep)/sim_gpio$1/value"; }
chip_prop() {
	busctl --system get-property org.gpiodbroker1 "/org/gpiodbroker1/chip/$1" \
		org.gpiodbroker1.Chip "$2" | sed 's/^s "\(.*\)"$/\1/'
}
t_identity() {
	wait_until 15 chip_listed gbrep || return 1
	echo "gbrep is $rep_dev ($rep_pdev); links: $(ls -l /dev/gpio/by-path/ 2>&1 | tail -n +2)"
	echo "ByPath=$(chip_prop "$rep_dev" ByPath) ById=$(chip_prop "$rep_dev" ById) Serial=$(chip_prop "$rep_dev" Serial)"
	as_user gpiobrokerctl detect
	[ "$(readlink -f "$rep_link")" = "/dev/$rep_dev" ] && [ "$(chip_prop "$rep_dev" ByPath)" = "$rep_link" ] &&
		as_user gpiobrokerctl detect | grep -q "^$rep_dev \[gbrep\] (4 lines) by-path=platform-$rep_pdev\$"
}
check "identity: udev links a gpio-sim chip as $rep_link (the broker's rule on systemd < 259); the Chip's ByPath and gpiobrokerctl detect say so" t_identity

cat > /etc/gpiod-broker/policy.d/40-replug.conf <<EOF
[line relay]
chip = $rep_link
offset = 0
users = gb-user
directions = output
persistent = yes
restore-on-replug = yes

[line motor]
chip = ID_PATH=platform-$rep_pdev
offset = 1
users = gb-user
directions = output
persistent = yes

[line contact]
chip = ID_PATH=platform-$rep_pdev
offset = 2
users = gb-user
watch-users = gb-user
directions = input
EOF
chmod 644 /etc/gpiod-broker/policy.d/40-replug.conf
watch_lines() { grep -c . "$T/replug-watch" 2>/dev/null || echo 0; }
t_replug() {
	systemctl reload "$unit" || return 1
	as_user gpiobrokerctl set -C replug-relay relay=1 || return 1
	as_user gpiobrokerctl set -C replug-motor motor=1 || return 1
	sim_pull gbrep 2 pull-up
	as_user gpiobrokerctl watch contact > "$T/replug-watch" 2> "$T/replug-watch.err" &
	watcher=$!
	wait_until 10 eval '[ "$(watch_lines)" -ge 1 ]' || { cat "$T/replug-watch"; return 1; }
	echo "before: relay $(rep_value 0), motor $(rep_value 1), on $rep_dev"
	[ "$(rep_value 0)" = 1 ] && [ "$(rep_value 1)" = 1 ] || return 1
	since=$(date +%s)
	# Unplugged; another chip takes its number; plugged back under a new one.
	echo 0 > "$GB_SIM_CONFIGFS/gbrep/live"
	wait_until 15 eval '! chip_listed gbrep' || return 1
	other=$(sim_chip_add gbother:2) || return 1
	echo 1 > "$GB_SIM_CONFIGFS/gbrep/live"
	new_dev=$(sim_chip_dev gbrep)
	echo "gbother took $other; gbrep came back as $new_dev"
	[ "$new_dev" != "$rep_dev" ] || return 1
	wait_until 15 eval '[ "$(rep_value 0)" = 1 ]' || echo "relay not driven again"
	wait_until 10 eval '[ "$(watch_lines)" -ge 2 ]'
	# A new gpio-sim chip pulls its lines down: an edge is a pull-up.
	sim_pull gbrep 2 pull-up
	wait_until 10 eval '[ "$(watch_lines)" -ge 3 ]'
	kill "$watcher" 2>/dev/null; wait "$watcher" 2>/dev/null
	echo "after: relay $(rep_value 0), motor $(rep_value 1); the watcher printed:"; cat "$T/replug-watch"
	echo "and on stderr:"; cat "$T/replug-watch.err"
	as_user gpiobrokerctl find relay; as_user gpiobrokerctl find contact
	journalctl -u "$unit" --since "@$since" --no-pager -q
	[ "$(rep_value 0)" = 1 ] && [ "$(rep_value 1)" = 0 ] || return 1
	as_user gpiobrokerctl find relay | grep -q "$new_dev" || return 1
	# The stable link names the chip for -c, whatever its number.
	as_user gpiobrokerctl get -c "$rep_link" 0 || return 1
	as_user gpiobrokerctl get -c "$rep_link" 0 | grep -q '=active$' || return 1
	[ "$(watch_lines)" -ge 3 ] || return 1
	# Its level again, then the edge, on the chip's new number.
	sed -n 2p "$T/replug-watch" | grep -q "initial	contact	$new_dev:2	value=0" &&
		sed -n 3p "$T/replug-watch" | grep -q "rising	contact	$new_dev:2" &&
		grep -q "chip $rep_dev was unplugged; waiting for $rep_link to come back" "$T/replug-watch.err" &&
		grep -q "$rep_link is back, as $new_dev" "$T/replug-watch.err" || return 1
	journalctl -b MESSAGE_ID=b2224597093946d88d71cf875ceba39c --no-pager -q | grep -q 'replug-relay' &&
		journalctl -u "$unit" --since "@$since" --no-pager -q |
			grep -q 'replug-motor.*stays released: its entry does not say restore-on-replug'
}
check "replug: the chip back under a new number; alias and access follow (by-path, ID_PATH); restore-on-replug drives the relay again, the motor stays released; the watcher resumes with its level and edges" t_replug

t_ambiguous() {
	d=$(mktemp -d)
	printf '[group pair]\nchip = ID_PATH=platform-gpio-sim.*\noffsets = 1\nusers = gb-user\ndirections = input\n' \
		> /etc/gpiod-broker/policy.d/45-ambiguous.conf
	chmod 644 /etc/gpiod-broker/policy.d/45-ambiguous.conf
	gpiod-broker --check-policy > "$d/out" 2>&1; rc=$?
	cat "$d/out"
	since=$(date +%s)
	systemctl reload "$unit"; rrc=$?
	journalctl -u "$unit" --since "@$since" --no-pager -q > "$d/reload"
	cat "$d/reload"
	rm -f /etc/gpiod-broker/policy.d/45-ambiguous.conf
	systemctl reload "$unit" || return 1
	[ "$rc" = 1 ] && grep -q '45-ambiguous.conf:1: \[group pair\]: chip = ID_PATH=platform-gpio-sim.\* matches both' "$d/out" &&
		[ "$rrc" != 0 ] && grep -q '45-ambiguous.conf:1: \[group pair\]: .* matches both' "$d/reload"
}
check "identity: a udev match on two chips is an error naming both, in --check-policy (exit 1) and at reload (refused)" t_ambiguous

t_replug_cleanup() {
	as_user gpiobrokerctl requests > "$T/requests" || return 1
	cat "$T/requests"
	for id in $(grep -e replug- "$T/requests" | cut -f1); do as_user gpiobrokerctl release "$id" || return 1; done
	rm -f /etc/gpiod-broker/policy.d/40-replug.conf
	systemctl reload "$unit" || return 1
	sim_chip_remove gbother && sim_chip_remove gbrep &&
		wait_until 15 eval '! chip_listed gbrep && ! chip_listed gbother'
}
check "replug: requests released, policy and chips removed" t_replug_cleanup

# --- reload ------------------------------------------------------------------------

t_reload() {
	pid=$(prop MainPID)
	as_user gpiobrokerctl find doorbell && { echo "doorbell known before the reload"; return 1; }
	cp "$T/20-reload.conf" /etc/gpiod-broker/policy.d/20-reload.conf
	systemctl reload "$unit" || return 1
	# ExecReload calls ReloadPolicy and waits for its reply.
	wait_until 10 as_user gpiobrokerctl find doorbell || return 1
	as_user gpiobrokerctl find doorbell
	echo "MainPID $pid -> $(prop MainPID), lamp level $(cat "$lamp_value")"
	[ "$(prop MainPID)" = "$pid" ] && [ "$(cat "$lamp_value")" = 1 ] && request_kept
}
check "systemctl reload: a policy file added is in force (alias doorbell found), same process, requests kept" t_reload

t_reload_rejected() {
	printf '[line broken]\nchip = gbsim0\nbogus = 1\n' > /etc/gpiod-broker/policy.d/30-broken.conf
	chmod 644 /etc/gpiod-broker/policy.d/30-broken.conf
	if systemctl reload "$unit" > "$T/reload.out" 2>&1; then
		echo "systemctl reload succeeded with a broken policy"; rm -f /etc/gpiod-broker/policy.d/30-broken.conf
		return 1
	fi
	cat "$T/reload.out"
	echo "StatusText=$(prop StatusText)"
	st=$(prop StatusText)
	rm -f /etc/gpiod-broker/policy.d/30-broken.conf
	systemctl reload "$unit" || return 1
	case "$st" in "policy REJECTED ("*" errors, see journal): running with the previous policy") ;; *) return 1 ;; esac
	as_user gpiobrokerctl find doorbell && request_kept
}
check "systemctl reload of a broken policy fails, StatusText says REJECTED, the policy in force stays" t_reload_rejected

# --- the policy, offline --------------------------------------------------------------

t_check_policy() {
	gpiod-broker --check-policy || return 1
	# The examples as installed, with the users and groups of their snippet.
	ex=/usr/share/doc/gpiod-broker/policy-examples
	mkdir -p /etc/sysusers.d && cp "$ex/gpiod-broker-examples.sysusers" /etc/sysusers.d/gpiod-broker-examples.conf &&
		systemd-sysusers || return 1
	gpiod-broker --check-policy="$ex" > "$T/check.out" 2>&1; rc=$?
	cat "$T/check.out"
	[ "$rc" -eq 0 ] && ! grep -q 'unknown \(user\|group\)' "$T/check.out"
}
check "gpiod-broker --check-policy: the installed policy, and the installed examples once their sysusers.d snippet ran: exit 0, no unknown user or group" t_check_policy

# --- a denial, found in the journal by its fields -----------------------------------

denied=e3b9f92ae79e4fb4ad51f1821b699fc3
t_denial_journal() {
	uid=$(id -u gb-user)
	as_user busctl --system call org.gpiodbroker1 /org/gpiodbroker1 org.gpiodbroker1.Manager \
		Request 'sa(sa{sv})a{sv}' probe 1 gbsim0:3 1 direction s input 0 && return 1
	wait_until 10 eval "journalctl -b CALLER_UID=$uid MESSAGE_ID=$denied --no-pager -q | grep -q 'denied requesting $chip:3'" ||
		{ journalctl -b -u "$unit" --no-pager -q | tail -n 20; return 1; }
	journalctl -b CALLER_UID="$uid" MESSAGE_ID="$denied" --no-pager -o verbose > "$T/denial" || return 1
	cat "$T/denial"
	for f in PRIORITY=5 "CALLER_UID=$uid" 'CALLER_NAME=:1.' "GPIO_CHIP=$chip" GPIO_OFFSET=3 \
		 CODE_FILE= CODE_LINE= CODE_FUNC= SYSLOG_IDENTIFIER=gpiod-broker "_SYSTEMD_UNIT=$unit"; do
		grep -q "^    $f" "$T/denial" || { echo "no $f"; return 1; }
	done
}
check "journal: a denial of gb-user found by journalctl CALLER_UID= MESSAGE_ID=, with GPIO_CHIP, GPIO_OFFSET, CALLER_NAME, CODE_*" t_denial_journal

# libsystemd adds the place of its own caller (log.c) to what is sent unless told
# not to: -o export lists every field an entry has, a repeated one each time.
t_code_location() {
	journalctl -b _SYSTEMD_UNIT="$unit" SYSLOG_IDENTIFIER=gpiod-broker _TRANSPORT=journal \
		--no-pager -o export > "$T/export" || return 1
	awk '
		function entry_end() {
			if (!started)
				return
			entries++
			if ((nfile != 1 || nline != 1 || nfunc != 1 || bad) && ++wrong <= 3)
				print "\"" msg "\": " nfile " CODE_FILE, " nline " CODE_LINE, " \
				      nfunc " CODE_FUNC:" where
		}
		/^__CURSOR=/ { entry_end(); started = 1; nfile = nline = nfunc = bad = 0; where = msg = "" }
		/^MESSAGE=/ { msg = substr($0, 9) }
		/^CODE_FILE=/ {
			nfile++; where = where " " $0
			if ($0 !~ /^CODE_FILE=.*daemon\/.*\.c$/ || $0 ~ /\/log\.c$/)
				bad = 1
		}
		/^CODE_LINE=/ { nline++; where = where " " $0 }
		/^CODE_FUNC=/ { nfunc++; where = where " " $0 }
		END {
			entry_end()
			print entries + 0 " entries of the broker, " wrong + 0 " of them without exactly one " \
			      "CODE_FILE (in daemon/, not log.c), CODE_LINE and CODE_FUNC"
			exit !(entries > 0 && wrong == 0)
		}' "$T/export"
}
check "journal: each entry of the broker has one CODE_FILE (a daemon source, not log.c), one CODE_LINE, one CODE_FUNC" t_code_location

t_catalog() {
	journalctl --update-catalog || return 1
	journalctl --list-catalog | grep gpiod-broker
	journalctl -b -x MESSAGE_ID="$denied" --no-pager -q > "$T/catalog" 2>&1
	cat "$T/catalog"
	grep -q 'Subject: gpiod-broker denied access to a GPIO line' "$T/catalog" &&
		grep -q "uid $(id -u gb-user) (bus connection :1\." "$T/catalog"
}
check "journalctl -x explains the denial from the installed catalog, its fields filled in" t_catalog

t_request_journal() {
	uid=$(id -u gb-user)
	journalctl -b CALLER_UID="$uid" MESSAGE_ID=633bb7994be6416a8fe035a8540647f4 --no-pager -o verbose > "$T/made" || return 1
	cat "$T/made"
	grep -q '^    GPIO_LINE=lamp$' "$T/made" && grep -q '^    REQUEST=/org/gpiodbroker1/request/' "$T/made" &&
		grep -q '^    POLICY_ENTRY=/etc/gpiod-broker/policy.d/10-bench.conf:2$' "$T/made" &&
		grep -q '^    REQUEST_LABEL=' "$T/made" || return 1
	journalctl -b MESSAGE_ID=284e136026c245678e5724b3ea6263b2 --no-pager -q | grep -q 'policy: ' &&
		journalctl -b MESSAGE_ID=28919b755ade44318ce6006a1f44fb27 --no-pager -q | grep -q 'rejected (.* error'
}
check "journal: the request made by gb-user (GPIO_LINE, REQUEST, POLICY_ENTRY), policy loaded and rejected, by MESSAGE_ID" t_request_journal

# --- slices: a chip of its own for unmodified programs (gpio-aggregator) -------------

sunit=gpiod-broker-slices.service
sprop() { systemctl show -P "$1" "$sunit"; }
sl=/dev/gpio/slice/gbs
sl_a=$(sim_line_dir gbsl 0)/value
slice_state() {
	busctl --system get-property org.gpiodbroker1 /org/gpiodbroker1/slice/gbs \
		org.gpiodbroker1.Slice State
}
slice_device() { sed -n 's/^device=//p' /run/gpiod-broker-slices/gbs 2>/dev/null; }
# gb-user's gpioset holding the slice's line 0 high, as its own process ($holder).
hold_slice() {
	setpriv --reuid=gb-user --regid=gb-user --init-groups -- gpioset -c "$sl" 0=1 &
	holder=$!
}
sl_a_high() { [ "$(cat "$sl_a")" = 1 ]; }

t_slice_made() {
	echo "$sunit: $(sprop ActiveState)/$(sprop SubState)"
	ls -l /dev/gpio/slice/ 2>&1
	cat /run/gpiod-broker-slices/gbs 2>&1
	as_user gpioinfo -c "$sl" > "$T/slinfo" 2>&1
	cat "$T/slinfo"
	slice_state
	# udev replaying the chip's events must leave it as the helper made it.
	schip=$(readlink -f "$sl")
	udevadm trigger --settle --action=add "$schip"
	ls -l "$schip"
	[ "$(sprop ActiveState)" = active ] && [ "$(grep -c '^[[:space:]]*line ' "$T/slinfo")" = 2 ] &&
		slice_state | grep -q '"made"' && [ "$(stat -c '%U:%G %A' "$schip")" = "root:root crw-rw----" ] &&
		ls -l "$schip" | grep -q '^crw-rw----+ ' &&
		as_user gpioinfo -c "$sl" > /dev/null && ! setpriv --reuid=nobody --regid=nogroup \
		--clear-groups -- sh -c 'exec 3< "$1"' sh "$schip" 2> /dev/null
}
check "slices: gpiod-broker-slices.service made the slice: /dev/gpio/slice/gbs, 2 lines in gb-user's gpioinfo, the Slice object says made; after udevadm trigger still root:root with its ACL (crw-rw----+), gb-user's, nobody's" t_slice_made

t_slice_security() {
	exposure "$sunit" || return 1
	# The broker itself cannot make a chip: the aggregator's files are root's, and
	# its unit has no capability to pass that by.
	caps=$(grep '^CapEff:' "/proc/$(prop MainPID)/status")
	echo "broker $caps"
	[ "$caps" = "CapEff:	0000000000000000" ] && ! setpriv --reuid=gpiod-broker --regid=gpiod-broker \
		--init-groups -- sh -c 'echo "gbsl 2" > /sys/bus/platform/drivers/gpio-aggregator/new_device' \
		2> /dev/null
}
t_slice_security > "$diag" 2>&1 && pass "slices: systemd-analyze security of the running helper's unit: $(head -n1 "$diag") <= 1.5; the broker (no capabilities, its user) cannot make an aggregator chip" \
	|| fail "slices: systemd-analyze security of the running helper's unit: exposure <= 1.5; the broker cannot make an aggregator chip"

t_slice_busy() {
	said=$(as_user gpiobrokerctl get sl-a 2>&1); rc=$?
	echo "get: exit $rc: $said"
	access=$(as_user gpiobrokerctl info --verbose sl-a 2>&1)
	echo "$access"
	[ "$rc" -ne 0 ] && echo "$said" | grep -q 'is in slice gbs (/dev/gpio/slice/gbs)' &&
		echo "$access" | grep -q 'access: denied: .*is in slice gbs'
}
check "slices: the broker refuses a sliced line to its own clients (get: Busy naming the slice; info --verbose says so)" t_slice_busy

# A service given the slice as systemd gives a device: DevicePolicy=closed with
# DeviceAllow= naming the link. Root's, so that only the device cgroup stands
# between it and the real chip.
t_slice_deviceallow() {
	svc() { systemd-run --quiet --wait --pipe --collect -p DevicePolicy=closed \
		-p "DeviceAllow=$sl rw" "$@"; }
	svc gpioinfo -c "$sl" > "$T/svc-slice" 2>&1; src=$?
	svc gpioinfo -c "$chip" > "$T/svc-real" 2>&1; rrc=$?
	echo "slice: exit $src"; cat "$T/svc-slice"; echo "real chip: exit $rrc"; cat "$T/svc-real"
	[ "$src" -eq 0 ] && [ "$(grep -c '^[[:space:]]*line ' "$T/svc-slice")" = 2 ] &&
		[ "$rrc" -ne 0 ] && grep -q 'Operation not permitted' "$T/svc-real"
}
check "slices: a unit with DevicePolicy=closed and DeviceAllow=/dev/gpio/slice/gbs uses the slice and is refused the real chip (EPERM)" t_slice_deviceallow

t_slice_restart() {
	hold_slice
	wait_until 10 sl_a_high || return 1
	dev=$(slice_device)
	old=$(prop MainPID)
	saved=$lamp_value; lamp_value=$sl_a
	sampler_start
	lamp_value=$saved
	systemctl restart "$unit" || { sampler_stop; return 1; }
	wait_until 30 new_broker_ready "$old"; up=$?
	sampler_stop
	echo "broker $old -> $(prop MainPID), $sunit $(sprop ActiveState); device $dev -> $(slice_device)"
	echo "sampler: $samples samples of the slice's line, $glitches not 1"
	[ "$up" -eq 0 ] && [ "$samples" -ge 10 ] && [ "$glitches" -eq 0 ] && [ -n "$dev" ] &&
		[ "$(slice_device)" = "$dev" ] && kill -0 "$holder" && sl_a_high
}
check "slices: systemctl restart of the broker keeps the slice and its consumer's output (sampler: never low)" t_slice_restart

t_slice_release() {
	since=$(date +%s)
	kill "$holder"; wait "$holder" 2>/dev/null
	released() {
		journalctl -b -q --no-pager _SYSTEMD_UNIT="$unit" SLICE=gbs --since "@$since" |
			grep -q 'put in its safe state output-low'
	}
	wait_until 10 released; r=$?
	journalctl -b -q --no-pager _SYSTEMD_UNIT="$unit" --since "@$since" | grep slice
	[ "$r" -eq 0 ] && [ "$(cat "$sl_a")" = 0 ]
}
check "slices: when gb-user's gpioset lets the line go, the broker puts it in its safe state (journal, SLICE=gbs)" t_slice_release

t_slice_revoke() {
	hold_slice
	wait_until 10 sl_a_high || return 1
	since=$(date +%s)
	mv /etc/gpiod-broker/policy.d/40-slices.conf /gb-test/40-slices.conf.off || return 1
	systemctl reload "$unit" || return 1
	wait_until 10 sh -c '! kill -0 '"$holder"' 2>/dev/null || ! [ -e '"$sl"' ]'
	journalctl -b -q --no-pager -u "$sunit" --since "@$since" | tail -n 8
	[ ! -e "$sl" ] && [ ! -e /run/gpiod-broker-slices/gbs ] && [ "$(cat "$sl_a")" = 0 ] &&
		journalctl -b -q --no-pager -u "$sunit" --since "@$since" |
			grep -q "slice gbs revoked: line 0 (sl-a, .*) held by 'gpioset'" &&
		! busctl --system introspect org.gpiodbroker1 /org/gpiodbroker1/slice/gbs > /dev/null 2>&1
}
check "slices: a reload without the slice revokes it: the device, link and object gone, the line low, the journal names gpioset" t_slice_revoke
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
mv /gb-test/40-slices.conf.off /etc/gpiod-broker/policy.d/40-slices.conf 2>/dev/null
systemctl reload "$unit" > /dev/null 2>&1

# --- stop --------------------------------------------------------------------------

t_stop() {
	systemctl stop "$unit" || return 1
	echo "after stop: $(prop ActiveState), level $(cat "$lamp_value")"
	gpioinfo -c "$chip" 0 || true
	echo "/run/gpiod-broker: $(ls -A /run/gpiod-broker 2>&1 | tr '\n' ' ')"
	echo "fds in the fd store: $(prop NFileDescriptorStore)"
	[ "$(prop ActiveState)" = inactive ] && [ "$(cat "$lamp_value")" = 0 ] &&
		[ "$(prop NFileDescriptorStore)" = 0 ] || return 1
	# The kernel has no request left on the line either: nobody holds a copy.
	! gpioinfo -c "$chip" 0 | grep -q consumer || return 1
	[ -d /run/gpiod-broker ] && [ -z "$(ls -A /run/gpiod-broker)" ] || return 1
	# The slices' unit is part of the broker's: stopped with it, its slices removed.
	echo "$sunit: $(sprop ActiveState); /dev/gpio/slice: $(ls -A /dev/gpio/slice 2>&1)"
	[ "$(sprop ActiveState)" = inactive ] && [ ! -e "$sl" ]
}
check "systemctl stop: the output goes to its safe state (low, released), fd store and /run/gpiod-broker empty; the slices' unit stopped, its slice removed" t_stop

t_start_clean() {
	systemctl start "$unit" || return 1
	as_user gpiobrokerctl requests > "$T/requests" || return 1
	echo "requests after a fresh start:"; cat "$T/requests"
	[ ! -s "$T/requests" ] && [ "$(cat "$lamp_value")" = 0 ]
}
check "systemctl start after the stop: nothing taken over, the line stays low" t_start_clean

t_safe_state_journal() {
	journalctl -b MESSAGE_ID=3b658373096f44f0a95b16303a6a0da2 GPIO_LINE=lamp --no-pager -o verbose > "$T/safe" || return 1
	cat "$T/safe"
	grep -q 'put in their safe state' "$T/safe" &&
		journalctl -b MESSAGE_ID=fa9113475f9648b1b6b5f9d97a5a7624 GPIO_LINE=lamp --no-pager -q | grep -q released
}
check "journal: the stop's safe state and release of lamp, by MESSAGE_ID and GPIO_LINE" t_safe_state_journal

# --- the Debian packages: upgrade, removal, purge, install --------------------------

pkg_version() { dpkg-query -W -f='${Version}' gpiod-broker 2>/dev/null; }
pkg_installed() { dpkg-query -W -f='${Status}' gpiod-broker 2>/dev/null | grep -q 'install ok installed'; }
broker_running() { [ "$(prop SubState)" = running ]; }

t_pkg_upgrade() {
	systemctl enable --quiet "$unit" || return 1
	as_user gpiobrokerctl set lamp=1 > "$T/lamp-path" || return 1
	lamp_path=$(cat "$T/lamp-path")
	before=$(pkg_version)
	t_survive upgrade dpkg -i /gb-debs/upgrade/gpiod-broker_*.deb || return 1
	echo "gpiod-broker $before -> $(pkg_version)"
	[ "$(pkg_version)" = "$before+bench1" ]
}
t_pkg_upgrade > "$diag" 2>&1 \
	&& pass "package upgrade (dpkg -i, a later version): the broker restarted, the output never changed ($samples samples), same request" \
	|| fail "package upgrade (dpkg -i, a later version): the broker restarted, the output never changed, same request"

t_pkg_remove() {
	dpkg -r gpiod-broker || return 1
	echo "after dpkg -r: $(prop ActiveState) ($(prop LoadState)), level $(cat "$lamp_value")"
	gpioinfo -c "$chip" 0 || true
	echo "policy: $(ls /etc/gpiod-broker/policy.d | tr '\n' ' ')"
	[ "$(prop ActiveState)" = inactive ] && [ "$(cat "$lamp_value")" = 0 ] &&
		! gpioinfo -c "$chip" 0 | grep -q consumer && [ ! -e /usr/sbin/gpiod-broker ] &&
		[ -f /etc/gpiod-broker/policy.d/10-bench.conf ]
}
check "package removal (dpkg -r): the broker stopped, the output in its safe state (low, released), the admin's policy kept" t_pkg_remove

t_pkg_purge() {
	dpkg -P gpiod-broker || return 1
	echo "/run/gpiod-broker: $(ls -d /run/gpiod-broker 2>&1)"
	echo "policy: $(ls /etc/gpiod-broker/policy.d | tr '\n' ' ')"
	! pkg_installed && [ ! -e /run/gpiod-broker ] && [ -f /etc/gpiod-broker/policy.d/10-bench.conf ] &&
		getent passwd gpiod-broker > /dev/null
}
check "package purge (dpkg -P): /run/gpiod-broker deleted, the admin's policy and the system user kept" t_pkg_purge

t_pkg_install() {
	dpkg -i /gb-debs/gpiod-broker_*.deb || return 1
	echo "gpiod-broker $(pkg_version): $(systemctl is-enabled "$unit"), $(prop ActiveState)/$(prop SubState)"
	pkg_installed && [ "$(systemctl is-enabled "$unit")" = enabled ] && broker_running || return 1
	as_user gpiobrokerctl set lamp=1 > /dev/null && [ "$(cat "$lamp_value")" = 1 ] &&
		as_user gpiobrokerctl release lamp && [ "$(cat "$lamp_value")" = 0 ]
}
check "package install (dpkg -i) with systemd running: the unit enabled and started, lines served" t_pkg_install

check "end: no failed units" t_no_failed

# --- the journal ----------------------------------------------------------------------

t_journal() {
	# What the broker's processes logged at warning or worse (PID 1's own
	# messages about the kills above are not the broker's), less the errors of the
	# broken policy t_reload_rejected provoked on purpose.
	journalctl -b _SYSTEMD_UNIT="$unit" -p warning --no-pager -q -o short-monotonic |
		grep -v -e '30-broken.conf' -e '45-ambiguous.conf' -e 'policy in /etc/gpiod-broker/policy.d rejected' \
			-e '"replug-motor"): chip gpiochip[0-9]* is gone' -e '"replug-relay"): chip gpiochip[0-9]* is gone' \
			-e 'busctl\[[0-9]*\]: Call failed: policy rejected' > "$T/warnings"
	cat "$T/warnings"
	[ ! -s "$T/warnings" ]
}
check "journal: the broker logged no warnings" t_journal

journalctl -b --no-pager -o short-monotonic > "$T/journal.txt" 2>&1
echo done > "$T/finished"
