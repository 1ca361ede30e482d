#!/bin/sh
# gpiod-broker --check-policy, offline, as an image build would run it: the shipped
# examples are valid with the users and groups of their sysusers.d snippet; a
# directory with three errors in two files gets three file:line: lines and exit 1;
# an unknown user is a warning, not an error. TAP output.
set -u
here=$(cd "$(dirname "$0")" && pwd)
broker=${GB_TEST_BROKER:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$work/out" "$work/err"; }
check() { if "$@"; then ok "$desc"; else not_ok "$desc"; fi; }

# An image's tree whose etc/passwd and etc/group hold what the snippet creates.
mkdir -p "$work/root/etc" "$work/examples" "$work/bad"
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

"$broker" --check-policy="$work/examples" --root="$work/root" > "$work/out" 2> "$work/err"
rc=$?
desc="the shipped examples: exit 0, no problem at all (every user and group in the snippet)"
check test "$rc" = 0 -a ! -s "$work/out"
desc="the summary counts the examples' entries"
check grep -q ': valid: 5 entries, 0 errors, 0 warnings' "$work/err"

# Without the snippet's users: warnings naming file:line, still exit 0.
"$broker" --check-policy="$work/examples" --root=/nonexistent > "$work/out" 2> "$work/err"
rc=$?
desc="unknown users and groups are warnings (file:line: warning:), exit 0"
check test "$rc" = 0 -a "$(grep -c '^[^:]*\.conf:[0-9]*: warning: unknown \(user\|group\)' "$work/out")" = 5

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
"$broker" --check-policy="$work/bad" --root="$work/root" > "$work/out" 2> "$work/err"
rc=$?
desc="three errors in two files: exit 1"
check test "$rc" = 1
desc="three file:line: lines, in order"
check test "$(grep -c '^[^:]*\.conf:[0-9]*: ' "$work/out")" = 3 -a \
	"$(sed 's|.*/||' "$work/out" | cut -d' ' -f1 | tr '\n' ' ')" = "10-a.conf:6: 10-a.conf:7: 20-b.conf:5: "
desc="the summary says rejected"
check grep -q ': rejected: 0 entries, 3 errors' "$work/err"

"$broker" --check-policy="$work/nothing-here" --root="$work/root" > "$work/out" 2> "$work/err"
rc=$?
desc="a missing directory is an error"
check test "$rc" = 1

# Without DIR: the directory the image's broker reads, not this build's sysconfdir.
mkdir -p "$work/root/etc/gpiod-broker/policy.d" "$work/root/opt/pol"
install -m 0644 "$work"/examples/*.conf "$work/root/etc/gpiod-broker/policy.d/"
"$broker" --check-policy --root="$work/root" > "$work/out" 2> "$work/err"
desc="--root alone checks SYSROOT/etc/gpiod-broker/policy.d, whatever the build's sysconfdir"
check grep -qx "$work/root/etc/gpiod-broker/policy.d: valid: 5 entries, 0 errors, 0 warnings" "$work/err"
"$broker" --check-policy --policy-dir=/opt/pol --root="$work/root" > "$work/out" 2> "$work/err"
desc="--policy-dir with --root names the directory in the image"
check grep -qx "$work/root/opt/pol: valid: 0 entries, 0 errors, 0 warnings" "$work/err"
echo "1..$n"
