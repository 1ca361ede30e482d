# Shell helpers for the bench's shell tests (sourced after gpiosim.sh): TAP
# output, running a command as a test user, waiting for the broker's bus name.
# The tests spell bus names and interfaces themselves: they test what a user
# types.

# TAP: ok DESCRIPTION; not_ok DESCRIPTION [DIAGNOSTIC LINE...]; tap_done at the
# end prints the plan and returns non-zero if anything failed.
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
check() { # check DESCRIPTION EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "expected: $2" "got:      $3"; fi
}
contains() { # contains DESCRIPTION NEEDLE HAYSTACK
	case "$3" in *"$2"*) ok "$1" ;; *) not_ok "$1" "wanted: $2" "got:    $3" ;; esac
}
tap_done() { echo "1..$n"; [ "$failed" -eq 0 ]; }

# as USER COMMAND...: run COMMAND with USER's uid, gid and groups, as a login would.
as() { u=$1; shift; setpriv --reuid="$u" --regid="$u" --init-groups -- "$@"; }

# wait_broker: until org.gpiodbroker1 has an owner on the system bus (5 s at most).
wait_broker() {
	for _i in $(seq 100); do
		busctl --system list 2>/dev/null | grep -q '^org.gpiodbroker1 ' && return 0
		sleep 0.05
	done
	return 1
}
