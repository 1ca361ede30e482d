#!/bin/sh
# gpiod-broker --check-policy, offline, as an image build would run it: the shipped
# examples are valid with the users and groups of their sysusers.d snippet; a
# directory with three errors in two files gets three file:line: lines and exit 1;
# an unknown user is a warning, not an error. With --root, everything is read in
# the image: its symlinks are followed inside it, never onto this machine, and a
# fifo, a device or an oversized file is a named error at once (each run has a
# timeout, so a hang fails). Slices are counted, and checked against the image's
# kernel config (boot/config-*) for the gpio-aggregator. TAP output.
set -u
here=$(cd "$(dirname "$0")" && pwd)
broker=${GB_TEST_BROKER:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$work/out" "$work/err"; }
check() { if "$@"; then ok "$desc"; else not_ok "$desc"; fi; }
# The broker, in rc; 124 if it is still running after 30 s (it blocked).
run() { timeout 30 "$broker" "$@" > "$work/out" 2> "$work/err"; rc=$?; }

# The units the examples' edge actions name, where an image has them.
units() {
	for _u in lib/systemd/system/poweroff.target etc/systemd/system/factory-reset.service \
		usr/lib/systemd/system/door-event@.service; do
		mkdir -p "$1/${_u%/*}" && : > "$1/$_u"
	done
}

# An image's tree whose etc/passwd and etc/group hold what the snippet creates.
mkdir -p "$work/root/etc" "$work/examples" "$work/bad"
units "$work/root"
echo "root:x:0:0:root:/root:/bin/sh" > "$work/root/etc/passwd"
echo "root:x:0:" > "$work/root/etc/group"
id=900
grep -v '^#' "$here/../../policy/examples/gpiod-broker-examples.sysusers" | while read -r t name rest; do
	id=$((id + 1))
	case "$t" in
	u) echo "$name:x:$id:$id::/nonexistent:/usr/sbin/nologin" >> "$work/root/etc/passwd"
	   echo "$name:x:$id:" >> "$work/root/etc/group" ;;
	g) echo "$name:x:$id:" >> "$work/root/etc/group" ;;
	esac
done
# The whole directory, as an integrator would copy it, with the mode an install
# gives (a checkout's may be group-writable): only the *.conf files are policy.
for f in "$here"/../../policy/examples/*; do
	install -m 0644 "$f" "$work/examples/"
done

run --check-policy="$work/examples" --root="$work/root"
desc="the shipped examples: exit 0, no problem at all (every user and group in the snippet), the two chips by identity noted as the target's"
check test "$rc" = 0 -a "$(grep -vc ': note: \[group usb-[a-z]*\]: chip = .* is resolved on the target' "$work/out")" = 0 \
	-a "$(grep -c . "$work/out")" = 2
desc="the summary counts the examples' entries"
check grep -q ': valid: 7 entries, 0 errors, 0 warnings' "$work/err"

# An edge action's unit missing from the image: an error naming it, exit 1.
rm "$work/root/etc/systemd/system/factory-reset.service"
run --check-policy="$work/examples" --root="$work/root"
desc="an edge action whose unit is not in the image: file:line: error naming the unit, exit 1"
check test "$rc" = 1 -a "$(grep -c '50-buttons.conf:[0-9]*: \[action factory-reset\]: unit factory-reset.service is not in the image' "$work/out")" = 1
units "$work/root"
run --polkit-rules --check-policy="$work/examples" --root="$work/root"
desc="--polkit-rules allows exactly the examples' jobs: power-off on press, the reset on a long press, both door events"
check test "$rc" = 0 -a "$(grep -c '": true' "$work/out")" = 4 -a \
	"$(grep -c '"start door-event@DOOR_SENSOR:\(rising\|falling\).service": true' "$work/out")" = 2

# Without the snippet's users: warnings naming file:line, still exit 0.
mkdir -p "$work/bare/etc"
units "$work/bare"
echo "root:x:0:0:root:/root:/bin/sh" > "$work/bare/etc/passwd"
echo "root:x:0:" > "$work/bare/etc/group"
run --check-policy="$work/examples" --root="$work/bare"
desc="unknown users and groups are warnings (file:line: warning:), exit 0"
check test "$rc" = 0 -a "$(grep -c '^[^:]*\.conf:[0-9]*: warning: unknown \(user\|group\)' "$work/out")" = 8

run --check-policy="$work/examples" --root="$work/nonexistent"
desc="a root that does not exist is an error, not an image without users"
check test "$rc" = 1 -a "$(cat "$work/out")" = "$work/nonexistent: cannot open the image's root: No such file or directory"

cat > "$work/bad/10-a.conf" <<'CONF'
[line a]
chip = gpiochip0
offset = 1
users = door-ctl
directions = input
colour = red
edges = sideways
CONF
cat > "$work/bad/20-b.conf" <<'CONF'
[line b]
line-name = x
users = door-ctl
directions = input
safe-state = off
CONF
chmod 0644 "$work/bad"/*.conf
run --check-policy="$work/bad" --root="$work/root"
desc="three errors in two files: exit 1"
check test "$rc" = 1
desc="three file:line: lines, in order"
check test "$(grep -c '^[^:]*\.conf:[0-9]*: ' "$work/out")" = 3 -a \
	"$(sed 's|.*/||' "$work/out" | cut -d' ' -f1 | tr '\n' ' ')" = "10-a.conf:6: 10-a.conf:7: 20-b.conf:5: "
