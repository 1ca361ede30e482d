#!/bin/sh
# The journal catalog (systemd/gpiod-broker.catalog): journalctl compiles it, and it
# explains exactly the MESSAGE_IDs the broker logs (dbus/org.gpiodbroker1.h). TAP.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
n=0; failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }

ids=$(sed -n 's/^#define GB_MESSAGE_[A-Z_]* *"\([0-9a-f]*\)"$/\1/p' "$top/dbus/org.gpiodbroker1.h" | sort)
count=$(echo "$ids" | grep -c .)
if [ "$count" -gt 0 ] && [ "$(echo "$ids" | uniq | grep -c '^[0-9a-f]\{32\}$')" = "$count" ]; then
	ok "$count distinct 128-bit MESSAGE_IDs in dbus/org.gpiodbroker1.h"
else
	not_ok "distinct 128-bit MESSAGE_IDs in dbus/org.gpiodbroker1.h (got: $ids)"
fi
cat_ids=$(sed -n 's/^-- \([0-9a-f]*\)$/\1/p' "$top/systemd/gpiod-broker.catalog" | sort)
if [ "$cat_ids" = "$ids" ]; then
	ok "the catalog has an entry for each, and no other"
else
	not_ok "the catalog has an entry for each, and no other"
fi

if ! command -v journalctl > /dev/null 2>&1; then
	echo "1..$n"
	[ "$failed" -eq 0 ]
	exit
fi
mkdir -p "$work/usr/lib/systemd/catalog"
cp "$top/systemd/gpiod-broker.catalog" "$work/usr/lib/systemd/catalog/"
if journalctl --root="$work" --update-catalog > "$work/out" 2>&1 && ! [ -s "$work/out" ]; then
	ok "journalctl --update-catalog takes it without a complaint"
else
	not_ok "journalctl --update-catalog takes it without a complaint"; sed 's/^/# /' "$work/out"
fi
listed=$(journalctl --root="$work" --list-catalog 2>/dev/null | cut -d' ' -f1 | sort)
if [ "$listed" = "$ids" ]; then
	ok "journalctl --list-catalog lists each of them"
else
	not_ok "journalctl --list-catalog lists each of them (got: $listed)"
fi
echo "1..$n"
[ "$failed" -eq 0 ]
