#!/bin/sh
# The real-systemd bench: boot User-Mode Linux with systemd 252 as PID 1 on a Debian 12
# root, with gpiod-broker installed from its Debian packages, and check the unit, its
# hardening, D-Bus activation, restarts that keep an output, hot-plug, reload, stop,
# and the packages' upgrade, removal and purge under the real service manager and a
# real system bus daemon. TAP output.
#
#   tests/systemd/test-pid1.sh dbus-daemon|dbus-broker
#
# 1. the bench kernel (tests/bench/build-kernel) and the root tarball
#    (tests/systemd/build-root), both cached outside the tree;
# 2. the Debian packages of this source (tools/build-debs --nocheck), shared by both
#    variants, and the broker's package again under a later version for the upgrade;
# 3. a fresh copy of the root, the packages installed into it with dpkg (chroot), the
#    bench's units (guest/), and the bus daemon of the variant as dbus.service;
# 4. boot it (root=/dev/root rootfstype=hostfs init=/lib/systemd/systemd): a oneshot
#    unit makes the gpio-sim chips before sysinit, gb-test.service runs
#    guest/checks.sh after multi-user.target and powers off;
# 5. read the checks' TAP lines from the root and number them.
# Work files go to tests/systemd/ under the current (build) directory, or
# GB_SYSTEMD_WORKDIR; the root is deleted after a passing run, the console log and
# the guest's journal are kept.
set -u

variant=${1:-}
case $variant in
dbus-daemon|dbus-broker) ;;
*) echo "usage: $0 dbus-daemon|dbus-broker" >&2; exit 2 ;;
esac

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
work=${GB_SYSTEMD_WORKDIR:-$PWD/tests/systemd}
timeout=${GB_SYSTEMD_TIMEOUT:-900}
mkdir -p "$work"
work=$(cd "$work" && pwd)
root=$work/root-$variant
n=0; failed=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
# A setup step that failed: nothing else can run.
bail() {
	not_ok "$1"
	[ -n "${2:-}" ] && [ -f "$2" ] && tail -n 30 "$2" | sed 's/^/# /'
	echo "1..$n"
	exit 1
}
# make from a test run: the parent's jobserver is not ours.
submake() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "$@"; }

[ "$(id -u)" -eq 0 ] || bail "the real-systemd bench needs root (hostfs root with its owners, mmdebstrap)"
t0=$(date +%s)

kernel=$("$top/tests/bench/build-kernel" 2>"$work/kernel-build.log") \
	|| bail "bench kernel (tests/bench/build-kernel)" "$work/kernel-build.log"
tarball=$("$top/tests/systemd/build-root" 2>"$work/root-build.log") \
	|| bail "Debian 12 root (tests/systemd/build-root)" "$work/root-build.log"
t1=$(date +%s)

