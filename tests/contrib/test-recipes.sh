#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# The Yocto and Buildroot recipes (contrib/), checked without bitbake or Buildroot:
# every configure option they pass exists; the files they package are exactly what
# "make install" puts down in the same configuration (builds in a temporary
# directory); license, license file checksums, version and tarball name agree with
# the project's. TAP.
set -u

top=$(cd "${srcdir:-.}" && pwd)
bb="$top/contrib/yocto/gpiod-broker_git.bb"
brdir="$top/contrib/buildroot/package/gpiod-broker"
mk="$brdir/gpiod-broker.mk"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gb-recipes.XXXXXX")
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
MAKE=${MAKE:-make}

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
check() { # check DESCRIPTION COMMAND...: ok when COMMAND succeeds; its output as comments
	d=$1; shift
	if out=$("$@" 2>&1); then ok "$d"; else not_ok "$d" "$out"; fi
}

# A BitBake or make variable's value, continuation lines joined.
bbvar() { # bbvar FILE NAME: first assignment (=, ?=, ??=)
	awk -v name="$2" '
	{ line = line $0 }
	/\\$/ { sub(/\\$/, "", line); next }
	{
		rest = substr(line, length(name) + 1)
		if (!done && substr(line, 1, length(name)) == name && rest ~ /^[ \t]*[?]*=/) {
			sub(/^[ \t]*[?]*=[ \t]*/, "", rest); gsub(/^"|"[ \t]*$/, "", rest); print rest; done = 1
		}
		line = ""
	}' "$1"
}
mkvar() { # mkvar FILE NAME: every "=" and "+=" of NAME, joined
	awk -v name="$2" '
	{ line = line $0 }
	/\\$/ { sub(/\\$/, "", line); next }
	{
		rest = substr(line, length(name) + 1)
		if (substr(line, 1, length(name)) == name && rest ~ /^[ \t]*[+]?=/) {
			sub(/^[ \t]*[+]?=[ \t]*/, "", rest); printf "%s ", rest
		}
		line = ""
	}' "$1"
}

# Yocto's default directory layout (not usrmerge), as its autotools class passes it.
yocto_expand() {
	sed -e 's|${systemd_system_unitdir}|/lib/systemd/system|g' \
	    -e 's|${nonarch_base_libdir}|/lib|g' -e 's|${nonarch_libdir}|/usr/lib|g' \
	    -e 's|${libexecdir}|/usr/libexec|g' -e 's|${libdir}|/usr/lib|g' -e 's|${sbindir}|/usr/sbin|g' -e 's|${bindir}|/usr/bin|g' \
	    -e 's|${sysconfdir}|/etc|g' -e 's|${includedir}|/usr/include|g' \
	    -e 's|${docdir}|/usr/share/doc|g' -e 's|${mandir}|/usr/share/man|g' \
	    -e 's|${datadir}|/usr/share|g'
}
YOCTO_DIRS="--prefix=/usr --exec-prefix=/usr --bindir=/usr/bin --sbindir=/usr/sbin
 --libdir=/usr/lib --libexecdir=/usr/libexec --datadir=/usr/share --sysconfdir=/etc
 --localstatedir=/var --includedir=/usr/include --mandir=/usr/share/man
 --docdir=/usr/share/doc/gpiod-broker --disable-static"
BR_DIRS="--prefix=/usr --exec-prefix=/usr --sysconfdir=/etc --localstatedir=/var
 --disable-static"

version=$(sed -n 's/^AC_INIT(\[[^]]*\], *\[\([^]]*\)\].*/\1/p' "$top/configure.ac")
tarname=$(sed -n 's/^AC_INIT(\[[^]]*\], *\[[^]]*\], *\[[^]]*\], *\[\([^]]*\)\].*/\1/p' "$top/configure.ac")
# What ships: the broker (daemon/), its slices' helper (slices/), the library (client/)
# and the CLI (ctl/).
spdx_of() { grep -hoE 'SPDX-License-Identifier: [^ *]+' "$@" | sort -u | cut -d' ' -f2; }
spdx=$(grep -rhoE 'SPDX-License-Identifier: [^ *]+' "$top/daemon" "$top/client" "$top/ctl" | sort -u | cut -d' ' -f2)
spdx_set=$(echo $spdx | tr ' ' '\n' | sort | tr '\n' ' ')

