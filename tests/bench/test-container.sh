#!/bin/sh
# Containers on one host: a container given the host's bus socket (bind-mounted at
# the standard address, the rest of its /run its own) reaches the broker as the uid
# the host knows it by. Without a user namespace that is the uid it runs as; in a
# user namespace its root is the host's unprivileged user that made it, never root.
# The policy treats both as a local process of that uid. TAP output.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${GB_BENCH:-}" ] || exec "$here/run" --chip gbcont:4:0=door,1=fan -- "$here/$(basename "$0")" "$@"

broker=${GB_TEST_BROKER:?GB_TEST_BROKER must name the gpiod-broker binary}
ctl=${GB_TEST_CTL:?GB_TEST_CTL must name the gpiobrokerctl binary}
. "$here/gpiosim.sh"
. "$here/test-lib.sh"

# Line alpha is gb-alice's, beta gb-bob's; the other two lines are in no entry, so
# only root may use them (root-bypass is on by default).
mkdir -p /run/gb-container-policy
cat > /run/gb-container-policy/10-container.conf <<'POLICY'
[line alpha]
chip = gbcont
offset = 0
users = gb-alice
directions = input, output
persistent = yes

[line beta]
chip = gbcont
offset = 1
users = gb-bob
directions = input, output
persistent = yes
POLICY
"$broker" --log-level=warning --policy-dir=/run/gb-container-policy &
bpid=$!
wait_broker || not_ok "the broker is on the bus"

# What a container runtime does with the host's bus: a mount namespace with a fresh
# tmpfs on /run, and the socket bind-mounted at the standard address. The tmpfs
# hides the socket, so it is first bound to a file outside /run, then bound back
# from there. (Status 99 if that fails: no check expects it.)
setup='keep=$(mktemp -d /tmp/gb-container.XXXXXX) && : > "$keep/bus" &&
mount --bind /run/dbus/system_bus_socket "$keep/bus" &&
mount -t tmpfs -o mode=755 tmpfs /run && mkdir /run/dbus && : > /run/dbus/system_bus_socket &&
mount --bind "$keep/bus" /run/dbus/system_bus_socket && umount "$keep/bus" && rm -r "$keep" ||
exit 99
exec "$@"'

# contained KIND USER COMMAND...: COMMAND in a container, output (stdout+stderr) in
# $out, exit code in $rc. KIND "mount": a mount namespace only, COMMAND run as USER
# (root: as is), the way a runtime without user namespaces starts a container's
# process. KIND "user": USER itself makes a user namespace, in which it is root
# (mapped to USER outside, as rootless containers are), and a mount namespace the
# user namespace owns, so it may mount there.
contained() {
	_kind=$1; _user=$2; shift 2
	if [ "$_kind" = mount ]; then
		[ "$_user" = root ] || set -- setpriv --reuid="$_user" --regid="$_user" --init-groups -- "$@"
		out=$(unshare --mount --propagation private sh -c "$setup" container "$@" 2>&1)
	else
		out=$(as "$_user" unshare --user --map-root-user --mount sh -c "$setup" container "$@" 2>&1)
	fi
	rc=$?
}
# host USER ARGS...: the CLI as a local process of USER, for comparison.
host() { _user=$1; shift; out=$(as "$_user" "$ctl" "$@" 2>&1); rc=$?; }
# usable: the lines the broker lets the caller use, from the CLI's status in $out.
usable() { printf '%s\n' "$out" | sed -n 's/.*; lines you may use: //p'; }
tab=$(printf '\t')

# The reference: a local gb-alice asking for bob's line.
host gb-alice set beta=1
check "a local gb-alice is refused line beta (code 5)" 5 "$rc"
refused="$rc $out"
check "... the line stays low" 0 "$(sim_value gbcont 1)"

