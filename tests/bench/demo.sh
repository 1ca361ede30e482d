#!/bin/sh
# The README's demo, run inside the bench by tools/demo: gpiod-broker on a
# simulated chip, driven with gpiobrokerctl (and busctl, to show the D-Bus
# objects), edge events arriving at an example libgpiobroker program.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${GB_DEMO_BUILD:?}
. "$here/gpiosim.sh"
. "$here/test-lib.sh"

say() { printf '\n\033[1m# %s\033[0m\n' "$*"; }
run() { printf '\033[36m%s$ %s\033[0m\n' "${AS:-root}" "$*"; if [ -n "${AS:-}" ]; then as "$AS" "$@"; else "$@"; fi; }

chip=$(sim_chip_dev demo)
say "The integrator's policy: aliases, who may do what, safe states"
mkdir -p /run/demo-policy
cat > /run/demo-policy/10-demo.conf <<'POLICY'
[line porch-light]
chip = demo
offset = 0
users = gb-alice
directions = output
persistent = yes
safe-state = output-low

[line doorbell]
line-name = button
groups = gb-gpio
directions = input
edges = both
POLICY
cat /run/demo-policy/10-demo.conf

say "A gpio-sim chip '$chip' (label 'demo') with named lines; start the broker"
"$build/daemon/gpiod-broker" --policy-dir=/run/demo-policy &
broker=$!
wait_broker
run busctl --system tree org.gpiodbroker1 | head -8
echo "  ..."

ctl="$build/ctl/gpiobrokerctl"
say "Lines are found by alias or name; no numbers in applications"
run "$ctl" find porch-light
run "$ctl" info -c demo

say "gb-bob may not have it: the policy says which rule is missing"
AS=gb-bob run "$ctl" set porch-light=1
echo "(exit code $?: permission denied)"

say "gb-alice turns the light on; the value stays after the command (persistent, like sysfs)"
AS=gb-alice run "$ctl" set --label porch-light porch-light=1
echo "simulator: led is driven to $(sim_value demo 0)"

say "The line object shows who holds it; the kernel sees the label as consumer"
run "$ctl" info porch-light
run busctl --system get-property org.gpiodbroker1 /org/gpiodbroker1/chip/$chip/line0 \
	org.gpiodbroker1.Line Alias Used Consumer Direction Request
run gpioinfo -c "$chip" 0 2>/dev/null || true

say "Drive it off, then read it back; list the requests"
AS=gb-alice run "$ctl" set porch-light=0
echo "simulator: led is driven to $(sim_value demo 0)"
AS=gb-alice run "$ctl" get porch-light
run "$ctl" requests

say "Another user may not touch gb-alice's request"
AS=gb-bob run busctl --system call org.gpiodbroker1 /org/gpiodbroker1/request/1 \
	org.gpiodbroker1.Request SetValues 'a(ub)' 1 0 true

say "gb-alice (group gb-gpio) runs an example libgpiobroker program on the doorbell; the simulator presses it twice"
printf '\033[36mgb-alice$ %s\033[0m\n' "client/examples/watch-irq doorbell 4"
setpriv --reuid=gb-alice --regid=gb-alice --init-groups -- "$build/client/examples/watch-irq" doorbell 4 > /run/demo-watch.out &
watcher=$!
for i in $(seq 200); do [ "$("$ctl" info doorbell 2>/dev/null | grep -c watch-irq)" -gt 0 ] && break; sleep 0.05; done
for level in pull-up pull-down pull-up pull-down; do
	echo "simulator: button $level"
	sim_pull demo 1 "$level"
	sleep 0.1
done
wait "$watcher"
cat /run/demo-watch.out

say "The same with the CLI, machine-readable"
AS=gb-alice run "$ctl" monitor --count 2 --format json doorbell &
mon=$!
for i in $(seq 200); do [ "$("$ctl" info doorbell 2>/dev/null | grep -c gpiobrokerctl)" -gt 0 ] && break; sleep 0.05; done
for level in pull-up pull-down; do sim_pull demo 1 "$level"; sleep 0.1; done
wait "$mon"

say "Release: the line goes to its safe state (output-low) and back to the kernel"
AS=gb-alice run "$ctl" set porch-light=1
echo "simulator: led is driven to $(sim_value demo 0)"
AS=gb-alice run "$ctl" release porch-light
echo "simulator: led is driven to $(sim_value demo 0)"
run "$ctl" info porch-light

kill "$broker"
wait "$broker"
say "Done."