# --- versions, license ---------------------------------------------------------------
check "configure.ac has a version ($version), the sources SPDX licenses ($spdx_set)" \
	test -n "$version" -a -n "$spdx"
v=$(bbvar "$bb" GPIOD_BROKER_VERSION)
check "Yocto GPIOD_BROKER_VERSION $v is the project's $version" test "$v" = "$version"
v=$(mkvar "$mk" GPIOD_BROKER_VERSION | tr -d ' ')
check "Buildroot GPIOD_BROKER_VERSION $v is the project's $version" test "$v" = "$version"
l=$(bbvar "$bb" LICENSE | tr -d '&' | tr -s ' ' '\n' | sort | tr '\n' ' ')
check "Yocto LICENSE ($l) is the sources' set ($spdx_set)" test "$l" = "$spdx_set"
l=$(bbvar "$bb" 'LICENSE:${PN}')
check "Yocto LICENSE:gpiod-broker $l is daemon/'s" test "$l" = "$(spdx_of "$top"/daemon/*.[ch])"
l=$(bbvar "$bb" LICENSE:libgpiobroker)
# The library is every file of client/.
lib_spdx=$(spdx_of "$top"/client/*.[ch])
check "Yocto LICENSE:libgpiobroker $l is the library's" test "$l" = "$lib_spdx"
l=$(bbvar "$bb" LICENSE:gpiobrokerctl)
check "Yocto LICENSE:gpiobrokerctl $l is the CLI's" test "$l" = "$(spdx_of "$top"/ctl/*.[ch])"
# Buildroot writes "-or-later" as "+" and may say which part has which.
l=$(mkvar "$mk" GPIOD_BROKER_LICENSE | sed 's/([^)]*)//g' | tr ',' '\n' | sed 's/ //g; s/+$/-or-later/' | sort | tr '\n' ' ')
check "Buildroot LICENSE ($l) is the sources' set ($spdx_set)" test "$l" = "$spdx_set"
check "COPYING is the LGPL 2.1" sh -c "grep -q 'GNU LESSER GENERAL PUBLIC LICENSE' '$top/COPYING' && grep -q 'Version 2.1, February 1999' '$top/COPYING'"
check "COPYING.GPL is the GPL 2" sh -c "grep -q 'GNU GENERAL PUBLIC LICENSE' '$top/COPYING.GPL' && grep -q 'Version 2, June 1991' '$top/COPYING.GPL'"
for lf in $(mkvar "$mk" GPIOD_BROKER_LICENSE_FILES); do
	sha=$(awk -v f="$lf" '$1 == "sha256" && $3 == f { print $2 }' "$brdir/gpiod-broker.hash")
	check "Buildroot LICENSE_FILES $lf exists, its sha256 in the hash file" \
		test -f "$top/$lf" -a "$sha" = "$(sha256sum < "$top/$lf" | cut -d' ' -f1)"
done
for e in $(bbvar "$bb" LIC_FILES_CHKSUM); do
	f=$(echo "$e" | sed -n 's|^file://\([^;]*\);md5=.*|\1|p')
	md5=${e##*md5=}
	check "Yocto LIC_FILES_CHKSUM: $f's md5" test -f "$top/$f" -a "$md5" = "$(md5sum < "$top/$f" | cut -d' ' -f1)"
done
check "every license the sources name has its text (COPYING, COPYING.GPL)" \
	test "$spdx_set" = "GPL-2.0-or-later LGPL-2.1-or-later "
src=$(mkvar "$mk" GPIOD_BROKER_SOURCE | tr -d ' ' | sed "s/\$(GPIOD_BROKER_VERSION)/$version/")
check "Buildroot SOURCE $src is the name make dist gives ($tarname-$version.tar.gz)" \
	sh -c "test '$src' = '$tarname-$version.tar.gz' && ! grep -q 'no-dist-gzip' '$top/configure.ac'"

# --- configure options ---------------------------------------------------------------
help=$("$top/configure" --help)
opts=$( { bbvar "$bb" EXTRA_OECONF; grep '^PACKAGECONFIG\[' "$bb" | cut -d'"' -f2 | tr ',' ' ';
	mkvar "$mk" GPIOD_BROKER_CONF_OPTS; } | tr ' ' '\n' | grep '^--' | sed 's/=.*//' | sort -u)
for o in $opts; do
	case "$o" in
	--enable-*) alt="--disable-${o#--enable-}" ;;
	--disable-*) alt="--enable-${o#--disable-}" ;;
	*) alt="$o" ;;
	esac
	check "option $o is in configure --help" sh -c "printf '%s\n' \"\$1\" | grep -qE -e '[[:space:]]('\"\$2\"'|'\"\$3\"')([[:space:]=[]|\$)'" - "$help" "$o" "$alt"
