#!/bin/sh
# The systemd unit as shipped: systemd-analyze verify accepts it, and its security
# exposure is at most 1.5 (libgpiod's gpio-manager unit scores 2.4). TAP output.
set -u
here=$(cd "$(dirname "$0")" && pwd)
sa=${SYSTEMD_ANALYZE:-systemd-analyze}
broker=${GB_TEST_BROKER:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$work/out"; }

# The unit as installed, but starting the broker just built (verify checks ExecStart).
busctl=$(command -v busctl || echo /usr/bin/busctl)
sed -e "s|@sbindir@/gpiod-broker|$broker|" -e "s|@busctl@|$busctl|" "$here/../../systemd/gpiod-broker.service.in" > "$work/gpiod-broker.service"

# verify WHAT UNIT-FILE...: systemd-analyze verify has nothing to say of them.
verify() {
	_what=$1; shift
	if "$sa" verify --man=no "$@" > "$work/out" 2>&1 && ! [ -s "$work/out" ]; then
		ok "systemd-analyze verify$_what: no complaints"
	else
		not_ok "systemd-analyze verify$_what: no complaints"
	fi
}
# exposure WHAT UNIT: systemd-analyze security --offline scores UNIT at 1.5 or less.
exposure() {
	"$sa" security --offline=yes "$work/$2" > "$work/out" 2>&1
	score=$(sed -n "s/.*Overall exposure level for $2: \([0-9.]*\).*/\1/p" "$work/out")
	if [ -n "$score" ] && "$sa" security --offline=yes --threshold=15 "$work/$2" >/dev/null 2>&1; then
		ok "systemd-analyze security$1: exposure $score <= 1.5"
	else
		not_ok "systemd-analyze security$1: exposure ${score:-unknown} <= 1.5"
	fi
}
verify "" "$work/gpiod-broker.service"
exposure "" gpiod-broker.service

# The slices' root helper (gpiod-broker-slices.service): verified beside the broker's
# unit, which wants it, and as hardened as a root helper that writes /sys and /dev
# can be (1.2 when written).
slices=${GB_TEST_SLICES:-$(dirname "$broker")/gpiod-broker-slices}
sed -e "s|@libexecdir@/gpiod-broker-slices|$slices|" "$here/../../systemd/gpiod-broker-slices.service.in" \
	> "$work/gpiod-broker-slices.service"
verify " of both units" "$work/gpiod-broker.service" "$work/gpiod-broker-slices.service"
exposure " of the slices' unit" gpiod-broker-slices.service

for key in Type=notify WatchdogSec= User=gpiod-broker DevicePolicy=closed \
	   "DeviceAllow=char-gpiochip rw" ProtectSystem=strict Restart=on-failure BusName=org.gpiodbroker1 \
	   FileDescriptorStoreMax= RuntimeDirectory=gpiod-broker RuntimeDirectoryPreserve=yes; do
	if grep -q "^$key" "$work/gpiod-broker.service"; then ok "unit has $key"; else echo "missing" > "$work/out"; not_ok "unit has $key"; fi
done
echo "1..$n"
[ "$failed" -eq 0 ]
