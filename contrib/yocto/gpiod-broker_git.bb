# Yocto / OpenEmbedded recipe for gpiod-broker. Copy it into a layer that can reach
# meta-oe (libgpiod) and a distro with systemd (DISTRO_FEATURES += "systemd").
# Checked without bitbake by tests/contrib/test-recipes.sh: the configure options
# exist, the FILES lists cover exactly what "make install" puts down, and the license
# and version agree with the project's.
#
# Packages: gpiod-broker (the broker, its unit, user, udev rule and bus policy),
# libgpiobroker (the client library), gpiobrokerctl (the CLI), plus the usual -dev
# (header, .pc, D-Bus interface description) and -doc. An application image that
# talks to a broker elsewhere needs only libgpiobroker: PACKAGECONFIG:remove = "daemon".
# PACKAGECONFIG:append = " python" adds ${PYTHON_PN}-gpiobroker, the Python module and
# its gpiozero pin factory (GPIOZERO_PIN_FACTORY=gpiobroker).
SUMMARY = "GPIO line broker on the system D-Bus (libgpiod v2)"
HOMEPAGE = "https://github.com/gpiod-broker/gpiod-broker"
SECTION = "console/utils"
# The broker and the library are LGPL-2.1-or-later, the CLI GPL-2.0-or-later (the
# sources' SPDX headers).
LICENSE = "LGPL-2.1-or-later & GPL-2.0-or-later"
LICENSE:${PN} = "LGPL-2.1-or-later"
LICENSE:libgpiobroker = "LGPL-2.1-or-later"
LICENSE:gpiobrokerctl = "GPL-2.0-or-later"
LIC_FILES_CHKSUM = "file://COPYING;md5=4fbd65380cdd255951079008b364516c \
                    file://COPYING.GPL;md5=b234ee4d69f5fce4486a80fdaf4a4263"

# The release tarball instead ("make distcheck" makes it):
#   SRC_URI = "https://github.com/gpiod-broker/gpiod-broker/releases/download/v${PV}/gpiod-broker-${PV}.tar.gz"
#   SRC_URI[sha256sum] = "..."   and S = "${WORKDIR}/gpiod-broker-${PV}"
SRC_URI = "git://github.com/gpiod-broker/gpiod-broker.git;protocol=https;branch=main"
# Pin a commit for a reproducible image.
SRCREV ?= "${AUTOREV}"
GPIOD_BROKER_VERSION = "0.1.0"
# Yocto 4.3 and later append the revision themselves; older ones need ${SRCPV}.
PV = "${GPIOD_BROKER_VERSION}+git"
S = "${WORKDIR}/git"

inherit autotools pkgconfig systemd useradd features_check \
    ${@bb.utils.contains('PACKAGECONFIG', 'python', 'python3native python3targetconfig', '', d)}

REQUIRED_DISTRO_FEATURES = "systemd"
# jansson: gpiobrokerctl's --json.
DEPENDS = "systemd jansson"

PACKAGECONFIG ??= "daemon"
# The tests need the build host's systemd-analyze and run there ("make check"),
# never on the target; enable them only to build them.
PACKAGECONFIG[daemon] = "--enable-daemon,--disable-daemon,libgpiod"
PACKAGECONFIG[tests] = "--enable-tests,--disable-tests,check"
PACKAGECONFIG[python] = "--enable-bindings-python --with-python-moduledir=${PYTHON_SITEPACKAGES_DIR},--disable-bindings-python,python3"

EXTRA_OECONF = " \
    --disable-fuzzing \
    --with-systemdsystemunitdir=${systemd_system_unitdir} \
    --with-sysusersdir=${nonarch_libdir}/sysusers.d \
    --with-catalogdir=${nonarch_libdir}/systemd/catalog \
    --with-udevrulesdir=${nonarch_base_libdir}/udev/rules.d \
    --with-dbussystemservicedir=${datadir}/dbus-1/system-services \
"

PACKAGES =+ "libgpiobroker gpiobrokerctl ${PYTHON_PN}-gpiobroker"
FILES:${PYTHON_PN}-gpiobroker = "${PYTHON_SITEPACKAGES_DIR}/gpiobroker ${PYTHON_SITEPACKAGES_DIR}/gpiobroker-*.egg-info"
RDEPENDS:${PYTHON_PN}-gpiobroker = "libgpiobroker python3-core"
FILES:libgpiobroker = "${libdir}/libgpiobroker.so.*"
FILES:gpiobrokerctl = "${bindir}/gpiobrokerctl ${datadir}/bash-completion/completions/gpiobrokerctl"
FILES:${PN} = " \
    ${sbindir}/gpiod-broker \
    ${libexecdir}/gpiod-broker-slices \
    ${sysconfdir}/gpiod-broker \
    ${systemd_system_unitdir}/gpiod-broker.service \
    ${systemd_system_unitdir}/gpiod-broker-slices.service \
    ${nonarch_libdir}/sysusers.d/gpiod-broker.conf \
    ${nonarch_libdir}/systemd/catalog/gpiod-broker.catalog \
    ${nonarch_base_libdir}/udev/rules.d/90-gpiod-broker.rules \
    ${nonarch_base_libdir}/udev/rules.d/61-gpiod-broker-gpiochip.rules \
    ${datadir}/dbus-1/system-services/org.gpiodbroker1.service \
    ${datadir}/dbus-1/system.d/org.gpiodbroker1.conf \
"
FILES:${PN}-dev += "${datadir}/dbus-1/interfaces"
RDEPENDS:${PN} = "dbus"

# The broker runs as this static user (also in sysusers.d, for images that run
# systemd-sysusers; useradd makes it exist in read-only images).
USERADD_PACKAGES = "${PN}"
GROUPADD_PARAM:${PN} = "--system gpiod-broker"
USERADD_PARAM:${PN} = "--system --no-create-home --home-dir /nonexistent --shell /sbin/nologin --gid gpiod-broker gpiod-broker"

SYSTEMD_PACKAGES = "${PN}"
SYSTEMD_SERVICE:${PN} = "${@bb.utils.contains('PACKAGECONFIG', 'daemon', 'gpiod-broker.service', '', d)}"
