# SPDX-License-Identifier: LGPL-2.1-or-later
"""A gpiozero pin factory whose pins are lines held through gpiod-broker.

Registered as the ``gpiobroker`` entry point of ``gpiozero_pin_factories``, so::

    GPIOZERO_PIN_FACTORY=gpiobroker python3 -c 'from gpiozero import LED; LED("porch-light").on()'

works as any unprivileged user the broker's policy allows. Pins are named as the
broker names lines: a policy alias ("porch-light"), a kernel line name, or
"CHIP:OFFSET". A pin's line is requested from the broker when gpiozero first gives
it a function, and released when the device is closed (or the program ends: the
requests are managed). Edges (Button, when_changed...) come from one thread per
factory that processes the broker connection.
"""
import os
import select
import threading
import time
from weakref import WeakMethod, ref

from gpiozero.exc import (PinFixedPull, PinInvalidBounce, PinInvalidEdges, PinInvalidFunction,
                          PinInvalidPin, PinInvalidPull, PinInvalidState, PinSetInput,
                          PinPWMUnsupported)
from gpiozero.pins import Factory, Pin

import gpiobroker

__all__ = ["GpiobrokerFactory", "GpiobrokerPin"]

_PULLS = {"up": "pull-up", "down": "pull-down", "floating": "as-is"}
_EDGES = {"none": "none", "rising": "rising", "falling": "falling", "both": "both"}


class GpiobrokerFactory(Factory):
    """Pins through gpiod-broker: one connection to the broker, one event thread
    started with the first pin that reports edges. The broker is the system bus's;
    ``host`` (``[USER@]HOST[:PORT]``, reached over SSH as ``busctl -H`` does; default
    the environment variable ``GPIOBROKER_HOST``) makes it another host's, as
    gpiozero's pigpio factory takes ``host`` and ``PIGPIO_ADDR``; ``address`` a
    D-Bus address."""

    def __init__(self, address=None, label="gpiozero", host=None):
        super().__init__()
        if host is None and address is None:
            host = os.environ.get("GPIOBROKER_HOST") or None
        self.host = host
        self.broker = gpiobroker.Broker(address, host=host)
        self.label = label
        self.pins = {}
        self._pins_lock = threading.Lock()
        self._thread = None
        self._stop = threading.Event()

    def close(self):
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        self._thread = None
        with self._pins_lock:
            pins, self.pins = list(self.pins.values()), {}
        for pin in pins:
            pin.close()
        self.broker.close()

    def _resolve(self, spec):
        """(key, chip, offset) of a pin spec; key is "CHIP:OFFSET", the same for every
        spelling of one line (alias, line name, CHIP:OFFSET)."""
        spec = str(spec)
        try:
            path, chip, offset = self.broker.find_line(spec)
        except gpiobroker.NotFoundError as e:
            raise PinInvalidPin("no line %r at the broker: %s" % (spec, e.strerror)) from e
        return "%s:%d" % (chip, offset), chip, offset

    def reserve_pins(self, requester, *pins):
        # gpiozero reserves by the spec it was given and releases by pin.number:
        # both become the line's key, so two spellings of one line conflict.
        super().reserve_pins(requester, *[self._resolve(p)[0] for p in pins])

    def release_pins(self, reserver, *pins):
        keys = []
        for p in pins:
            try:
                keys.append(self._resolve(p)[0])
            except (PinInvalidPin, gpiobroker.Error, ValueError):
                keys.append(str(p))
        super().release_pins(reserver, *keys)

    def pin(self, spec):
        """The pin for ``spec`` (alias, line name, CHIP:OFFSET): the same object for
        every spelling of the same line."""
        key, chip, offset = self._resolve(spec)
        with self._pins_lock:
            pin = self.pins.get(key)
            if pin is None:
                pin = GpiobrokerPin(self, str(spec), chip, offset)
                self.pins[key] = pin
            return pin

    def ticks(self):
        # The broker's event timestamps are CLOCK_MONOTONIC: so are ticks.
        return time.monotonic()

    def ticks_diff(self, later, earlier):
        return later - earlier

    def _pin_closed(self, pin):
        with self._pins_lock:
            for k, v in list(self.pins.items()):
                if v is pin:
                    del self.pins[k]

    def _start_events(self):
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="gpiobroker-events",
                                            daemon=True)
            self._thread.start()

    def _run(self):
        fd = self.broker.fileno()
        while not self._stop.is_set():
            try:
                # Short waits: a call from another thread may have taken our
                # signals off the socket already, into the connection's queue.
                select.select([fd], [], [], 0.05)
                if self._stop.is_set():
                    break
                self.broker.process()
            except gpiobroker.ConnectionLostError:
                # The link went: the pins' calls say so from now on.
                break
            except (OSError, ValueError):
                if self._stop.is_set() or self.broker.closed:
                    break
                raise
            with self._pins_lock:
                pins = list(self.pins.values())
            for pin in pins:
                pin._dispatch()


