# SPDX-License-Identifier: LGPL-2.1-or-later
"""The binding and gpiozero on another host: Broker(host=...) and GPIOBROKER_HOST
through a real OpenSSH server on the bench's loopback (tests/bench/sshd.sh), logged in
with the test users' keys, systemd-stdio-bridge at the far end; the link killed and
frozen under a client, and the client connecting again."""
import os
import signal
import subprocess
import threading
import time
import unittest

from gpiozero import LED, Button

import benchenv
import gpiobroker
from benchenv import BOB, connect_as, sim_pull, sim_value, slow, wait_until
from gpiobroker.pinfactory import GpiobrokerFactory

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SSHD = os.path.join(TOP, "tests", "bench", "sshd.sh")
ALICE_HOST = "gb-alice@localhost"
BOB_HOST = "gb-bob@localhost"
# gpiobroker_open_host()'s keepalive: ssh gives up after 4 silent intervals of 5 s; the
# documentation says "about 20 s"; 5 s more for a loaded bench.
SILENT_BOUND = 25


def sshd(call):
    return subprocess.run(["sh", "-c", '. "$0"; ' + call, SSHD], check=True,
                          stdout=subprocess.PIPE, universal_newlines=True).stdout


def setUpModule():
    benchenv.setUpModule()
    sshd("sshd_start")


def tearDownModule():
    sshd("sshd_stop")
    benchenv.tearDownModule()


def used(line):
    with gpiobroker.Broker() as b:
        return b.line_info(line)["used"]


def sessions(user):
    """The server's processes of @user's SSH logins (the far end of our links)."""
    return [int(p) for p in sshd("sshd_sessions " + user).split()]


def next_event(req, timeout):
    """The next event of @req but its initial states (the level, first); None if none
    came in time."""
    deadline = time.monotonic() + timeout * slow()
    while True:
        ev = req.read_event(timeout=max(0.0, deadline - time.monotonic()))
        if ev is None or ev.type != "initial-state":
            return ev


