#!/bin/sh
# libgpiobroker exports exactly the symbols of client/libgpiobroker.sym: a function
# that lost its GB_EXPORT (or a helper that gained one) changes the ABI, and make
# check says which. Also: every function <gpiobroker.h> names is on the list. TAP.
#
#   tests/unit/test-lib-symbols.sh [BUILDDIR]   (make check runs it in the build dir)
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$PWD}
list="$top/client/libgpiobroker.sym"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }

# The shared object libtool built (dlname in the .la), whatever its version suffix.
la="$build/client/libgpiobroker.la"
if [ ! -f "$la" ]; then
	echo "Bail out! no $la: build the library first (make)"
	exit 1
fi
dlname=$(sed -n "s/^dlname='\(.*\)'\$/\1/p" "$la")
if [ -z "$dlname" ]; then
	echo "1..0 # SKIP configured without a shared library (--disable-shared): nothing exports"
	exit 0
fi
so="$build/client/.libs/$dlname"

grep -v '^#' "$list" | grep . > "$work/expected"
if LC_ALL=C sort -c "$work/expected" 2> "$work/sort" && [ -z "$(uniq -d "$work/expected")" ]; then
	ok "client/libgpiobroker.sym is sorted, one name a line, no repeats"
else
	not_ok "client/libgpiobroker.sym is sorted, one name a line, no repeats"
	sed 's/^/# /' "$work/sort"
fi

if ! nm -D --defined-only "$so" > "$work/nm" 2> "$work/nm.err"; then
	not_ok "nm -D reads $so"
	sed 's/^/# /' "$work/nm.err"
else
	# "ADDRESS TYPE NAME"; symbol versions (NAME@@V), if any, are part of the name.
	awk 'NF == 3 { print $3 }' "$work/nm" | LC_ALL=C sort > "$work/actual"
	if cmp -s "$work/expected" "$work/actual"; then
		ok "$dlname exports the $(wc -l < "$work/expected") symbols of client/libgpiobroker.sym"
	else
		not_ok "$dlname exports the symbols of client/libgpiobroker.sym"
		echo "# - listed, not exported (a lost GB_EXPORT? removing one breaks the ABI):"
		LC_ALL=C comm -23 "$work/expected" "$work/actual" | sed 's/^/#   - /'
		echo "# + exported, not listed (a stray GB_EXPORT? or list it and bump -version-info):"
		LC_ALL=C comm -13 "$work/expected" "$work/actual" | sed 's/^/#   + /'
	fi
fi

grep -o '\bgpiobroker_[a-z0-9_]*(' "$top/client/gpiobroker.h" | tr -d '(' | LC_ALL=C sort -u \
	> "$work/header"
missing=$(LC_ALL=C comm -23 "$work/header" "$work/expected")
if [ -z "$missing" ]; then
	ok "every function <gpiobroker.h> names is on the list"
else
	not_ok "every function <gpiobroker.h> names is on the list"
	echo "$missing" | sed 's/^/# not listed: /'
fi
echo "1..$n"
[ "$failed" -eq 0 ]