class GpiobrokerPin(Pin):
    """One line through the broker. Supports input/output, pull (the line's bias),
    edges, bounce (the kernel's debounce) and when_changed; not PWM."""

    def __init__(self, factory, spec, chip, offset):
        super().__init__()
        self._factory = factory
        self._spec = spec
        self.chip = chip
        self.offset = offset
        #: the line as "CHIP:OFFSET" (gpiozero's pin number)
        self.number = "%s:%d" % (chip, offset)
        self._req = None
        self._function = "input"
        self._pull = "floating"
        self._edges = "none"
        self._bounce = None
        self._when_changed = None
        self._lock = threading.RLock()

    def __repr__(self):
        return "%s (%s:%d)" % (self._spec, self.chip, self.offset)

    # --- holding the line -------------------------------------------------------

    def _input_settings(self):
        s = {"output": False, "bias": _PULLS[self._pull], "edge": _EDGES[self._edges]}
        if self._bounce:
            s["debounce_us"] = int(self._bounce * 1e6)
        return s

    def _request(self, **settings):
        self._req = self._factory.broker.request(self._spec, label=self._factory.label,
                                                 **settings)

    def _ensure(self):
        with self._lock:
            if self._req is None:
                self._request(**self._input_settings())
            return self._req

    def close(self):
        with self._lock:
            self._when_changed = None
            req, self._req = self._req, None
        if req is not None:
            try:
                req.release()
            except (gpiobroker.Error, ValueError):
                pass  # the broker or connection went first: nothing is held
        self._factory._pin_closed(self)

    def output_with_state(self, state):
        # One step: the line is never an output at the wrong level.
        with self._lock:
            if self._req is None:
                self._request(output=True, value=bool(state))
            else:
                self._req.direction_output(bool(state))
            self._function = "output"

    def input_with_pull(self, pull):
        with self._lock:
            if pull not in _PULLS:
                raise PinInvalidPull("invalid pull %r for pin %r" % (pull, self))
            self._pull = pull
            self._function = "input"
            if self._req is None:
                self._request(**self._input_settings())
            else:
                self._req.reconfigure(**self._input_settings())

    # --- gpiozero's properties -------------------------------------------------------

    def _get_function(self):
        return self._function

    def _set_function(self, value):
        if value == "output":
            self.output_with_state(False)
        elif value == "input":
            self.input_with_pull(self._pull)
        else:
            raise PinInvalidFunction("invalid function %r for pin %r" % (value, self))

    def _get_state(self):
        return self._ensure().value

    def _set_state(self, value):
        if self._function != "output":
            raise PinSetInput("cannot set state of input pin %r" % self)
        if not isinstance(value, (bool, int)) or value not in (0, 1):
            raise PinInvalidState("invalid state %r for pin %r" % (value, self))
        self._ensure().value = bool(value)

    def _get_pull(self):
        return self._pull

    def _set_pull(self, value):
        if self._function != "input":
            raise PinFixedPull("cannot set pull on non-input pin %r" % self)
        self.input_with_pull(value)

    def _get_bounce(self):
        return self._bounce

    def _set_bounce(self, value):
        if value is not None and value < 0:
            raise PinInvalidBounce("bounce must be 0 or greater")
        with self._lock:
            self._bounce = value or None
            if self._req is not None and self._function == "input":
                self._req.reconfigure(debounce_us=int((value or 0) * 1e6))

    def _get_edges(self):
        return self._edges

    def _set_edges(self, value):
        if value not in _EDGES:
            raise PinInvalidEdges("invalid edge specification %r for pin %r" % (value, self))
        with self._lock:
            self._edges = value
            if self._req is not None and self._function == "input":
                self._req.reconfigure(**self._input_settings())
            if value != "none":
                self._factory._start_events()

    def _get_frequency(self):
        return None

    def _set_frequency(self, value):
        if value is not None:
            raise PinPWMUnsupported("PWM is not supported through gpiod-broker")

    def _get_when_changed(self):
        return None if self._when_changed is None else self._when_changed()

    def _set_when_changed(self, value):
        with self._lock:
            if value is None:
                self._when_changed = None
                return
            try:
                self._when_changed = WeakMethod(value)
            except TypeError:
                self._when_changed = ref(value)
            self._ensure()
            self._factory._start_events()

    # --- events (from the factory's thread) --------------------------------------------

    def _dispatch(self):
        req = self._req
        if req is None or req.released:
            return
        for ev in req.pending_events():
            if ev.type != "edge":
                continue
            cb = self._when_changed
            method = cb() if cb is not None else None
            if method is None:
                if cb is not None:
                    self._when_changed = None
                continue
            method(ev.timestamp_ns / 1e9, ev.value)
