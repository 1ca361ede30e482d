#!/bin/sh
# gpiobrokerctl next to the libgpiod v2 tools (gpioget, gpioset, gpioinfo, gpiodetect,
# gpiomon) on the same gpio-sim lines, with the same options: the same values, the
# same --numeric and --unquoted output, the same active-low inversion, the same
# gpioinfo rows, the same gpiomon -F output, and exit code 0 for both where both
# succeed. The broker holds a line only while it is requested, so each tool runs
# while nobody holds the line; outputs are compared through gpio-sim's sysfs values.
# TAP output.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${GB_BENCH:-}" ] || exec "$here/../bench/run" --chip gbcmp:4:0=alpha,1=beta,2=gamma,3=delta -- "$here/$(basename "$0")" "$@"

broker=${GB_TEST_BROKER:?GB_TEST_BROKER must name the gpiod-broker binary}
ctl=${GB_TEST_CTL:?GB_TEST_CTL must name the gpiobrokerctl binary}
. "$here/../bench/gpiosim.sh"
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
check() { # check DESCRIPTION EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "expected: $2" "got:      $3"; fi
}
for t in gpioget gpioset gpioinfo gpiodetect gpiomon; do
	command -v "$t" >/dev/null || { echo "Bail out! $t (Debian's gpiod, bookworm-backports) is missing: run tools/setup-debian"; exit 1; }
done
# as root: the libgpiod tools open /dev/gpiochipN themselves, the CLI goes through the broker
lib() { out=$("$@" 2>&1); rc=$?; }
ctl() { out=$("$ctl" "$@" 2>&1); rc=$?; }
# both DESCRIPTION LIBGPIOD-COMMAND -- CTL-ARGS: the same output and exit code
both() {
	d=$1; shift
	cmd=""
	while [ "$1" != "--" ]; do cmd="$cmd '$1'"; shift; done
	shift
	lib_out=$(eval "$cmd" 2>&1); lib_rc=$?
	ctl "$@"
	check "$d" "$lib_rc $lib_out" "$rc $out"
}
free_wait() { # free_wait OFFSET: until the broker sees the line free again
	for i in $(seq 200); do
		[ "$(busctl --system get-property org.gpiodbroker1 /org/gpiodbroker1/chip/$chip/line$1 org.gpiodbroker1.Line Used)" = "b false" ] && return
		sleep 0.02
	done
}