class TestRemote(unittest.TestCase):
    def test_request_over_ssh(self):
        with gpiobroker.Broker(host=ALICE_HOST) as b:
            # No file descriptor crosses SSH: no private connection.
            self.assertEqual(b.transport, "bus")
            self.assertTrue(b.connected)
            with b.request("alice-relay", output=True, value=True, label="remote") as relay:
                self.assertEqual(sim_value(3), 1)
                relay.value = False
                self.assertEqual(sim_value(3), 0)
                self.assertFalse(relay.value)
                with gpiobroker.Broker() as local:
                    self.assertEqual(local.line_info("alice-relay")["request_label"], "remote")
        self.assertTrue(wait_until(lambda: not used("alice-relay")))

    def test_the_broker_sees_the_login(self):
        # gb-bob's login is refused alice's line exactly as gb-bob is locally.
        with gpiobroker.Broker(host=BOB_HOST) as b:
            with self.assertRaises(gpiobroker.PermissionDeniedError) as remote:
                b.request("alice-relay", output=True)
        with connect_as(BOB) as b:
            with self.assertRaises(gpiobroker.PermissionDeniedError) as local:
                b.request("alice-relay", output=True)
        self.assertEqual(remote.exception.dbus_name, local.exception.dbus_name)
        self.assertEqual(remote.exception.strerror, local.exception.strerror)
        self.assertEqual(remote.exception.errno, local.exception.errno)

    def test_no_direct_request_over_ssh(self):
        with gpiobroker.Broker(host=ALICE_HOST) as b:
            with self.assertRaises(gpiobroker.NoFdPassingError) as cm:
                b.request("alarm", output=True, direct=True)
            self.assertEqual(cm.exception.dbus_name, "org.gpiodbroker1.Error.NoFdPassing")
            self.assertFalse(used("alarm"))
            # "Direct if you can": on the bus here.
            with b.request("alarm", output=True, value=True, direct="or-bus") as alarm:
                self.assertFalse(alarm.direct)
                self.assertEqual(sim_value(4), 1)

    def test_edges_stream_over_ssh(self):
        with gpiobroker.Broker(host=ALICE_HOST) as b:
            with b.request("doorbell", edge="both") as bell:
                sim_pull(1, True)
                ev = next_event(bell, 10)
                self.assertIsNotNone(ev, "no edge over the link")
                self.assertEqual((ev.type, ev.edge), ("edge", "rising"))
                benchenv.pace()
                sim_pull(1, False)
                ev = next_event(bell, 10)
                self.assertEqual((ev.type, ev.edge), ("edge", "falling"))

    def test_gpiozero_through_the_host_option(self):
        factory = GpiobrokerFactory(host=ALICE_HOST)
        try:
            with LED("porch-light", pin_factory=factory) as led:
                led.on()
                self.assertEqual(sim_value(0), 1)
                led.off()
                self.assertEqual(sim_value(0), 0)
            pressed = threading.Event()
            with Button("doorbell", pull_up=False, pin_factory=factory) as button:
                button.when_pressed = pressed.set
                sim_pull(1, True)
                self.assertTrue(pressed.wait(10 * slow()), "when_pressed not called")
                sim_pull(1, False)
        finally:
            factory.close()
        self.assertTrue(wait_until(lambda: not used("porch-light") and not used("doorbell")))

    def test_gpiozero_host_from_the_environment(self):
        os.environ["GPIOBROKER_HOST"] = ALICE_HOST
        try:
            factory = GpiobrokerFactory()
        finally:
            del os.environ["GPIOBROKER_HOST"]
        try:
            self.assertEqual(factory.host, ALICE_HOST)
            with LED("alice-relay", pin_factory=factory) as relay:
                relay.on()
                self.assertEqual(sim_value(3), 1)
        finally:
            factory.close()

    @staticmethod
    def kill_all(pids):
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def lose_link(self, how):
        """A client holding an output and an edge-detecting input over SSH loses its
        link (@how: SIGKILL or SIGSTOP of the server's end); returns the seconds until
        the client was told."""
        b = gpiobroker.Broker(host=ALICE_HOST)
        self.addCleanup(b.close)
        relay = b.request("alice-relay", output=True, value=True, label="remote")
        bell = b.request("doorbell", edge="both")
        self.assertEqual(sim_value(3), 1)
        ends = sessions("gb-alice")
        self.assertEqual(len(ends), 1, "one login of gb-alice: ours")
        self.addCleanup(self.kill_all, ends)
        start = time.monotonic()
        for pid in ends:
            os.kill(pid, how)
        ev = next_event(bell, SILENT_BOUND + 10)
        told = time.monotonic() - start
        self.assertIsNotNone(ev, "the loss of the link was not reported")
        self.assertEqual(ev.type, "broker-gone")
        self.assertEqual(ev.detail, "the connection to the bus was lost")
        self.assertFalse(b.connected)
        with self.assertRaises(gpiobroker.ConnectionLostError):
            relay.value = False
        if how == signal.SIGSTOP:
            # A frozen link: the far end lets go when sshd gives up (ClientAlive*)
            # or, here, when it dies.
            for pid in ends:
                os.kill(pid, signal.SIGKILL)
        # The broker saw its client go: the output is released.
        self.assertTrue(wait_until(lambda: not used("alice-relay"), 15))
        self.assertEqual(sim_value(3), 0)
        # Back, with the same lines and settings.
        self.assertEqual(b.reconnect(), 0)
        self.assertTrue(b.connected)
        ev = next_event(bell, 10)
        self.assertEqual(ev.type, "broker-restarted")
        self.assertEqual(sim_value(3), 1)
        sim_pull(1, True)
        ev = next_event(bell, 10)
        self.assertEqual((ev.type, ev.edge), ("edge", "rising"))
        sim_pull(1, False)
        relay.value = False
        self.assertEqual(sim_value(3), 0)
        relay.release()
        bell.release()
        return told

    def test_link_killed(self):
        told = self.lose_link(signal.SIGKILL)
        print("# link killed: told after %.2f s" % told)
        self.assertLess(told, 5 * slow())

    def test_link_frozen(self):
        told = self.lose_link(signal.SIGSTOP)
        print("# link frozen: told after %.2f s (bound %d s)" % (told, SILENT_BOUND))
        self.assertLess(told, SILENT_BOUND * slow())


if __name__ == "__main__":
    unittest.main()