desc="the summary says rejected"
check grep -q ': rejected: 0 entries, 3 errors' "$work/err"

run --check-policy="$work/nothing-here" --root="$work/root"
desc="a missing directory is an error"
check test "$rc" = 1

# Without DIR: the directory the image's broker reads, not this build's sysconfdir.
mkdir -p "$work/root/etc/gpiod-broker/policy.d" "$work/root/opt/pol"
install -m 0644 "$work"/examples/*.conf "$work/root/etc/gpiod-broker/policy.d/"
run --check-policy --root="$work/root"
desc="--root alone checks SYSROOT/etc/gpiod-broker/policy.d, whatever the build's sysconfdir"
check grep -qx "$work/root/etc/gpiod-broker/policy.d: valid: 7 entries, 0 errors, 0 warnings" "$work/err"
run --check-policy --policy-dir=/opt/pol --root="$work/root"
desc="--policy-dir with --root names the directory in the image"
check grep -qx "$work/root/opt/pol: valid: 0 entries, 0 errors, 0 warnings" "$work/err"

# An image as base-passwd and Yocto lay one out: etc/passwd behind a relative
# symlink, etc/group and the policy directory behind absolute ones, all meaning
# the image's files (none of these paths exists on this machine).
img=$work/img
mkdir -p "$img/etc/gpiod-broker" "$img/usr/share/base" "$img/usr/share/gpiod-broker/policy.d"
printf 'root:x:0:0::/root:/bin/sh\ndoor-ctl:x:901:901::/:/bin/false\n' > "$img/usr/share/base/passwd"
printf 'root:x:0:\ngb-image-only:x:902:\n' > "$img/usr/share/base/group"
ln -s ../usr/share/base/passwd "$img/etc/passwd"
ln -s /usr/share/base/group "$img/etc/group"
ln -s /usr/share/gpiod-broker/policy.d "$img/etc/gpiod-broker/policy.d"
cat > "$img/usr/share/gpiod-broker/policy.d/10-door.conf" <<'CONF'
[line door]
chip = gpiochip0
offset = 1
users = door-ctl, root
groups = gb-image-only, root
directions = input
CONF
chmod 0644 "$img/usr/share/gpiod-broker/policy.d/10-door.conf"

run --check-policy --root="$img"
desc="symlinks inside the image, relative and absolute, are followed inside it: exit 0, no problem"
check test "$rc" = 0 -a ! -s "$work/out" -a \
	"$(cat "$work/err")" = "$img/etc/gpiod-broker/policy.d: valid: 1 entry, 0 errors, 0 warnings"
run --check-policy="$img/etc/gpiod-broker/policy.d" --root="$img"
desc="an explicit DIR under SYSROOT/ is read in the image too"
check test "$rc" = 0 -a ! -s "$work/out"

# A copy of the image with one thing broken; then the check, which must say what.
# Its users and groups checked with the policy directory named as it is in the
# image, with no symlink on the way.
variant() { rm -rf "$work/v"; cp -a "$img" "$work/v"; }
vrun() { run --check-policy="$work/v/usr/share/gpiod-broker/policy.d" --root="$work/v"; }
expect() { # exit status 1 and exactly this one line (a file is said once, for two names)
	check test "$rc" = 1 -a "$(cat "$work/out")" = "$1"
}

variant; rm "$work/v/etc/group"; mkfifo "$work/v/etc/group"
vrun
desc="etc/group a fifo: a named error at once, exit 1"
expect "$work/v/etc/group: not a regular file (fifo)"

variant; rm "$work/v/etc/passwd"; mkdir "$work/v/dev"; mknod "$work/v/dev/zero" c 1 5
ln -s /dev/zero "$work/v/etc/passwd"
vrun
desc="etc/passwd -> /dev/zero, the image's device node: not a regular file, at once"
expect "$work/v/etc/passwd: not a regular file (character device)"
rm "$work/v/dev/zero"
vrun
desc="etc/passwd -> /dev/zero, which the image has not: not this machine's /dev/zero"
expect "$work/v/etc/passwd: cannot open: No such file or directory"
rm "$work/v/etc/passwd"; ln -s ../../../../../../../../dev/zero "$work/v/etc/passwd"
vrun
desc="etc/passwd -> ../../../../dev/zero: '..' stops at the image's root"
expect "$work/v/etc/passwd: cannot open: No such file or directory"

# This machine's file, with the group the policy names: an absolute symlink out
# of the image must not reach it.
mkdir "$work/host"
printf 'root:x:0:\ngb-image-only:x:4242:\n' > "$work/host/group"
variant; rm "$work/v/etc/group"; ln -s "$work/host/group" "$work/v/etc/group"
vrun
desc="etc/group -> a file of this machine: not read (the image has no such file)"
expect "$work/v/etc/group: cannot open: No such file or directory"

variant; rm "$work/v/etc/group"; mkdir "$work/v/etc/group"
vrun
desc="etc/group a directory: not a regular file"
expect "$work/v/etc/group: not a regular file (directory)"

variant; truncate -s 5M "$work/v/usr/share/base/group"
vrun
desc="etc/group over 4 MiB: refused, not read whole"
expect "$work/v/etc/group: larger than 4 MiB"

# A policy directory of this machine's, whose file would be an error if read.
mkdir "$work/hostpol"
printf '[line host-only]\n' > "$work/hostpol/10-host.conf"
chmod 0644 "$work/hostpol/10-host.conf"
variant; rm "$work/v/etc/gpiod-broker/policy.d"; ln -s "$work/hostpol" "$work/v/etc/gpiod-broker/policy.d"
run --check-policy --root="$work/v"
desc="the policy directory symlinked out of the image: not read from this machine"
expect "$work/v/etc/gpiod-broker/policy.d: cannot read policy directory: No such file or directory"

variant; pol=$work/v/usr/share/gpiod-broker/policy.d
mkfifo "$pol/20-fifo.conf"; ln -s /dev/zero "$pol/30-zero.conf"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$pol/40-sock.conf"
truncate -s 2M "$pol/50-big.conf"; chmod 0644 "$pol/50-big.conf"
run --check-policy --root="$work/v"
desc="policy files that are a fifo, a symlink, a socket, or over 1 MiB: named errors, at once"
d=$work/v/etc/gpiod-broker/policy.d
check test "$rc" = 1 -a "$(cat "$work/out")" = "$d/20-fifo.conf: not a regular file (fifo)
$d/30-zero.conf: not a regular file (symbolic link)
$d/40-sock.conf: not a regular file (socket)
$d/50-big.conf: larger than 1 MiB"

# A chip named by identity is the target's: noted, not an error, with --root.
mkdir -p "$work/ident"
printf '[line relay]\nchip = /dev/gpio/by-id/usb-FTDI_FT232H_A1-if00\noffset = 0\nusers = root\ndirections = output\npersistent = yes\nrestore-on-replug = yes\n\n[group inputs]\nchip = ID_VENDOR_ID=0403, ID_SERIAL_SHORT=B7\noffsets = 0-3\nusers = root\ndirections = input\n' \
	> "$work/ident/10-usb.conf"
run --check-policy="$work/ident" --root="$work/root"
desc="--root: entries by a /dev/gpio/by-id link and by udev properties are valid, each noted as resolved on the target"
check test "$rc" = 0 -a "$(cat "$work/out")" = "$work/ident/10-usb.conf:1: note: [line relay]: chip = /dev/gpio/by-id/usb-FTDI_FT232H_A1-if00 is resolved on the target, by udev, when the broker starts and as chips come and go
$work/ident/10-usb.conf:9: note: [group inputs]: chip = ID_VENDOR_ID=0403, ID_SERIAL_SHORT=B7 is resolved on the target, by udev, when the broker starts and as chips come and go"
printf '[line relay]\nchip = /dev/gpiochip0\noffset = 0\nusers = root\ndirections = output\n' > "$work/ident/10-usb.conf"
run --check-policy="$work/ident" --root="$work/root"
desc="--root: a chip path that is not a /dev/gpio/by-* link is an error at its line"
check test "$rc" = 1 -a "$(cat "$work/out")" = "$work/ident/10-usb.conf:2: 'chip' = '/dev/gpiochip0': a path must be a link under /dev/gpio/by-path/ or /dev/gpio/by-id/ (or name the chip gpiochipN, by label, or by udev properties, KEY=VALUE)"

# Slices, with --root: counted in the summary; the image's kernel (boot/config-*)
# must build the gpio-aggregator, or each slice is a warning; no config, a note.
sl=$work/sl
mkdir -p "$sl/etc" "$sl/pol"
echo "root:x:0:0:root:/root:/bin/sh" > "$sl/etc/passwd"
echo "root:x:0:" > "$sl/etc/group"
printf '[line lab-gpio]\nchip = gpiochip0\noffset = 3\nusers = root\ndirections = input, output\ndirection-may-change = yes\nedges = rising, falling, both\nbias = as-is, disabled, pull-up, pull-down\ndrive = push-pull, open-drain, open-source\n\n[slice lab]\nlines = lab-gpio\nusers = root\n' \
	> "$sl/pol/10-lab.conf"
chmod 0644 "$sl/pol/10-lab.conf"
run --check-policy="$sl/pol" --root="$sl"
desc="--root, a slice, no kernel config in the image: valid, a note that the aggregator could not be checked"
check test "$rc" = 0 -a "$(cat "$work/out")" = "$sl/pol/10-lab.conf:11: note: no kernel config in $sl/boot: the aggregator could not be checked"
desc="the summary counts the slices"
check grep -qx "$sl/pol: valid: 1 entry, 1 slice, 0 errors, 0 warnings" "$work/err"
mkdir -p "$sl/boot"
printf 'CONFIG_GPIOLIB=y\n# CONFIG_GPIO_AGGREGATOR is not set\n' > "$sl/boot/config-6.1"
run --check-policy="$sl/pol" --root="$sl"
desc="--root, the image's kernel without CONFIG_GPIO_AGGREGATOR: a warning at the slice, exit 0"
check test "$rc" = 0 -a "$(cat "$work/out")" = "$sl/pol/10-lab.conf:11: warning: this kernel has no gpio-aggregator (CONFIG_GPIO_AGGREGATOR): the slice cannot be made (boot/config-6.1)"
desc="the kernel's warning is counted"
check grep -qx "$sl/pol: valid: 1 entry, 1 slice, 0 errors, 1 warning" "$work/err"
printf 'CONFIG_GPIOLIB=y\nCONFIG_GPIO_AGGREGATOR=y\n' > "$sl/boot/config-6.1"
run --check-policy="$sl/pol" --root="$sl"
desc="--root, CONFIG_GPIO_AGGREGATOR=y: no problem at all"
check test "$rc" = 0 -a ! -s "$work/out" -a "$(cat "$work/err")" = "$sl/pol: valid: 1 entry, 1 slice, 0 errors, 0 warnings"
printf '[line narrow]\nchip = gpiochip0\noffset = 4\nusers = root\ndirections = input\n\n[slice narrow]\nlines = gpiochip0:4\nusers = root\n' \
	> "$sl/pol/20-narrow.conf"
chmod 0644 "$sl/pol/20-narrow.conf"
run --check-policy="$sl/pol" --root="$sl"
desc="a slice of a line whose entry does not allow everything: file:line: error naming what is missing, exit 1"
check test "$rc" = 1 -a "$(grep -c "^$sl/pol/20-narrow.conf:7: \[slice narrow\]: line 'gpiochip0:4' goes to a chip whose consumer can set anything, .* its entry \[line narrow\] ($sl/pol/20-narrow.conf:1) must allow all of it: missing directions = input, output; " "$work/out")" = 1
echo "1..$n"
