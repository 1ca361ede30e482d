# SPDX-License-Identifier: LGPL-2.1-or-later
"""gpiozero 1.6 through the broker: GPIOZERO_PIN_FACTORY=gpiobroker finds the pin
factory through its entry point; LEDs are seen in gpio-sim, Buttons fire on gpio-sim
pull changes. The factory's connection is gb-alice's."""
import os
import threading
import unittest

os.environ["GPIOZERO_PIN_FACTORY"] = "gpiobroker"

import gpiozero  # noqa: E402
from gpiozero import LED, Button, Device  # noqa: E402

import benchenv  # noqa: E402
import gpiobroker  # noqa: E402
from benchenv import (ALICE, chip_name, pace, run_as, sim_pull, sim_value, slow,  # noqa: E402
                      wait_until)


def setUpModule():
    benchenv.setUpModule()
    # The factory is made at the first device, through the entry point, with this
    # process's effective uid: gb-alice's connection from then on.
    os.setegid(ALICE)
    os.seteuid(ALICE)
    try:
        Device.pin_factory = Device._default_pin_factory()
    finally:
        os.seteuid(0)
        os.setegid(0)


def tearDownModule():
    Device.pin_factory.close()
    benchenv.tearDownModule()


def used(line):
    with gpiobroker.Broker() as b:
        return b.line_info(line)["used"]


class TestPinFactory(unittest.TestCase):
    def test_factory_from_the_entry_point(self):
        from gpiobroker.pinfactory import GpiobrokerFactory
        self.assertIsInstance(Device.pin_factory, GpiobrokerFactory)
        f = Device.pin_factory
        # One pin object per line, whatever the spelling.
        self.assertIs(f.pin("porch-light"), f.pin("%s:0" % chip_name()))
        self.assertIs(f.pin("porch"), f.pin("porch-light"))
        with self.assertRaises(gpiozero.PinInvalidPin):
            f.pin("no-such-line")

    def test_led_on_off(self):
        led = LED("porch-light")
        try:
            self.assertEqual(sim_value(0), 0)
            led.on()
            self.assertEqual(sim_value(0), 1)
            self.assertTrue(led.is_lit)
            led.off()
            self.assertEqual(sim_value(0), 0)
            led.toggle()
            self.assertEqual(sim_value(0), 1)
            with gpiobroker.Broker() as b:
                self.assertEqual(b.line_info("porch-light")["request_label"], "gpiozero")
        finally:
            led.close()
        self.assertTrue(wait_until(lambda: not used("porch-light")))

    def test_led_by_chip_offset_and_line_name(self):
        with LED("%s:5" % chip_name(), initial_value=True):
            self.assertEqual(sim_value(5), 1)
        with LED("siren") as siren:
            siren.on()
            self.assertEqual(sim_value(7), 1)
        self.assertTrue(wait_until(lambda: not used("siren")))

    def test_policy_refusal(self):
        # alice-relay is gb-alice's: allowed; its pin is an output only.
        with LED("alice-relay") as relay:
            relay.on()
            self.assertEqual(sim_value(3), 1)
        with self.assertRaises(gpiobroker.PermissionDeniedError):
            Button("alice-relay")

    def test_button_when_pressed(self):
        pressed, released = threading.Event(), threading.Event()
        button = Button("doorbell", pull_up=False)
        try:
            button.when_pressed = pressed.set
            button.when_released = released.set
            self.assertFalse(button.is_pressed)
            sim_pull(1, True)
            self.assertTrue(pressed.wait(5 * slow()), "when_pressed not called")
            self.assertTrue(button.is_pressed)
            pace()
            sim_pull(1, False)
            self.assertTrue(released.wait(5 * slow()), "when_released not called")
            self.assertFalse(button.is_pressed)
        finally:
            button.close()
        self.assertTrue(wait_until(lambda: not used("doorbell")))

    def test_button_wait_for_press(self):
        with Button("doorbell", pull_up=False) as button:
            t = threading.Timer(0.2, sim_pull, (1, True))
            t.start()
            self.assertTrue(button.wait_for_press(timeout=5 * slow()))
            t.join()
            sim_pull(1, False)

    def test_unprivileged_program_with_the_environment_variable(self):
        # What a user runs: GPIOZERO_PIN_FACTORY=gpiobroker in the environment.
        import subprocess
        script = ("import sys\n"
                  "from gpiozero import LED\n"
                  "led = LED('porch-light')\n"
                  "led.on()\n"
                  "print(type(led.pin_factory).__name__, flush=True)\n"
                  "sys.stdin.readline()\n")
        p = run_as(ALICE, ["-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                   text=True, env=dict(os.environ, GPIOZERO_PIN_FACTORY="gpiobroker"))
        try:
            self.assertEqual(p.stdout.readline().strip(), "GpiobrokerFactory")
            self.assertEqual(sim_value(0), 1)
            with gpiobroker.Broker() as b:
                self.assertEqual(b.line_info("porch-light")["request_label"], "gpiozero")
            p.stdin.write("\n")
            p.stdin.flush()
            self.assertEqual(p.wait(timeout=10 * slow()), 0)
        finally:
            if p.poll() is None:
                p.kill()
            p.stdin.close()
            p.stdout.close()
        self.assertTrue(wait_until(lambda: not used("porch-light")))


if __name__ == "__main__":
    unittest.main()
