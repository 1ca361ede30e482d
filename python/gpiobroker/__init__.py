# SPDX-License-Identifier: LGPL-2.1-or-later
"""gpiobroker: GPIO lines from gpiod-broker, for Python programs.

A binding of libgpiobroker (the C library): flow control, following a restarted
broker and the meaning of the broker's errors are the library's, so a Python
program behaves as a C one. Lines are named as the broker names them: a policy
alias ("porch-light"), a kernel line name, "CHIP:OFFSET", or a line object path::

    import gpiobroker

    with gpiobroker.request("porch-light", output=True, value=True, label="app") as line:
        line.value = False

    with gpiobroker.request("doorbell", edge="both") as bell:
        for event in bell.events(timeout=10):
            print(event.edge, event.timestamp_ns)

Requests are managed: they end with the connection, however the program ends
(even SIGKILL). Errors are :class:`Error` subclasses (see gpiobroker._errors):
:class:`BusyError` names the holder, :class:`NotFoundError` is a LookupError,
:class:`PermissionDeniedError` a PermissionError.
"""
import asyncio as _asyncio
import os as _os
import sys as _sys
import time as _time

from . import _gpiobroker
from ._errors import (Error, BusyError, NotFoundError, PermissionDeniedError,  # noqa: F401
                      InvalidArgsError, NotOutputError, ChipGoneError, LimitsExceededError,
                      PolicyInvalidError, BrokerUnavailableError, CallTimeoutError,
                      ConnectionLostError, NoFdPassingError)
from ._gpiobroker import Request, Watch, LineInfoWatch, Event, library_version  # noqa: F401

__version__ = _gpiobroker.HEADER_VERSION

__all__ = [
    "Broker", "Request", "Watch", "LineInfoWatch", "Event", "request", "request_array",
    "watch", "line_info", "default_broker", "library_version", "Error", "BusyError",
    "NotFoundError", "PermissionDeniedError", "InvalidArgsError", "NotOutputError",
    "ChipGoneError", "LimitsExceededError", "PolicyInvalidError", "BrokerUnavailableError",
    "CallTimeoutError", "ConnectionLostError", "NoFdPassingError",
]

_SETTING_KEYS = ("direction", "value", "edge", "bias", "drive", "active_low", "debounce_us",
                 "event_clock")


def _default_label():
    name = _os.path.basename(_sys.argv[0] if _sys.argv and _sys.argv[0] else "") or "python"
    name = "".join(c for c in name if 32 < ord(c) < 127) or "python"
    return name[:31]


def _name(v):
    # Pythonic spellings ("pull_up") for the broker's ("pull-up").
    return v.replace("_", "-") if isinstance(v, str) else v


def _settings(output=None, direction=None, value=None, edge=None, bias=None, drive=None,
              active_low=None, debounce_us=None, event_clock=None):
    """One line's settings as the extension takes them (only what was given)."""
    if direction is None:
        if output is True:
            direction = "output"
        elif output is False or (edge is not None and edge != "none"):
            direction = "input"
    elif output is not None and (direction == "output") != bool(output):
        raise ValueError("output=%r contradicts direction=%r" % (output, direction))
    s = {}
    for key, v in (("direction", direction), ("edge", edge), ("bias", bias),
                   ("drive", drive), ("event_clock", event_clock)):
        if v is not None:
            s[key] = _name(v)
    if value is not None:
        s["value"] = bool(value)
    if active_low is not None:
        s["active_low"] = bool(active_low)
    if debounce_us is not None:
        s["debounce_us"] = int(debounce_us)
    return s


