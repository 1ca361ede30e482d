#!/bin/sh
# make check: the daemon's layers depend downwards only (tools/check-layers), and
# check-layers itself finds the circles it is there for, in small trees made here:
# two modules that include each other's header, and two files that share one header
# and call each other (which no include shows). TAP.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

# The tree itself: check-layers' own lines, numbered on from here.
"$top/tools/check-layers" "$build" > "$work/tree.tap"
[ $? -eq 0 ] || failed=1
grep -v '^1\.\.' "$work/tree.tap"
n=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$work/tree.tap")
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; sed 's/^/# /' "$2"; }

# A tree at $1 with check-layers in it, and files given as NAME=TEXT.
tree() {
	dir=$1; shift
	mkdir -p "$dir/tools" "$dir/daemon/shared" "$dir/build/daemon"
	cp "$top/tools/check-layers" "$dir/tools/"
	for f in "$@"; do
		printf '%s\n' "${f#*=}" > "$dir/daemon/shared/${f%%=*}"
	done
}

# check-layers on the tree at $1 with its daemon/shared/*.c built into the archive
# it reads with nm: what it says in $work/out, its exit status in $r ("build" if the
# tree does not build).
check_built() {
	r=build
	for c in "$1"/daemon/shared/*.c; do
		${CC:-cc} -c -I"$1/daemon/shared" -o "$1/build/daemon/libbroker_a-$(basename "$c" .c).o" \
			"$c" > "$work/out" 2>&1 || return
	done
	ar rc "$1/build/daemon/libbroker.a" "$1"/build/daemon/*.o > "$work/out" 2>&1 || return
	"$1/tools/check-layers" "$1/build" > "$work/out" 2>&1
	r=$?
}

tree "$work/mutual" \
	'a.h=void a(void);' 'a.c=#include "a.h"
#include "b.h"
void a(void) { }' \
	'b.h=void b(void);' 'b.c=#include "b.h"
#include "a.h"
void b(void) { }'
"$work/mutual/tools/check-layers" > "$work/out" 2>&1
r=$?
if [ $r -eq 1 ] && grep -q '^not ok 2 - no circle of includes among daemon modules$' "$work/out" &&
   grep -Eq '^# daemon/shared/(a -> daemon/shared/b -> daemon/shared/a|b -> daemon/shared/a -> daemon/shared/b)$' \
	"$work/out" && grep -q '^#   daemon/shared/a.c:2: includes daemon/shared/b.h$' "$work/out"; then
	ok "two modules that include each other's header are a circle, with the includes named"
else
	not_ok "two modules that include each other's header are a circle, with the includes named (exit $r)" \
		"$work/out"
fi

# policy-parse.c and policy-files.c as they were: both of policy.h, each calling the
# other's function.
shared='x.h=void x_parse(void);
void x_lookup(void);
void x_load(void);'
tree "$work/shared" "$shared" \
	'x-parse.c=#include "x.h"
void x_parse(void) { x_lookup(); }' \
	'x-files.c=#include "x.h"
void x_lookup(void) { }
void x_load(void) { x_parse(); }'
check_built "$work/shared"
if [ "$r" = 1 ] && grep -q '^ok 1 - includes point down only' "$work/out" &&
   grep -q '^not ok 2 - no circle of includes or calls among daemon modules$' "$work/out" &&
   grep -q '^#   daemon/shared/x-parse.c: calls x_lookup() of daemon/shared/x-files.c$' "$work/out" &&
   grep -q '^#   daemon/shared/x-files.c: calls x_parse() of daemon/shared/x-parse.c$' "$work/out"; then
	ok "two files of one header that call each other are a circle, with the calls named"
else
	not_ok "two files of one header that call each other are a circle, with the calls named (exit $r)" \
		"$work/out"
fi

# The same with the helper in x.c: x-files.c calls x-parse.c, neither calls back.
tree "$work/down" "$shared" \
	'x.c=#include "x.h"
void x_lookup(void) { }' \
	'x-parse.c=#include "x.h"
void x_parse(void) { x_lookup(); }' \
	'x-files.c=#include "x.h"
void x_load(void) { x_parse(); }'
check_built "$work/down"
if [ "$r" = 0 ] && grep -q '^ok 2 - no circle of includes or calls among' "$work/out" &&
   grep -q '^ok 5 - calls point down only' "$work/out"; then
	ok "calls that point one way only are no circle"
else
	not_ok "calls that point one way only are no circle (exit $r)" "$work/out"
fi

# The library's ranks (HACKING.md, "Library"): transport.c calling up into open.c is
# refused, the other way round is not.
lib_tree() {
	dir=$1 body_t=$2 body_o=$3
	tree "$dir" 'x.h=void x(void);' 'x.c=void x(void) { }'
	mkdir -p "$dir/client" "$dir/build/client/.libs"
	printf '%s\n' 'void t(void);' 'void o(void);' > "$dir/client/internal.h"
	printf '#include "internal.h"\n%s\n' "$body_t" > "$dir/client/transport.c"
	printf '#include "internal.h"\n%s\n' "$body_o" > "$dir/client/open.c"
	for c in transport open; do
		${CC:-cc} -c -o "$dir/build/client/.libs/libgpiobroker_internal_la-$c.o" \
			"$dir/client/$c.c" > "$work/out" 2>&1 || return
	done
	check_built "$dir"
}
lib_tree "$work/lib-up" 'void t(void) { o(); }' 'void o(void) { }'
if [ "$r" = 1 ] && grep -q '^not ok [0-9]* - libgpiobroker calls point down and make no circle$' "$work/out" &&
   grep -q '^# client/transport.c: calls o() of client/open.c, a higher rank$' "$work/out"; then
	ok "a library file that calls a higher rank is refused, with the call named"
else
	not_ok "a library file that calls a higher rank is refused, with the call named (exit $r)" \
		"$work/out"
fi
lib_tree "$work/lib-down" 'void t(void) { }' 'void o(void) { t(); }'
if [ "$r" = 0 ] && grep -q '^ok [0-9]* - libgpiobroker calls point down and make no circle' "$work/out"; then
	ok "library calls down its ranks pass"
else
	not_ok "library calls down its ranks pass (exit $r)" "$work/out"
fi

echo "1..$n"
exit $failed