# (a) No user namespace: the container's process runs as gb-alice's uid.
contained mount root sh -c 'ls -A /run/dbus; [ -e /run/gb-container-policy ] || echo private'
check "the container's /run has the bus socket, none of the host's files" \
	"system_bus_socket private" "$(echo $out)"
contained mount gb-alice "$ctl" set alpha=1
check "container, no user namespace: gb-alice sets line alpha" 0 "$rc"
check "... the simulator sees it high" 1 "$(sim_value gbcont 0)"
contained mount gb-alice "$ctl" get --numeric alpha
check "... and gets it" "0 1" "$rc $out"
contained mount gb-alice "$ctl" requests
contains "... the broker holds it for uid 60001" "persistent${tab}uid=60001${tab}" "$out"
contained mount gb-alice "$ctl" set beta=1
check "... is refused line beta as a local gb-alice is" "$refused" "$rc $out"
check "... which stays low" 0 "$(sim_value gbcont 1)"
contained mount gb-alice "$ctl" release alpha
check "... releases line alpha" 0 "$rc"
check "... which goes back low" 0 "$(sim_value gbcont 0)"

# Root in such a container is the host's root: the policy's root-bypass.
contained mount root "$ctl" set beta=1
check "container, no user namespace: root may use line beta (root-bypass)" 0 "$rc"
check "... the simulator sees it high" 1 "$(sim_value gbcont 1)"
contained mount root "$ctl" requests
contains "... held for uid 0" "persistent${tab}uid=0${tab}" "$out"
contained mount root "$ctl" release beta
check "... and released" "0 0" "$rc $(sim_value gbcont 1)"

# (b) A user namespace: root inside, gb-alice (60001) to the bus daemon, which takes
# the peer's credentials from the socket, as the kernel maps them for the daemon.
# sd-bus's "AUTH EXTERNAL" names no uid, so the handshake cannot claim uid 0.
contained user gb-alice sh -c 'id -u; cat /proc/self/uid_map; ls -A /run/dbus'
check "in the user namespace the container's process is root, mapped to 60001" \
	"0 0 60001 1 system_bus_socket" "$(echo $out)"
contained user gb-alice "$ctl" set alpha=1
check "container in a user namespace: its root sets line alpha (gb-alice's)" 0 "$rc"
check "... the simulator sees it high" 1 "$(sim_value gbcont 0)"
contained user gb-alice "$ctl" requests
contains "... the broker holds it for uid 60001, not 0" "persistent${tab}uid=60001${tab}" "$out"
req=${out%%"$tab"*}
contained user gb-alice env GPIOBROKER_TRANSPORT=p2p "$ctl" get --numeric "$req"
check "... and gets it by its request over the broker's private connection (its fd passes in)" \
	"0 1" "$rc $out"
# By the line's name: the CLI knows the request for its own by the uid the bus
# recorded for it (60001), not by its getuid() (0 in there).
contained user gb-alice "$ctl" get --numeric alpha
check "... and gets it by the line's name" "0 1" "$rc $out"
contained user gb-alice "$ctl" status
check "... the broker grants it gb-alice's lines, not root's" alpha "$(usable)"
contains "... and status says it is uid 60001 to the bus" "you: uid 60001," "$out"
contained user gb-alice "$ctl" set beta=1
check "... is refused line beta as a local gb-alice is" "$refused" "$rc $out"
contained user gb-alice env GPIOBROKER_TRANSPORT=bus "$ctl" set beta=1
check "... also by the bus (GetConnectionCredentials)" "$refused" "$rc $out"
check "... the line stays low" 0 "$(sim_value gbcont 1)"
contained user gb-alice "$ctl" set gbcont:2=1
check "... and is refused a line only root may use" 5 "$rc"
contained user gb-alice "$ctl" release alpha
check "... releases line alpha" "0 0" "$rc $(sim_value gbcont 0)"

kill "$bpid"
wait "$bpid"
check "broker exits cleanly on SIGTERM" 0 "$?"
tap_done