chip=$(sim_chip_dev gbcmp)
num=${chip#gpiochip}
mkdir -p /run/gb-cmp-policy
cat > /run/gb-cmp-policy/10-cmp.conf <<'POLICY'
[group cmp]
chip = gbcmp
offsets = 0-3
users = root
directions = input, output
direction-may-change = yes
edges = none, rising, falling, both
bias = as-is, disabled, pull-up, pull-down
persistent = yes
POLICY
"$broker" --log-level=warning --policy-dir=/run/gb-cmp-policy &
bpid=$!
"$ctl" wait --timeout 10 || { echo "Bail out! the broker did not start"; exit 1; }

sim_pull gbcmp 1 pull-up
sim_pull gbcmp 2 pull-down
both "get: gpioget's output" gpioget beta gamma -- get beta gamma
both "get --numeric" gpioget --numeric beta gamma -- get --numeric beta gamma
both "get --unquoted" gpioget --unquoted beta gamma -- get --unquoted beta gamma
both "get -l: active-low inverts" gpioget -l beta gamma -- get -l beta gamma
both "get -a: as-is" gpioget -a --numeric beta -- get -a --numeric beta
both "get -b pull-up" gpioget -b pull-up --numeric delta -- get -b pull-up --numeric delta
both "get -c CHIP OFFSET..." gpioget -c "$chip" 1 2 -- get -c "$chip" 1 2
both "get -c NUMBER OFFSET" gpioget -c "$num" --numeric 1 -- get -c "$num" --numeric 1
both "get -c /dev/PATH NAME" gpioget -c "/dev/$chip" beta -- get -c "/dev/$chip" beta
both "get -p PERIOD (units)" gpioget -p 10ms --numeric beta -- get -p 10ms --numeric beta
lib gpioget nosuchline; l=$rc
ctl get nosuchline
if [ "$l" -ne 0 ] && [ "$rc" -ne 0 ]; then ok "get of no such line: both fail"; else not_ok "get of no such line: both fail" "gpioget $l, gpiobrokerctl $rc"; fi

# set: the level gpio-sim sees while each holds the line.
for args in "alpha=1" "alpha=0" "-l alpha=1" "-l alpha=0" "alpha=active"; do
	# shellcheck disable=SC2086
	gpioset $args & spid=$!
	for i in $(seq 100); do gpioinfo alpha | grep -q consumer && break; sleep 0.02; done
	lv=$(sim_value gbcmp 0)
	kill "$spid"; wait "$spid" 2>/dev/null
	# shellcheck disable=SC2086
	"$ctl" set $args >/dev/null; crc=$?
	cv=$(sim_value gbcmp 0)
	"$ctl" release alpha
	free_wait 0
	check "set $args: the level as gpioset's, code 0" "0 $lv" "$crc $cv"
done
"$ctl" set -c "$chip" 0=1 >/dev/null
check "set -c CHIP OFFSET=VALUE" 1 "$(sim_value gbcmp 0)"
"$ctl" release alpha
free_wait 0

# info: gpioinfo's rows, line for line, on lines nobody holds.
sleep 0.2
both "info -c CHIP: gpioinfo's layout" gpioinfo -c "$chip" -- info -c "$chip"
both "info LINE: gpioinfo's one-row form" gpioinfo beta -- info beta
both "info --unquoted" gpioinfo --unquoted beta delta -- info --unquoted beta delta
both "info -c CHIP OFFSET" gpioinfo -c "$chip" 2 -- info -c "$chip" 2
lib gpiodetect
check "detect: gpiodetect's row" "$(printf '%s\n' "$out" | grep "^$chip ")" "$("$ctl" detect)"

# gpiomon -F: the same rows for the same edges.
mon() { # mon COMMAND...: run it on gamma, make two edges, print its output
	sim_pull gbcmp 2 pull-down
	"$@" > /run/mon.out 2>&1 & mpid=$!
	for i in $(seq 200); do
		[ "$(busctl --system get-property org.gpiodbroker1 /org/gpiodbroker1/chip/$chip/line2 org.gpiodbroker1.Line Used)" = "b true" ] && break
		sleep 0.02
	done
	sleep 0.2
	sim_pull gbcmp 2 pull-up; sleep 0.05; sim_pull gbcmp 2 pull-down
	wait "$mpid"
	cat /run/mon.out
	free_wait 2
}
lib_out=$(mon gpiomon -n 2 -F '%o %c %e %E %l' gamma)
ctl_out=$(mon "$ctl" monitor -n 2 -F '%o %c %e %E %l' gamma)
check "monitor -F: gpiomon's rows" "$lib_out" "$ctl_out"
lib_out=$(mon gpiomon -n 1 -e rising -F '%E' gamma)
ctl_out=$(mon "$ctl" monitor -n 1 -e rising -F '%E' gamma)
check "monitor -e rising" "$lib_out" "$ctl_out"
lib_out=$(mon gpiomon -n 1 -l -F '%E' gamma)
ctl_out=$(mon "$ctl" monitor -n 1 -l -F '%E' gamma)
check "monitor -l: active-low flips the edges" "$lib_out" "$ctl_out"
lib gpiomon --idle-timeout 100ms gamma; l=$rc
free_wait 2
ctl monitor --idle-timeout 100ms gamma
check "monitor --idle-timeout: both exit 0" "0 0" "$l $rc"

kill "$bpid"
wait "$bpid"
check "broker exits cleanly" 0 "$?"
echo "1..$n"
[ "$failed" -eq 0 ]
