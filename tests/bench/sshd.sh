# Shell helpers for a real OpenSSH server in the bench, on loopback, for the test
# users (sourced by shell tests after gpiosim.sh and test-lib.sh): a client reaching
# the bench's bus the way busctl -H does, through "ssh USER@HOST systemd-stdio-bridge".
#
#   sshd_start          start it; root in the bench then logs in as any test user with
#                       that user's key: ssh gb-alice@localhost CMD, busctl -H gb-bob@localhost
#   sshd_sessions USER  the pids of the server's processes of USER's logins
#   sshd_stop           stop it and its sessions
#
# Keys only: the bench's users have no password, and a password prompt would hang a
# test. Everything lives in $GB_SSH_DIR on the bench's tmpfs /run. The bench's root is
# the host's "/", so the client's configuration is not written to /etc/ssh or
# ~root/.ssh but mounted over them, in the bench's own mount namespace.

GB_SSH_DIR=/run/gb-ssh
# Not 22: in host mode the bench shares the host's network, where 22 may be taken.
GB_SSH_PORT=${GB_SSH_PORT:-2222}
GB_SSH_USERS="gb-alice gb-bob gb-carol"

_gb_ssh_mounts=""

# Undo sshd_start's mounts, newest first.
_sshd_unmount() {
	for _m in $_gb_ssh_mounts; do
		umount "$_m"
	done
	_gb_ssh_mounts=""
}

_sshd_fail() {
	echo "sshd_start: $*" >&2
	[ ! -s "$GB_SSH_DIR/sshd.log" ] || sed 's/^/sshd: /' "$GB_SSH_DIR/sshd.log" >&2
	_sshd_unmount
	return 1
}

