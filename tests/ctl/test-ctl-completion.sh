#!/bin/sh
# The bash completion of gpiobrokerctl (ctl/completion/gpiobrokerctl.bash) on the
# bench: commands, options (from each command's --help), option values, and what it
# asks the broker: line names, policy aliases, chips, request ids. TAP output.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${GB_BENCH:-}" ] || exec "$here/../bench/run" --chip gbcpl:4:0=relay,1=button -- "$here/$(basename "$0")" "$@"

broker=${GB_TEST_BROKER:?GB_TEST_BROKER must name the gpiod-broker binary}
ctl=${GB_TEST_CTL:?GB_TEST_CTL must name the gpiobrokerctl binary}
comp="$here/../../ctl/completion/gpiobrokerctl.bash"
. "$here/../bench/gpiosim.sh"
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
check() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "expected: $2" "got:      $3"; fi; }
# complete WORDS...: what bash would offer for the last word (sorted, one line)
complete_() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _gpiobrokerctl
		printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " " | sed "s/ $//"' _ "$comp" "$ctl" "$@"
}

check "commands" "reconfigure release request requests" "$(complete_ re)"
check "global options" "--help" "$(complete_ --he)"
check "no broker: commands still complete" "monitor" "$(complete_ mon)"

chip=$(sim_chip_dev gbcpl)
mkdir -p /run/gb-cpl-policy
cat > /run/gb-cpl-policy/10.conf <<'POLICY'
[line porch]
chip = gbcpl
offset = 2
users = root
directions = input, output
persistent = yes

[group rest]
chip = gbcpl
offsets = 0-1
users = root
directions = input, output
persistent = yes
POLICY
"$broker" --log-level=warning --policy-dir=/run/gb-cpl-policy &
bpid=$!
"$ctl" wait --timeout 10 || { echo "Bail out! the broker did not start"; exit 1; }

check "get's options, from its --help" "--numeric" "$(complete_ get --nu)"
check "monitor's options" "--idle-timeout" "$(complete_ monitor --idl)"
check "-b values" "pull-down pull-up" "$(complete_ get -b pull)"
check "-e values" "both" "$(complete_ monitor -e bo)"
check "-c: chips from the broker" "$chip" "$(complete_ info -c "$chip")"
check "line names and aliases from the broker" "button porch relay" "$(complete_ info "")"
check "set: LINE=" "porch=" "$(complete_ set po)"
check "set: LINE=VALUE" "relay=0 relay=1 relay=active relay=inactive relay=off relay=on" "$(complete_ set relay=)"
check "set: VALUE after a separate =" "0 1 active inactive off on" "$(complete_ set relay = "")"
id=$("$ctl" request --persistent relay=1)
check "release: request ids and lines" "$id button porch relay" "$(complete_ release "")"
"$ctl" release "$id"

kill "$bpid"
wait "$bpid"
check "broker exits cleanly" 0 "$?"
echo "1..$n"
[ "$failed" -eq 0 ]
