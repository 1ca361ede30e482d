################################################################################
#
# gpiod-broker
#
################################################################################

GPIOD_BROKER_VERSION = 0.1.0
GPIOD_BROKER_SITE = https://github.com/gpiod-broker/gpiod-broker/releases/download/v$(GPIOD_BROKER_VERSION)
# The tarball "make distcheck" produces.
GPIOD_BROKER_SOURCE = gpiod-broker-$(GPIOD_BROKER_VERSION).tar.gz
GPIOD_BROKER_LICENSE = LGPL-2.1+ (broker, libgpiobroker), GPL-2.0+ (gpiobrokerctl)
GPIOD_BROKER_LICENSE_FILES = COPYING COPYING.GPL
GPIOD_BROKER_INSTALL_STAGING = YES
# jansson: gpiobrokerctl's --json.
GPIOD_BROKER_DEPENDENCIES = host-pkgconf systemd jansson
GPIOD_BROKER_CONF_OPTS = \
	--disable-tests \
	--disable-fuzzing \
	--with-systemdsystemunitdir=/usr/lib/systemd/system \
	--with-sysusersdir=/usr/lib/sysusers.d \
	--with-catalogdir=/usr/lib/systemd/catalog \
	--with-udevrulesdir=/usr/lib/udev/rules.d \
	--with-dbussystemservicedir=/usr/share/dbus-1/system-services

ifeq ($(BR2_PACKAGE_GPIOD_BROKER_DAEMON),y)
GPIOD_BROKER_CONF_OPTS += --enable-daemon
GPIOD_BROKER_DEPENDENCIES += libgpiod2

# The broker's static user and group, in the image itself (read-only root
# filesystems cannot wait for systemd-sysusers).
define GPIOD_BROKER_USERS
	gpiod-broker -1 gpiod-broker -1 * /nonexistent /sbin/nologin - GPIO line broker
endef

# "make install" puts the unit in place; enable it (its WantedBy=multi-user.target)
# so that the broker owns the chips from boot rather than from the first call
# (D-Bus activation).
define GPIOD_BROKER_INSTALL_INIT_SYSTEMD
	$(INSTALL) -d $(TARGET_DIR)/usr/lib/systemd/system/multi-user.target.wants
	ln -sf ../gpiod-broker.service \
		$(TARGET_DIR)/usr/lib/systemd/system/multi-user.target.wants/gpiod-broker.service
endef
else
GPIOD_BROKER_CONF_OPTS += --disable-daemon
endif

ifeq ($(BR2_PACKAGE_GPIOD_BROKER_PYTHON),y)
GPIOD_BROKER_CONF_OPTS += --enable-bindings-python \
	--with-python-moduledir=/usr/lib/python$(PYTHON3_VERSION_MAJOR)/site-packages
GPIOD_BROKER_CONF_ENV += PYTHON=$(HOST_DIR)/bin/python3
GPIOD_BROKER_DEPENDENCIES += python3 host-python3
else
GPIOD_BROKER_CONF_OPTS += --disable-bindings-python
endif

$(eval $(autotools-package))
