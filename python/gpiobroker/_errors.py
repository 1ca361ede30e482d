# SPDX-License-Identifier: LGPL-2.1-or-later
"""The exceptions of gpiobroker: one class per broker error.

Every class derives from :class:`Error`, an :class:`OSError` whose ``errno`` is
libgpiobroker's (EBUSY, ENOENT, EACCES...), ``dbus_name`` the broker's error name
(``org.gpiodbroker1.Error.Busy``, or ``""`` for a local failure) and ``strerror``
the broker's message, which says what to change. Where Python has a matching
built-in category the class derives from it too, so ``except PermissionError`` or
``except LookupError`` work as a Python programmer expects.
"""
import errno as _errno
import re as _re

__all__ = [
    "Error", "BusyError", "NotFoundError", "PermissionDeniedError", "InvalidArgsError",
    "NotOutputError", "ChipGoneError", "LimitsExceededError", "PolicyInvalidError",
    "BrokerUnavailableError", "CallTimeoutError", "ConnectionLostError", "NoFdPassingError",
]


class Error(OSError):
    """A call to the broker failed (base class)."""

    #: the broker's D-Bus error name, "" if the call failed locally
    dbus_name = ""

    def __init__(self, err, message, dbus_name=""):
        super().__init__(err, message)
        self.dbus_name = dbus_name


class BusyError(Error):
    """The line is held: by a broker request (``holder_request``, ``holder_label``,
    ``holder_uid``) or by a consumer outside the broker (``consumer``); the other
    attributes are None. Also: a watch limit reached."""

    _held = _re.compile(r'held by request (\S+) \(label "([^"]*)", uid (\d+)')
    _outside = _re.compile(r'in use outside the broker \(consumer "([^"]*)"\)')

    def __init__(self, err, message, dbus_name=""):
        super().__init__(err, message, dbus_name)
        self.holder_request = self.holder_label = self.holder_uid = self.consumer = None
        m = self._held.search(message or "")
        if m:
            self.holder_request, self.holder_label = m.group(1), m.group(2)
            self.holder_uid = int(m.group(3))
        m = self._outside.search(message or "")
        if m:
            self.consumer = m.group(1)

    @property
    def holder(self):
        """Who holds the line, in words: the label and uid, or the outside consumer."""
        if self.holder_label is not None:
            return "%s (uid %d)" % (self.holder_label, self.holder_uid)
        return self.consumer


class NotFoundError(Error, LookupError):
    """No such line, chip or offset; or the request is gone."""


class PermissionDeniedError(Error, PermissionError):
    """The policy does not allow it (the message names the missing rule), or the
    request belongs to someone else."""


class InvalidArgsError(Error, ValueError):
    """Bad label, impossible settings, index out of range, ambiguous name."""


class NotOutputError(Error):
    """Setting the value of an input."""


class ChipGoneError(Error):
    """The chip was unplugged: only release works."""


class LimitsExceededError(Error):
    """The broker's per-client or per-uid limits: release something first."""


class PolicyInvalidError(Error):
    """A policy reload found errors."""


class BrokerUnavailableError(Error, ConnectionError):
    """No broker on the bus (and no D-Bus activation)."""


class CallTimeoutError(Error, TimeoutError):
    """The broker did not answer within the connection's timeout."""


class ConnectionLostError(Error, ConnectionError):
    """The link to the bus is gone (an SSH connection closed or stopped answering):
    :meth:`Broker.reconnect` opens it again."""


class NoFdPassingError(Error):
    """The connection cannot pass file descriptors (a link over SSH): no direct
    request, no private connection."""


_BY_NAME = {
    "org.gpiodbroker1.Error.Busy": BusyError,
    "org.gpiodbroker1.Error.NotFound": NotFoundError,
    "org.gpiodbroker1.Error.InvalidArgs": InvalidArgsError,
    "org.gpiodbroker1.Error.PermissionDenied": PermissionDeniedError,
    "org.gpiodbroker1.Error.NotOutput": NotOutputError,
    "org.gpiodbroker1.Error.ChipGone": ChipGoneError,
    "org.gpiodbroker1.Error.PolicyInvalid": PolicyInvalidError,
    "org.gpiodbroker1.Error.LimitsExceeded": LimitsExceededError,
    "org.gpiodbroker1.Error.NoFdPassing": NoFdPassingError,
    "org.freedesktop.DBus.Error.UnknownObject": NotFoundError,
    "org.freedesktop.DBus.Error.ServiceUnknown": BrokerUnavailableError,
    "org.freedesktop.DBus.Error.NameHasNoOwner": BrokerUnavailableError,
}

_BY_ERRNO = {
    _errno.EBUSY: BusyError,
    _errno.ENOENT: NotFoundError,
    _errno.EACCES: PermissionDeniedError,
    _errno.EINVAL: InvalidArgsError,
    _errno.EPERM: NotOutputError,
    _errno.ENODEV: ChipGoneError,
    _errno.EDQUOT: LimitsExceededError,
    _errno.EHOSTDOWN: BrokerUnavailableError,
    _errno.ETIMEDOUT: CallTimeoutError,
    _errno.ENOTCONN: ConnectionLostError,
}


def from_broker(err, name, message):
    """The exception for a failed call (used by the C extension)."""
    cls = _BY_NAME.get(name) or _BY_ERRNO.get(err, Error)
    return cls(err, message, name)