class Broker(_gpiobroker._Broker):
    """One connection to gpiod-broker.

    ``Broker()`` connects to the system bus, ``Broker("unix:path=...")`` to another
    bus, ``Broker(host="pi@board")`` to the system bus of another host over SSH
    (``[USER@]HOST[:PORT]``, as ``busctl -H``; the broker sees the SSH login user)
    and ``Broker(machine="name")`` to a local container's (as ``busctl -M``).
    ``timeout`` (seconds) bounds every call (default 25 s). A context manager:
    closing ends its managed requests and watches. One connection may be shared by
    threads (calls are serialised on it).

    When the link is lost (an SSH connection closed, or silent for about 20 s), each
    request and watch gets a ``"broker-gone"`` event, calls raise
    :class:`ConnectionLostError` and :attr:`connected` is False;
    :meth:`reconnect` opens it again.
    """

    def __init__(self, address=None, *, host=None, machine=None, timeout=None):
        try:
            super().__init__(address, host=host, machine=machine, timeout=timeout)
        except BrokerUnavailableError:
            raise
        except ConnectionError as e:
            where = (" at " + address if address else " of " + host if host
                     else " of container " + machine if machine else "")
            raise BrokerUnavailableError(e.errno, "cannot connect to the bus%s: %s"
                                         % (where, e.strerror)) from None

    def request(self, line, *, label=None, output=None, direction=None, value=None,
                edge=None, bias=None, drive=None, active_low=None, debounce_us=None,
                event_clock=None, persistent=False, direct=False):
        """Request one line; returns a :class:`Request` (index 0).

        ``output=True`` makes it an output at ``value`` from the moment it is held,
        ``output=False`` (or an ``edge``) an input; otherwise its direction stays as
        it is. ``edge``: "none", "rising", "falling", "both"; ``bias``: "as-is",
        "disabled", "pull-up", "pull-down"; ``drive``: "push-pull", "open-drain",
        "open-source". ``persistent=True``: the request belongs to the uid and
        outlives the program (see docs/dbus-api.md). ``direct=True``: values and
        edges go through the kernel's line fds, where the policy says
        ``direct = yes`` (else :class:`PermissionError`; docs/dbus-api.md, *Direct
        requests*); ``direct="or-bus"``: direct if the broker grants it, else the same
        request on the bus (always the bus over ``host=``, which cannot pass the fds).
        """
        s = _settings(output, direction, value, edge, bias, drive, active_low, debounce_us,
                      event_clock)
        return self._request_array([line], [s], label or _default_label(), persistent, direct)

    def request_array(self, lines, *, label=None, settings=None, persistent=False, direct=False,
                      **common):
        """Request several lines atomically (all or none); index i is ``lines[i]``.

        ``common`` keyword settings (as :meth:`request`) apply to every line;
        ``settings``, a list of one dict per line with the same keys, overrides them
        per line; ``value`` may be a list of one value per line.
        """
        lines = list(lines)
        values = common.pop("value", None)
        if settings is not None and len(settings) != len(lines):
            raise ValueError("settings: one dict per line")
        per_line = []
        for i in range(len(lines)):
            kw = dict(common)
            if isinstance(values, (list, tuple)):
                kw["value"] = values[i]
            elif values is not None:
                kw["value"] = values
            if settings is not None:
                kw.update(settings[i])
            per_line.append(_settings(**kw))
        return self._request_array(lines, per_line, label or _default_label(), persistent, direct)


def _reconfigure(req, index=None, **settings):
    """Change settings of line ``index`` (None: every line), keywords as
    Broker.request(); only the settings given change."""
    s = _settings(**settings)
    indices = range(len(req)) if index is None else [index]
    req._reconfigure([(i, s) for i in indices])


def _events(obj, timeout=None):
    """The events of a Request or Watch, until ``timeout`` seconds pass without one."""
    while True:
        ev = obj.read_event(timeout)
        if ev is None:
            return
        yield ev


class _AsyncEvents:
    """``async for event in request``: waits on the connection's fd in the loop."""

    def __init__(self, obj):
        self._obj = obj

    def __aiter__(self):
        return self

    async def __anext__(self):
        ev = await wait_event(self._obj)
        if ev is None:
            raise StopAsyncIteration
        return ev


async def wait_event(obj, timeout=None):
    """The next event of a Request or Watch, waiting in the running asyncio loop
    (the loop watches the connection's fileno()); None after ``timeout`` seconds or
    once the request is released."""
    loop = _asyncio.get_running_loop()
    deadline = None if timeout is None else _time.monotonic() + timeout
    while True:
        if getattr(obj, "released", False) or getattr(obj, "closed", False):
            return None
        ev = obj.read_event(0)
        if ev is not None:
            return ev
        left = None if deadline is None else deadline - _time.monotonic()
        if left is not None and left <= 0:
            return None
        fut = loop.create_future()
        fd = obj.fileno()
        loop.add_reader(fd, lambda: fut.done() or fut.set_result(None))
        try:
            # Bounded: a call from another thread may have read our signal already.
            await _asyncio.wait([fut], timeout=0.1 if left is None else min(left, 0.1))
        finally:
            loop.remove_reader(fd)


_gpiobroker._set_helpers(_AsyncEvents, _events, _reconfigure)

_default = None


def default_broker():
    """The process's shared connection, opened on first use (by request() & co):
    to the host named by the environment variable ``GPIOBROKER_HOST`` if it is set,
    else to the system bus."""
    global _default
    if _default is None or _default.closed:
        _default = Broker(host=_os.environ.get("GPIOBROKER_HOST") or None)
    return _default


def request(line, **kwargs):
    """Broker.request() on the shared connection: see :meth:`Broker.request`."""
    return default_broker().request(line, **kwargs)


def request_array(lines, **kwargs):
    """Broker.request_array() on the shared connection."""
    return default_broker().request_array(lines, **kwargs)


def watch(line):
    """Broker.watch() on the shared connection: a line's level and edges, not held."""
    return default_broker().watch(line)


def line_info(line):
    """Broker.line_info() on the shared connection."""
    return default_broker().line_info(line)