done

# --- builds --------------------------------------------------------------------------
# The builds below are VPATH builds of the sources. A source tree configured in place
# ("./configure && make && make check", what Debian's dh_auto_* do) cannot be one:
# configure refuses ("source directory already configured"), and its objects would
# be found through VPATH. They then build a copy of it, cleaned by its own
# "make distclean", as a release tarball would be.
src=$top
if [ -f "$top/config.status" ]; then
	src=$tmp/src
	(unset MAKEFLAGS MFLAGS MAKELEVEL; cp -a "$top/." "$src" && cd "$src" && $MAKE distclean) \
		> "$tmp/src.log" 2>&1 || { cat "$tmp/src.log"; echo "Bail out! cannot clean a copy of the configured sources"; exit 1; }
fi
build() { # build NAME CONFIGURE-ARGS...: configure, make, make install into $tmp/NAME/dest
	name=$1; shift
	mkdir -p "$tmp/$name/build"
	# Not the outer make's flags and variables (check_PROGRAMS=..., a jobserver).
	(unset MAKEFLAGS MFLAGS MAKELEVEL; cd "$tmp/$name/build" && "$src/configure" --quiet "$@" && $MAKE -j2 >/dev/null &&
		$MAKE install DESTDIR="$tmp/$name/dest" >/dev/null) > "$tmp/$name/log" 2>&1
}
# Everything installed: files, symlinks and empty directories, as absolute paths.
installed() {
	(cd "$1" && find . \( -type f -o -type l -o -type d -empty \) | sed 's|^\.||' | sort)
}
# covered PATH PATTERN...: a FILES entry covers a path it matches or a directory above it.
covered() {
	p=$1; shift
	for pat in "$@"; do
		# shellcheck disable=SC2254
		case "$p" in $pat|$pat/*) return 0 ;; esac
	done
	return 1
}
yocto_pkgconfig() { # the options of PACKAGECONFIG ??= minus $1 (enabled ones) and the rest disabled
	on=$(bbvar "$bb" 'PACKAGECONFIG' | tr ' ' '\n' | grep -vx "$1")
	grep '^PACKAGECONFIG\[' "$bb" | while IFS= read -r l; do
		f=$(echo "$l" | sed 's/^PACKAGECONFIG\[\([^]]*\)\].*/\1/')
		args=$(echo "$l" | cut -d'"' -f2)
		if echo "$on" | grep -qx "$f"; then echo "$args" | cut -d, -f1; else echo "$args" | cut -d, -f2; fi
	done | tr '\n' ' '
}
files_of() { # FILES:PKG, expanded
	bbvar "$bb" "FILES:$1" | yocto_expand
}
pn_files=$(files_of '${PN}')
dev_extra=$(grep '^FILES:${PN}-dev +=' "$bb" | cut -d'"' -f2 | yocto_expand)
all_files="$pn_files $(files_of libgpiobroker) $(files_of gpiobrokerctl) $dev_extra
 /usr/include /usr/lib/*.so /usr/lib/*.la /usr/lib/pkgconfig /usr/share/doc /usr/share/man"

yocto_check() { # yocto_check NAME: every installed path packaged, every FILES entry used
	list=$(installed "$tmp/$1/dest")
	stray=""
	for p in $list; do
		# shellcheck disable=SC2086
		covered "$p" $all_files || stray="$stray $p"
	done
	check "Yocto ($1): every installed file is in a package's FILES" test -z "$stray"
	[ -z "$stray" ] || echo "# not packaged:$stray"
}

# Yocto, default PACKAGECONFIG.
yargs="$YOCTO_DIRS $(bbvar "$bb" EXTRA_OECONF | yocto_expand) $(yocto_pkgconfig '')"
# shellcheck disable=SC2086
if build yocto $yargs; then
	ok "Yocto default configuration builds and installs ($(echo $yargs | tr -s ' '))"
	yocto_check yocto
	list=$(installed "$tmp/yocto/dest")
	unused=""
	for pat in $pn_files $(files_of libgpiobroker) $(files_of gpiobrokerctl) $dev_extra; do
		echo "$list" | while read -r p; do covered "$p" "$pat" && echo y; done | grep -q y || unused="$unused $pat"
	done
	check "Yocto: every FILES entry matches an installed file" test -z "$unused"
	[ -z "$unused" ] || echo "# matching nothing:$unused"
	nover=""
	for m in "$tmp"/yocto/dest/usr/share/man/man*/*; do
		head -n 1 "$m" | grep -q "\"gpiod-broker $version\"" || nover="$nover ${m##*/}"
	done
	check "installed man pages name version $version (from AC_INIT)" test -z "$nover"
	[ -z "$nover" ] || echo "# without it:$nover"
	unit=$(bbvar "$bb" 'SYSTEMD_SERVICE:${PN}' | sed "s/.*'daemon', '\([^']*\)'.*/\1/")
	check "Yocto SYSTEMD_SERVICE $unit is installed" test -f "$tmp/yocto/dest/lib/systemd/system/$unit"
	u=$(awk '$1 == "u" { print $2 }' "$top/systemd/gpiod-broker.sysusers")
	g=$(awk '$1 == "g" { print $2 }' "$top/systemd/gpiod-broker.sysusers")
	uu=$(bbvar "$bb" 'USERADD_PARAM:${PN}' | awk '{ print $NF }')
	gg=$(bbvar "$bb" 'GROUPADD_PARAM:${PN}' | awk '{ print $NF }')
	check "Yocto useradd user/group $uu/$gg are the sysusers.d ones ($u/$g)" test "$uu/$gg" = "$u/$g"