# One build of the Debian packages for both variants; the second waits for the first.
# GB_SYSTEMD_DEBS: a directory with packages built already (tools/run-tests gives
# those of tools/build-debs), used as they are.
debs=$work/debs
exec 8>"$work/build.lock"
flock 8
if [ -n "${GB_SYSTEMD_DEBS:-}" ]; then
	given=$(cd "$GB_SYSTEMD_DEBS" && pwd) || bail "GB_SYSTEMD_DEBS=$GB_SYSTEMD_DEBS: no such directory"
	key=$(cat "$given"/*.deb | sha256sum | cut -c1-16)
elif [ -e "$top/.git" ]; then
	# Built again when the source changed: the packages of another tree are not these.
	key=$(cd "$top" && git ls-files -z --cached --others --exclude-standard | xargs -0 sha256sum | sha256sum | cut -c1-16)
else
	key=$(cd "$top" && find . -path './_build*' -prune -o -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
fi
if [ "$(cat "$debs/upgrade/done" 2>/dev/null)" != "$key" ]; then
	rm -rf "$debs"
	if [ -n "${GB_SYSTEMD_DEBS:-}" ]; then
		mkdir -p "$debs/native" && cp "$given"/*.deb "$debs/native/"
	else
		"$top/tools/build-debs" --no-setup --nocheck --out="$debs" native > "$work/build.log" 2>&1 \
			|| bail "the Debian packages (tools/build-debs --nocheck)" "$work/build.log"
	fi
	# The upgrade: the same broker package again under a later version, as a rebuild
	# with a bumped version would be (the bench tests the package's scripts, not a
	# change of code).
	version=$(dpkg-deb -f "$debs"/native/gpiod-broker_*_*.deb Version)
	mkdir -p "$debs/upgrade"
	dpkg-deb -R "$debs"/native/gpiod-broker_"$version"_*.deb "$debs/repack" \
		&& sed -i "s/^Version: .*/Version: $version+bench1/" "$debs/repack/DEBIAN/control" \
		&& dpkg-deb -b "$debs/repack" "$debs/upgrade/" >> "$work/build.log" 2>&1 \
		|| bail "gpiod-broker $version+bench1 for the upgrade (dpkg-deb)" "$work/build.log"
	rm -rf "$debs/repack"
	echo "$key" > "$debs/upgrade/done"
fi
flock -u 8
exec 8>&-

rm -rf "$root"
mkdir -p "$root"
# Numeric owners: the root's users are not the host's.
tar -xf "$tarball" -C "$root" --numeric-owner || bail "unpack $tarball"
# Installed as an image builder does: dpkg in the root with no systemd and no udev
# running there (the packages' scripts enable the unit; it starts at boot).
mkdir -p "$root/gb-debs"
cp "$debs"/native/gpiod-broker_*.deb "$debs"/native/libgpiobroker0_*.deb \
	"$debs"/native/gpiobrokerctl_*.deb "$root/gb-debs/"
mkdir -p "$root/gb-debs/upgrade"
cp "$debs"/upgrade/*.deb "$root/gb-debs/upgrade/"
# The root leaves /usr/share/doc out (dpkg's path-exclude); the checks read the
# policy examples there.
chroot "$root" sh -c "dpkg --path-include='/usr/share/doc/gpiod-broker/*' -i /gb-debs/*.deb" \
	> "$work/install-$variant.log" 2>&1 \
	|| bail "dpkg -i gpiod-broker gpiobrokerctl libgpiobroker0 in the root" "$work/install-$variant.log"
ok "the Debian packages installed with dpkg into a fresh copy of the root ($tarball)"
# What their scripts did there, with no service manager running.
enabled=$(chroot "$root" systemctl is-enabled gpiod-broker.service 2>&1)
if [ "$enabled" = enabled ] && grep -q '^gpiod-broker:' "$root/etc/passwd"; then
	ok "in the image: the package's scripts made the gpiod-broker user and enabled the unit"
else
	not_ok "in the image: the package's scripts made the gpiod-broker user and enabled the unit"
	echo "# is-enabled: $enabled; passwd: $(grep '^gpiod-broker:' "$root/etc/passwd")"
fi
# Disabled again, so that the first client's call shows D-Bus activation; the guest
# enables it before the upgrade, and checks an install with systemd running last.
chroot "$root" systemctl disable --quiet gpiod-broker.service \
	|| bail "systemctl disable gpiod-broker.service in the image"
t2=$(date +%s)

g=$here/guest
sd=$root/etc/systemd/system
mkdir -p "$root/gb-test" "$sd/sysinit.target.wants" "$sd/multi-user.target.wants" \
	"$sd/gpiod-broker.service.d"
cp "$g/checks.sh" "$g/20-reload.conf" "$top/tests/bench/gpiosim.sh" "$root/gb-test/"
echo "$variant" > "$root/gb-test/variant"
cp "$g/gb-gpiosim.service" "$g/gb-test.service" "$g/gb-fired@.service" "$g/gb-other.service" "$sd/"
ln -s ../gb-gpiosim.service "$sd/sysinit.target.wants/gb-gpiosim.service"
ln -s ../gb-test.service "$sd/multi-user.target.wants/gb-test.service"
cp "$g/watchdog.conf" "$sd/gpiod-broker.service.d/50-bench-watchdog.conf"
cp "$g/10-bench.conf" "$root/etc/gpiod-broker/policy.d/10-bench.conf"
cp "$g/30-actions.conf" "$root/etc/gpiod-broker/policy.d/30-actions.conf"
cp "$g/40-slices.conf" "$root/etc/gpiod-broker/policy.d/40-slices.conf"

# The root has both bus daemons. Debian's dbus-broker package enables itself as
# dbus.service (an alias in /etc); without the alias dbus.service is dbus-daemon.
case $variant in
dbus-daemon) rm -f "$sd/dbus.service" "$root/etc/systemd/user/dbus.service" ;;
dbus-broker) [ "$(readlink "$sd/dbus.service")" = /lib/systemd/system/dbus-broker.service ] \
	|| bail "dbus-broker is dbus.service in the root (/etc/systemd/system/dbus.service)" ;;
esac

# con0: the console to a log file, no input; kernel messages (stderr) to another.
timeout -k 10 "$timeout" "$kernel" mem=768M root=/dev/root rootfstype=hostfs \
	rootflags="$root" rw init=/lib/systemd/systemd quiet \
	con0=null,fd:1 con=null ssl=null \
	</dev/null >"$work/console-$variant.log" 2>"$work/kernel-$variant.log"
status=$?
t3=$(date +%s)

res=$root/gb-test/results.tap
if [ -f "$res" ]; then
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		*) echo "$line" ;;
		esac
	done < "$res"
fi
[ -f "$root/gb-test/journal.txt" ] && cp "$root/gb-test/journal.txt" "$work/journal-$variant.txt"
if [ -f "$root/gb-test/finished" ]; then
	ok "the guest ran every check and powered off"
else
	not_ok "the guest ran every check and powered off (exit $status after $((t3 - t2)) s)"
	echo "# console ($work/console-$variant.log):"
	tr -d '\r' < "$work/console-$variant.log" | tail -n 40 | sed 's/^/# /'
	echo "# kernel:"
	tail -n 10 "$work/kernel-$variant.log" | sed 's/^/# /'
fi
echo "# times: kernel and root $((t1 - t0)) s, build and install $((t2 - t1)) s, boot and checks $((t3 - t2)) s"
echo "1..$n"
[ "$failed" -eq 0 ] && rm -rf "$root"
[ "$failed" -eq 0 ]