sshd_start() {
	[ -x /usr/sbin/sshd ] || { _sshd_fail "no /usr/sbin/sshd (tools/setup-debian installs openssh-server)"; return 1; }
	for _c in ssh ssh-keygen ip; do
		command -v "$_c" > /dev/null || { _sshd_fail "no $_c in PATH"; return 1; }
	done
	[ -f /etc/ssh/ssh_config ] || { _sshd_fail "no /etc/ssh/ssh_config to mount the bench's over"; return 1; }
	# A UML guest boots with its loopback down (host mode: already up).
	ip link set lo up || { _sshd_fail "cannot bring up lo"; return 1; }

	mkdir -p "$GB_SSH_DIR/keys" "$GB_SSH_DIR/authorized" "$GB_SSH_DIR/empty" /run/sshd || return 1
	# sshd refuses a privilege separation directory or key path others may write.
	chmod 0755 "$GB_SSH_DIR" "$GB_SSH_DIR/authorized" /run/sshd
	chmod 0700 "$GB_SSH_DIR/keys"
	# The keys side by side: each ssh-keygen costs most of a second in a UML guest.
	_pids=""
	for _u in gb-bench $GB_SSH_USERS; do
		_f=$GB_SSH_DIR/keys/$_u
		[ "$_u" != gb-bench ] || _f=$GB_SSH_DIR/host_key
		ssh-keygen -q -t ed25519 -N '' -C "$_u" -f "$_f" &
		_pids="$_pids $!"
	done
	for _p in $_pids; do
		wait "$_p" || { _sshd_fail "ssh-keygen failed"; return 1; }
	done
	# The users' homes are the bench's shared /tmp, so their keys are listed here, root's
	# files that each user may read: sshd's StrictModes accepts root-owned, 0644.
	for _u in $GB_SSH_USERS; do
		cp "$GB_SSH_DIR/keys/$_u.pub" "$GB_SSH_DIR/authorized/$_u"
		chmod 0644 "$GB_SSH_DIR/authorized/$_u"
	done
	# ClientAlive*: a client that vanished (stopped, cut off) is noticed, not left to
	# TCP's timeouts. Measured in the UML bench, its session ends some 16 s after the
	# client stopped: about twice interval x (count + 1).
	cat > "$GB_SSH_DIR/sshd_config" <<EOF
ListenAddress 127.0.0.1
Port $GB_SSH_PORT
HostKey $GB_SSH_DIR/host_key
PidFile $GB_SSH_DIR/sshd.pid
AuthorizedKeysFile $GB_SSH_DIR/authorized/%u
AllowUsers $GB_SSH_USERS
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitRootLogin no
X11Forwarding no
PrintMotd no
ClientAliveInterval 2
ClientAliveCountMax 3
LogLevel VERBOSE
EOF
	# The client side: localhost is this sshd, each remote user's own key (%r, so root
	# logs in as any of them), the host key known in advance so nothing is asked.
	# HostName: "localhost" may resolve to ::1 first, where nothing listens.
	_key=$(cut -d' ' -f1,2 "$GB_SSH_DIR/host_key.pub")
	echo "[127.0.0.1]:$GB_SSH_PORT,[localhost]:$GB_SSH_PORT $_key" > "$GB_SSH_DIR/known_hosts"
	cat > "$GB_SSH_DIR/ssh_config" <<EOF
# The bench's ssh client configuration (tests/bench/sshd.sh), mounted over
# /etc/ssh/ssh_config inside the bench only.
Host localhost 127.0.0.1
	HostName 127.0.0.1
	Port $GB_SSH_PORT
	IdentityFile $GB_SSH_DIR/keys/%r
	IdentitiesOnly yes
	UserKnownHostsFile $GB_SSH_DIR/known_hosts
	GlobalKnownHostsFile /dev/null
	StrictHostKeyChecking yes
	BatchMode yes
	ForwardAgent no
	ForwardX11 no
EOF
	mount --bind "$GB_SSH_DIR/ssh_config" /etc/ssh/ssh_config \
		|| { _sshd_fail "cannot mount the client configuration over /etc/ssh/ssh_config"; return 1; }
	_gb_ssh_mounts=/etc/ssh/ssh_config
	# ssh reads root's ~/.ssh/config before that file, and writes known hosts there:
	# root's home is the host's, so an empty directory hides it (when it exists; ssh
	# creates none here, as it never has a host key to add).
	_home=$(getent passwd root | cut -d: -f6)
	if [ -d "$_home/.ssh" ]; then
		mount --bind "$GB_SSH_DIR/empty" "$_home/.ssh" \
			|| { _sshd_fail "cannot hide $_home/.ssh"; return 1; }
		_gb_ssh_mounts="$_home/.ssh $_gb_ssh_mounts"
	fi

	# sshd re-executes itself for each connection: it must be started by its full path.
	# It would detach before it listens, and a failure to listen would be lost: it runs
	# undetached (-D), the child of a subshell that leaves at once, so that no "wait"
	# of the test waits for it. It writes its pid file once it listens.
	rm -f "$GB_SSH_DIR/sshd.pid"
	_gb_sshd=$(/usr/sbin/sshd -D -f "$GB_SSH_DIR/sshd_config" -E "$GB_SSH_DIR/sshd.log" \
		< /dev/null > /dev/null 2>&1 & echo $!)
	for _i in $(seq 200); do
		[ ! -s "$GB_SSH_DIR/sshd.pid" ] || break
		kill -0 "$_gb_sshd" 2>/dev/null || { _sshd_fail "sshd exited"; return 1; }
		sleep 0.05
	done
	[ -s "$GB_SSH_DIR/sshd.pid" ] || { _sshd_fail "sshd does not listen after 10 s"; return 1; }
	# Only a real login shows that keys, users and client configuration all work (it
	# costs some 2 s in a UML guest).
	ssh -o ConnectTimeout=10 gb-alice@localhost true 2> "$GB_SSH_DIR/ssh.err" && return 0
	sed 's/^/ssh: /' "$GB_SSH_DIR/ssh.err" >&2
	_sshd_fail "ssh gb-alice@localhost does not log in"
}

# sshd_sessions USER: the server's processes that carry USER's logins (SIGKILL one
# to cut that link from the server's side, SIGSTOP to freeze it). Each connection is
# the listener's child "sshd: USER [priv]" (root), its child "sshd: USER@notty" (USER,
# the one that moves the bytes), then the command. Only this sshd's: in host mode the
# host's own sshd is in sight.
sshd_sessions() {
	_l=$(cat "$GB_SSH_DIR/sshd.pid" 2>/dev/null) || return 0
	_m=$(pgrep -d, -P "$_l" -x sshd) || return 0
	pgrep -P "$_m" -u "$1" -x sshd
}

# sshd_stop: the listener, each connection's monitor (the user's side goes with it),
# and the mounts.
sshd_stop() {
	if _l=$(cat "$GB_SSH_DIR/sshd.pid" 2>/dev/null); then
		_m=$(pgrep -P "$_l" -x sshd)
		kill "$_l" $_m 2>/dev/null
		for _i in $(seq 100); do
			kill -0 "$_l" 2>/dev/null || break
			sleep 0.05
		done
		rm -f "$GB_SSH_DIR/sshd.pid"
	fi
	_sshd_unmount
	return 0
}
