#!/bin/sh
# busctl-only scenario: a CLI user whose processes exit between calls. A persistent
# request made by one busctl process is driven and released by others, as a real uid.
# TAP output.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${GB_BENCH:-}" ] || exec "$here/run" --chip gbctl:4:0=lamp,1=switch -- "$here/$(basename "$0")" "$@"

broker=${GB_TEST_BROKER:?GB_TEST_BROKER must name the gpiod-broker binary}
. "$here/gpiosim.sh"
. "$here/test-lib.sh"
call() { u=$1; shift; as "$u" busctl --system call org.gpiodbroker1 "$@" 2>&1; }
RQ=org.gpiodbroker1.Request

# The integrator's policy: "lamp" is an alias (gpio_export_link) for gbctl:0.
mkdir -p /run/gb-busctl-policy
cat > /run/gb-busctl-policy/10-lamp.conf <<'POLICY'
[line lamp]
chip = gbctl
offset = 0
users = gb-alice
directions = output
persistent = yes
safe-state = output-low

[line switch]
line-name = switch
groups = gb-gpio
directions = input
persistent = yes
POLICY
"$broker" --log-level=warning --policy-dir=/run/gb-busctl-policy &
bpid=$!
wait_broker

out=$(call gb-alice /org/gpiodbroker1 org.gpiodbroker1.Manager Request 'sa(sa{sv})a{sv}' \
	lamp-ctl 1 lamp 2 direction s output value b false 1 persistent b true)
# (the line is named by its policy alias)
check "persistent request from one busctl" 'o "/org/gpiodbroker1/request/1"' "$out"
req=/org/gpiodbroker1/request/1
chip=$(sim_chip_dev gbctl)
line=/org/gpiodbroker1/chip/$chip/line0
check "line held after that busctl exited" 'b true' \
	"$(busctl --system get-property org.gpiodbroker1 $line org.gpiodbroker1.Line Used)"

out=$(call gb-alice $req $RQ SetValues 'a(ub)' 1 0 true)
check "set from a second busctl" "" "$out"
check "the simulator sees the output high" 1 "$(sim_value gbctl 0)"

check "get from a third busctl" "ab 1 true" "$(call gb-alice $req $RQ GetValues au 0)"

check "label is the line's consumer" 's "lamp-ctl"' \
	"$(as gb-carol busctl --system get-property org.gpiodbroker1 $line org.gpiodbroker1.Line Consumer)"

out=$(call gb-bob $req $RQ SetValues 'a(ub)' 1 0 false)
case "$out" in
*"belongs to uid 60001"*) ok "another user is refused" ;;
*) not_ok "another user is refused" "got: $out" ;;
esac
check "... and the output did not change" 1 "$(sim_value gbctl 0)"

out=$(call gb-alice $req $RQ SetValues 'a(ub)' 1 5 true)
case "$out" in
*"out of range"*) ok "bad index answered with a message" ;;
*) not_ok "bad index answered with a message" "got: $out" ;;
esac

out=$(call gb-alice /org/gpiodbroker1 org.gpiodbroker1.Manager ListRequests)
check "listed" 'a(osbus) 1 "/org/gpiodbroker1/request/1" "lamp-ctl" true 60001 ""' "$out"

check "the line shows its alias" 's "lamp"' \
	"$(busctl --system get-property org.gpiodbroker1 $line org.gpiodbroker1.Line Alias)"
check "release from a fourth busctl" "" "$(call gb-alice $req $RQ Release)"
check "line free again" 'b false' \
	"$(busctl --system get-property org.gpiodbroker1 $line org.gpiodbroker1.Line Used)"

if busctl --system introspect org.gpiodbroker1 /org/gpiodbroker1 2>&1 | grep -q '\.Request  *method'; then
	ok "introspectable"
else
	not_ok "introspectable"
fi

# The running broker introspects exactly the interfaces shipped in dbus/.
xml=$here/../../dbus/org.gpiodbroker1.xml
iface_of() { sed -n "/<interface name=\"org.gpiodbroker1.$1\">/,/<\/interface>/p"; }
out=$(call gb-alice /org/gpiodbroker1 org.gpiodbroker1.Manager Request 'sa(sa{sv})a{sv}' \
	x 1 switch 0 1 persistent b true)
for pair in Manager:/org/gpiodbroker1 Chip:/org/gpiodbroker1/chip/$chip Line:$line \
	    Request:/org/gpiodbroker1/request/2; do
	i=${pair%%:*}
	live=$(busctl --system introspect --xml-interface org.gpiodbroker1 "${pair#*:}" | iface_of "$i")
	shipped=$(iface_of "$i" < "$xml")
	if [ -n "$shipped" ] && [ "$live" = "$shipped" ]; then
		ok "interface $i matches dbus/org.gpiodbroker1.xml"
	else
		not_ok "interface $i matches dbus/org.gpiodbroker1.xml" \
			"$(printf '%s\n' "$live" > /run/live.xml; printf '%s\n' "$shipped" | diff - /run/live.xml)"
	fi
done

# A watch lives as long as its connection: hold one open with the CLI (root may
# watch any line) and check its interface too.
ctl=${GB_TEST_CTL:?GB_TEST_CTL must name the gpiobrokerctl binary}
"$ctl" watch --timeout 30 switch > /dev/null 2>&1 &
wpid=$!
for i in $(seq 250); do
	busctl --system introspect org.gpiodbroker1 /org/gpiodbroker1/watch/1 > /dev/null 2>&1 && break
	sleep 0.02
done
live=$(busctl --system introspect --xml-interface org.gpiodbroker1 /org/gpiodbroker1/watch/1 | iface_of Watch)
shipped=$(iface_of Watch < "$xml")
if [ -n "$shipped" ] && [ "$live" = "$shipped" ]; then
	ok "interface Watch matches dbus/org.gpiodbroker1.xml"
else
	not_ok "interface Watch matches dbus/org.gpiodbroker1.xml" \
		"$(printf '%s\n' "$live" > /run/live.xml; printf '%s\n' "$shipped" | diff - /run/live.xml)"
fi
kill "$wpid"
wait "$wpid"

kill "$bpid"
wait "$bpid"
check "broker exits cleanly on SIGTERM" 0 "$?"
tap_done
