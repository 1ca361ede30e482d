#!/bin/sh
# The README's demo, run inside the bench by tools/demo: gpiod-broker on a
# simulated chip, driven with busctl, an edge event arriving at a client.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${GB_DEMO_BUILD:?}
. "$here/gpiosim.sh"

say() { printf '\n\033[1m# %s\033[0m\n' "$*"; }
run() { printf '\033[36m%s$ %s\033[0m\n' "${AS:-root}" "$*"; if [ -n "${AS:-}" ]; then setpriv --reuid="$AS" --regid="$AS" --init-groups -- "$@"; else "$@"; fi; }

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
for i in $(seq 100); do busctl --system list 2>/dev/null | grep -q '^org.gpiodbroker1 ' && break; sleep 0.05; done
run busctl --system tree org.gpiodbroker1 | head -8
echo "  ..."

say "Lines are found by alias or name; no numbers in applications"
run busctl --system call org.gpiodbroker1 /org/gpiodbroker1 org.gpiodbroker1.Manager FindLine s porch-light

say "gb-bob may not have it: the policy says which rule is missing"
AS=gb-bob run busctl --system call org.gpiodbroker1 /org/gpiodbroker1 org.gpiodbroker1.Manager \
	Request 'sa(sa{sv})a{sv}' bobs-light 1 porch-light 1 direction s output 0

say "gb-alice requests it as an output, initially on, persistent (busctl exits between calls)"
AS=gb-alice run busctl --system call org.gpiodbroker1 /org/gpiodbroker1 org.gpiodbroker1.Manager \
	Request 'sa(sa{sv})a{sv}' porch-light 1 porch-light 2 direction s output value b true 1 persistent b true
echo "simulator: led is driven to $(sim_value demo 0)"

say "The line object shows who holds it; the kernel sees the label as consumer"
run busctl --system get-property org.gpiodbroker1 /org/gpiodbroker1/chip/$chip/line0 \
	org.gpiodbroker1.Line Alias Used Consumer Direction Request
run gpioinfo -c "$chip" 0 2>/dev/null || true

say "Drive it off, then read it back"
AS=gb-alice run busctl --system call org.gpiodbroker1 /org/gpiodbroker1/request/1 \
	org.gpiodbroker1.Request SetValues 'a(ub)' 1 0 false
echo "simulator: led is driven to $(sim_value demo 0)"
AS=gb-alice run busctl --system call org.gpiodbroker1 /org/gpiodbroker1/request/1 \
	org.gpiodbroker1.Request GetValues au 0

say "Another user may not touch gb-alice's request"
AS=gb-bob run busctl --system call org.gpiodbroker1 /org/gpiodbroker1/request/1 \
	org.gpiodbroker1.Request SetValues 'a(ub)' 1 0 true

say "gb-alice (in group gb-gpio) watches the doorbell for edges; the simulator presses it twice"
AS=gb-alice run "$build/docs/examples/watch-edges" doorbell 4 > /run/demo-watch.out &
watcher=$!
for i in $(seq 200); do grep -q watching /run/demo-watch.out 2>/dev/null && break; sleep 0.05; done
cat /run/demo-watch.out
for level in pull-up pull-down pull-up pull-down; do
	echo "simulator: button $level"
	sim_pull demo 1 "$level"
	sleep 0.1
done
wait "$watcher"
tail -n +2 /run/demo-watch.out

say "Release: the line goes to its safe state (output-low) and back to the kernel"
AS=gb-alice run busctl --system call org.gpiodbroker1 /org/gpiodbroker1/request/1 \
	org.gpiodbroker1.Request SetValues 'a(ub)' 1 0 true
echo "simulator: led is driven to $(sim_value demo 0)"
AS=gb-alice run busctl --system call org.gpiodbroker1 /org/gpiodbroker1/request/1 \
	org.gpiodbroker1.Request Release
echo "simulator: led is driven to $(sim_value demo 0)"
run busctl --system get-property org.gpiodbroker1 /org/gpiodbroker1/chip/$chip/line0 \
	org.gpiodbroker1.Line Used

kill "$broker"
wait "$broker"
say "Done."