else
	not_ok "Yocto default configuration builds and installs" "$(tail -n 20 "$tmp/yocto/log")"
fi

# Yocto without the daemon, on a machine without libgpiod (nor Check): pkg-config
# finds only what the recipe's DEPENDS brings, so a dependency configure needs and
# the recipe lacks fails the build.
mkdir -p "$tmp/pc"
for dep in $(bbvar "$bb" DEPENDS); do
	pc=$dep
	[ "$dep" = systemd ] && pc=libsystemd
	pcdir=$(pkg-config --variable=pcfiledir "$pc") && cp "$pcdir/$pc.pc" "$tmp/pc/" ||
		not_ok "Yocto DEPENDS $dep: its $pc.pc is on the build host"
done
# Buildroot names the same packages, and its Config.in selects those it does not
# depend on otherwise (systemd is the init system).
deps=$(bbvar "$bb" DEPENDS | tr ' ' '\n' | sort | tr '\n' ' ')
brdeps=$(bbvar "$mk" GPIOD_BROKER_DEPENDENCIES | tr ' ' '\n' | grep -vx host-pkgconf | sort | tr '\n' ' ')
check "Buildroot DEPENDENCIES ($brdeps) are the Yocto recipe's DEPENDS ($deps)" test "$brdeps" = "$deps"
for dep in $brdeps; do
	[ "$dep" = systemd ] && continue
	sym=BR2_PACKAGE_$(echo "$dep" | tr 'a-z-' 'A-Z_')
	check "Buildroot Config.in selects $sym" grep -q "^[[:space:]]*select $sym\b" "$brdir/Config.in"
