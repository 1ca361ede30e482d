#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tools/check-abi: passes on the binaries just built, and fails on each excess it is
# meant to catch (a libsystemd symbol version after 252, a libgpiod symbol 2.1 lacks,
# another libgpiod soname), shown through an objdump stand-in. TAP.
set -u

top=$(cd "${srcdir:-.}" && pwd)
abi="$top/tools/check-abi"
build=$(dirname "$(dirname "${GB_TEST_BROKER:?}")")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gb-abi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
result() { # result EXPECTED-STATUS DESCRIPTION COMMAND...
	want=$1 d=$2; shift 2
	out=$("$@" 2>&1); got=$?
	n=$((n + 1))
	if [ "$got" -eq "$want" ]; then echo "ok $n - $d"; else failed=$((failed + 1)); echo "not ok $n - $d (status $got, expected $want)"; fi
	printf '%s\n' "$out" | sed 's/^/# /'
}

result 0 "the built broker, library and CLI pass" sh "$abi" "$build/daemon/gpiod-broker" \
	"$build/client/.libs/libgpiobroker.so" "$build/ctl/.libs/gpiobrokerctl"

fake() { # fake NAME NEEDED DYNAMIC-SYMBOL-LINES: an objdump that prints them
	cat > "$tmp/$1" <<EOT
#!/bin/sh
if [ "\$1" = -p ]; then printf '  NEEDED               %s\n' '$2'; exit 0; fi
cat <<'X'
$3
X
EOT
	chmod +x "$tmp/$1"
}
und() { printf '0000000000000000      DF *UND*\t0000000000000000 %s %s' "$1" "$2"; }

fake good libgpiod.so.3 "$(und '(LIBSYSTEMD_252)' sd_bus_call)
$(und ' Base       ' gpiod_chip_open)"
result 0 "LIBSYSTEMD_252 and a 2.1 libgpiod symbol pass" sh "$abi" --objdump "$tmp/good" x
fake sd libgpiod.so.3 "$(und '(LIBSYSTEMD_253)' sd_bus_emit_signal_to)"
result 1 "a LIBSYSTEMD_253 symbol fails" sh "$abi" --objdump "$tmp/sd" x
fake gpiod libgpiod.so.3 "$(und ' Base       ' gpiod_chip_get_frobnicator)"
result 1 "a libgpiod symbol 2.1 does not export fails" sh "$abi" --objdump "$tmp/gpiod" x
fake soname libgpiod.so.2 "$(und ' Base       ' gpiod_chip_open)"
result 1 "libgpiod.so.2 (libgpiod 1.x) fails" sh "$abi" --objdump "$tmp/soname" x
result 2 "an unreadable file is a usage error" sh "$abi" "$tmp/does-not-exist"

echo "1..$n"
[ "$failed" -eq 0 ]