done
yargs="$YOCTO_DIRS $(bbvar "$bb" EXTRA_OECONF | yocto_expand) $(yocto_pkgconfig daemon)"
# shellcheck disable=SC2086
if PKG_CONFIG_LIBDIR="$tmp/pc" build yocto-nodaemon $yargs; then
	ok "Yocto PACKAGECONFIG without daemon builds without libgpiod"
	yocto_check yocto-nodaemon
	inpn=""
	for p in $(installed "$tmp/yocto-nodaemon/dest"); do
		# shellcheck disable=SC2086
		covered "$p" $pn_files && inpn="$inpn $p"
	done
	check "Yocto without daemon: the gpiod-broker package is empty" test -z "$inpn"
	check "Yocto without daemon: libgpiobroker and gpiobrokerctl are installed" \
		test -x "$tmp/yocto-nodaemon/dest/usr/bin/gpiobrokerctl" -a -f "$tmp/yocto-nodaemon/dest/usr/lib/libgpiobroker.so.0"
else
	not_ok "Yocto PACKAGECONFIG without daemon builds without libgpiod" "$(tail -n 20 "$tmp/yocto-nodaemon/log")"
fi

# Buildroot with BR2_PACKAGE_GPIOD_BROKER_DAEMON=y.
bargs="$BR_DIRS $(mkvar "$mk" GPIOD_BROKER_CONF_OPTS | sed 's/ifeq.*//') --enable-daemon"
check "Buildroot: the daemon option adds --enable-daemon, its absence --disable-daemon" \
	sh -c "awk '/^ifeq \\(\\\$\\(BR2_PACKAGE_GPIOD_BROKER_DAEMON\\),y\\)/,/^endif/' '$mk' | grep -q -e '--enable-daemon' && awk '/^else/,/^endif/' '$mk' | grep -q -e '--disable-daemon'"
# shellcheck disable=SC2086
if build buildroot $bargs; then
	ok "Buildroot configuration builds and installs"
	dest="$tmp/buildroot/dest"
	# The systemd hook's link, resolved in what make install put down.
	link=$(awk '/define GPIOD_BROKER_INSTALL_INIT_SYSTEMD/,/endef/' "$mk" | tr '\\\n\t' '   ' | sed -n 's/.*ln -sf \([^ ]*\) *\$(TARGET_DIR)\([^ ]*\).*/\1 \2/p')
	target=${link% *}
	at=${link#* }
	# (the link's directory is the hook's own: resolve ".." by name)
	d=$(dirname "$at")
	t=$target
	while [ "${t#../}" != "$t" ]; do d=$(dirname "$d"); t=${t#../}; done
	check "Buildroot systemd hook links $at to $target, which make install provides" \
		test -n "$link" -a -f "$dest$d/$t"
	u=$(awk '$1 == "u" { print $2 }' "$top/systemd/gpiod-broker.sysusers")
	bu=$(awk '/define GPIOD_BROKER_USERS/ { getline; print $1 " " $3 }' "$mk")
	check "Buildroot USERS ($bu) is the sysusers.d user and group" test "$bu" = "$u $u"
	check "Buildroot: the unit, sysusers.d and udev files are where its options put them" \
		test -f "$dest/usr/lib/systemd/system/gpiod-broker.service" -a -f "$dest/usr/lib/sysusers.d/gpiod-broker.conf" \
		-a -f "$dest/usr/lib/udev/rules.d/90-gpiod-broker.rules" -a -f "$dest/usr/share/dbus-1/system-services/org.gpiodbroker1.service"
else
	not_ok "Buildroot configuration builds and installs" "$(tail -n 20 "$tmp/buildroot/log")"
fi
# Every BR2_PACKAGE_GPIOD_BROKER_* the .mk reads is defined in Config.in.
undef=""
for s in $(grep -o 'BR2_PACKAGE_GPIOD_BROKER[A-Z_0-9]*' "$mk" | sort -u); do
	grep -q "^config $s\$" "$brdir/Config.in" || undef="$undef $s"
done
check "Buildroot: every BR2_PACKAGE_GPIOD_BROKER_* in the .mk is in Config.in" test -z "$undef"

echo "1..$n"
[ "$failed" -eq 0 ]
