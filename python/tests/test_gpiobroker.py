# SPDX-License-Identifier: LGPL-2.1-or-later
"""The gpiobroker binding against the real broker on the bench: values checked in
gpio-sim, edges made with its pulls, callers as the bench's users."""
import asyncio
import errno
import os
import signal
import threading
import time
import unittest

import benchenv
import gpiobroker
from benchenv import (ALICE, BOB, CAROL, BrokerProcess, chip_name, connect_as, pace, run_as,
                      sim_pull, sim_value, slow, wait_until)
from benchenv import setUpModule, tearDownModule  # noqa: F401 (unittest calls them)

HERE = os.path.dirname(os.path.abspath(__file__))


def used(b, line):
    return b.line_info(line)["used"]


class TestRequest(unittest.TestCase):
    def setUp(self):
        self.alice = connect_as(ALICE)
        self.bob = connect_as(BOB)

    def tearDown(self):
        self.alice.close()
        self.bob.close()

    def test_output_in_a_with_block(self):
        with self.alice.request("porch-light", output=True, value=True, label="app") as line:
            self.assertEqual(sim_value(0), 1)
            self.assertTrue(line.value)
            line.value = False
            self.assertEqual(sim_value(0), 0)
            self.assertFalse(line.value)
            self.assertEqual(line.lines, [(chip_name(), 0)])
            self.assertEqual(len(line), 1)
            self.assertTrue(line.path.startswith("/org/gpiodbroker1/request/"))
            self.assertEqual(self.bob.line_info("porch-light")["request_label"], "app")
        self.assertTrue(line.released)
        self.assertFalse(used(self.bob, "porch-light"))
        with self.assertRaises(ValueError):
            line.value = True
        # What the broker no longer has is an error; what the object knows is not.
        for attr in ("path", "lines", "persistent", "direct", "events_lost"):
            with self.assertRaisesRegex(ValueError, "released", msg=attr):
                getattr(line, attr)
        self.assertIs(line.broker, self.alice)

    def test_module_level_request(self):
        # The shared connection of the process (here root's).
        with gpiobroker.request("porch-light", output=True, value=True, label="app") as line:
            self.assertEqual(sim_value(0), 1)
            line.value = False
            self.assertEqual(sim_value(0), 0)
        self.assertFalse(gpiobroker.line_info("porch-light")["used"])

    def test_line_by_name_and_chip_offset(self):
        with self.alice.request("%s:2" % chip_name(), output=True, value=True) as line:
            self.assertEqual(sim_value(2), 1)
        with self.alice.request("spare", output=True, value=False) as line:
            self.assertEqual(sim_value(2), 0)
            self.assertEqual(line.lines[0][1], 2)

    def test_busy_names_the_holder(self):
        with self.alice.request("spare", output=True, label="alice-app"):
            with self.assertRaises(gpiobroker.BusyError) as cm:
                self.bob.request("spare", output=True, label="bob-app")
            e = cm.exception
            self.assertEqual(e.errno, errno.EBUSY)
            self.assertEqual(e.dbus_name, "org.gpiodbroker1.Error.Busy")
            self.assertEqual(e.holder_label, "alice-app")
            self.assertEqual(e.holder_uid, ALICE)
            self.assertIn("alice-app", e.holder)
            self.assertIsInstance(e, OSError)

    def test_unknown_line_is_a_lookup_error(self):
        with self.assertRaises(LookupError) as cm:
            self.alice.request("no-such-line", output=True)
        self.assertIsInstance(cm.exception, gpiobroker.NotFoundError)
        self.assertEqual(cm.exception.errno, errno.ENOENT)
        with self.assertRaises(LookupError):
            self.alice.line_info("no-such-line")

    def test_policy_refusal_is_a_permission_error(self):
        with self.assertRaises(PermissionError) as cm:
            self.bob.request("alice-relay", output=True)
        self.assertIsInstance(cm.exception, gpiobroker.PermissionDeniedError)
        self.assertEqual(cm.exception.dbus_name, "org.gpiodbroker1.Error.PermissionDenied")
        with self.alice.request("alice-relay", output=True, value=True):
            self.assertEqual(sim_value(3), 1)

    def test_bad_arguments(self):
        with self.assertRaises(ValueError) as cm:
            self.alice.request("spare", output=True, label="x" * 40)
        self.assertIsInstance(cm.exception, gpiobroker.InvalidArgsError)
        with self.assertRaises(ValueError):
            self.alice.request("spare", edge="sideways")
        with self.assertRaises(TypeError):
            self.alice.request(3)
        with self.assertRaises(ValueError):
            self.alice.request("spare", output=True, direction="input")

    def test_request_array(self):
        lines = ["spare", "alarm", "motor"]
        with self.alice.request_array(lines, output=True, value=[True, False, True],
                                      label="array") as req:
            self.assertEqual([sim_value(o) for o in (2, 4, 5)], [1, 0, 1])
            self.assertEqual(req.get_values(), [True, False, True])
            req.set_values([False, True, False])
            self.assertEqual([sim_value(o) for o in (2, 4, 5)], [0, 1, 0])
            req.set_values({2: True})
            self.assertEqual(sim_value(5), 1)
            req.set_value(0, True)
            self.assertTrue(req.get_value(0))
            with self.assertRaises(IndexError):
                req.get_value(3)
        # Atomic: one line busy, none is held.
        with self.bob.request("motor", output=True, label="bob"):
            with self.assertRaises(gpiobroker.BusyError):
                self.alice.request_array(lines, output=True)
            self.assertFalse(used(self.bob, "spare"))

    def test_direct_request(self):
        with self.alice.request("alarm", output=True, value=True, direct=True) as line:
            self.assertTrue(line.direct)
            self.assertEqual(sim_value(4), 1)
            line.value = False
            self.assertEqual(sim_value(4), 0)
            self.assertFalse(line.value)
        self.assertFalse(used(self.bob, "alarm"))
        with self.alice.request("porch-light", output=True) as line:
            self.assertFalse(line.direct)
        # Where the policy does not say "direct = yes".
        with self.assertRaises(PermissionError):
            self.alice.request("porch-light", output=True, direct=True)

    def test_direction_and_reconfigure(self):
        with self.alice.request("motor", output=False, label="dir") as req:
            with self.assertRaises(gpiobroker.NotOutputError):
                req.value = True
            req.direction_output(True)
            self.assertEqual(sim_value(5), 1)
            self.assertEqual(self.bob.line_info("motor")["direction"], "output")
            req.direction_input()
            sim_pull(5, True)
            self.assertTrue(wait_until(lambda: req.value))
            req.reconfigure(output=True, value=False)
            self.assertEqual(sim_value(5), 0)
            req.reconfigure(0, output=False, bias="pull_up")
            self.assertEqual(self.bob.line_info("motor")["direction"], "input")
            sim_pull(5, False)


class TestEvents(unittest.TestCase):
    def setUp(self):
        sim_pull(1, False)
        self.bob = connect_as(BOB)
        self.carol = connect_as(CAROL)

    def tearDown(self):
        self.bob.close()
        self.carol.close()

    def test_iterator_with_timeout(self):
        with self.bob.request("doorbell", edge="both", label="bell") as bell:
            first = bell.read_event(timeout=5 * slow())
            self.assertEqual(first.type, "initial-state")
            self.assertFalse(first.value)
            sim_pull(1, True)
            ev = bell.read_event(timeout=5 * slow())
            self.assertEqual((ev.type, ev.edge, ev.value, ev.index), ("edge", "rising", True, 0))
            self.assertGreater(ev.timestamp_ns, 0)
            pace()
            sim_pull(1, False)
            ev = bell.read_event(timeout=5 * slow())
            self.assertEqual(ev.edge, "falling")
            # Silence: the iterator ends after its timeout, not before.
            t0 = time.monotonic()
            self.assertEqual(list(bell.events(timeout=0.3)), [])
            self.assertGreaterEqual(time.monotonic() - t0, 0.29)
            self.assertIsNone(bell.read_event(timeout=0))
            self.assertEqual(bell.events_lost, 0)

    def test_fileno_and_process(self):
        import selectors
        with self.bob.request("doorbell", edge="rising", label="bell") as bell:
            sel = selectors.DefaultSelector()
            sel.register(bell.fileno(), selectors.EVENT_READ)
            got = []
            sim_pull(1, True)
            deadline = time.monotonic() + 5 * slow()
            while not any(e.type == "edge" for e in got) and time.monotonic() < deadline:
                sel.select(timeout=0.1)
                bell.process()
                got += bell.pending_events()
            self.assertTrue(any(e.type == "edge" and e.edge == "rising" for e in got))

    def test_async_for(self):
        async def main(bell):
            seen = []

            def toggle():
                for up in (True, False, True):
                    time.sleep(0.1)
                    sim_pull(1, up)

            threading.Thread(target=toggle).start()
            async for ev in bell:
                if ev.type == "edge":
                    seen.append(ev.edge)
                if len(seen) == 3:
                    break
            return seen

        with self.bob.request("doorbell", edge="both", label="bell") as bell:
            seen = asyncio.run(asyncio.wait_for(main(bell), 10 * slow()))
        self.assertEqual(seen, ["rising", "falling", "rising"])
        sim_pull(1, False)

    def test_wait_event_timeout(self):
        async def main(bell):
            first = await gpiobroker.wait_event(bell, timeout=5)
            t0 = time.monotonic()
            none = await gpiobroker.wait_event(bell, timeout=0.3)
            return first, none, time.monotonic() - t0

        with self.bob.request("doorbell", edge="both", label="bell") as bell:
            first, none, took = asyncio.run(main(bell))
        self.assertEqual(first.type, "initial-state")
        self.assertIsNone(none)
        self.assertGreaterEqual(took, 0.29)

    def test_watch_another_users_line(self):
        with self.bob.request("doorbell", edge="both", label="bell") as bell:
            with self.carol.watch("doorbell") as w:
                self.assertEqual((w.chip, w.offset), (chip_name(), 1))
                self.assertTrue(w.path.startswith("/org/gpiodbroker1/watch/"))
                self.assertFalse(w.closed)
                ev = w.read_event(timeout=5 * slow())
                self.assertEqual((ev.type, ev.value), ("initial-state", False))
                sim_pull(1, True)
                ev = w.read_event(timeout=5 * slow())
                self.assertEqual((ev.type, ev.edge), ("edge", "rising"))
                # The holder sees the same kernel event.
                mine = [e for e in bell.events(timeout=1) if e.type == "edge"]
                self.assertEqual(mine[0].line_seqno, ev.line_seqno)
                self.assertEqual(w.events_lost, 0)
            self.assertTrue(w.closed)
            for attr in ("path", "chip", "offset", "events_lost"):
                with self.assertRaisesRegex(ValueError, "closed", msg=attr):
                    getattr(w, attr)
            self.assertIs(w.broker, self.carol)
        sim_pull(1, False)

    def test_line_info_callback(self):
        seen = []
        iw = self.carol.watch_line_info("porch-light", seen.append)
        with self.bob.request("porch-light", output=True, label="watched"):
            self.assertTrue(wait_until(lambda: self.carol.process() is not None and
                                       any(i["used"] for i in seen)))
            info = [i for i in seen if i["used"]][-1]
            self.assertEqual(info["request_label"], "watched")
            self.assertEqual(info["alias"], "porch-light")
            self.assertEqual(info["direction"], "output")
        self.assertTrue(wait_until(lambda: self.carol.process() is not None and
                                   not seen[-1]["used"]))
        iw.close()


class TestLifetimes(unittest.TestCase):
    def test_sigkill_releases_the_lines(self):
        root = gpiobroker.Broker()
        p = run_as(BOB, [os.path.join(HERE, "client-hold.py"), "fan"],
                   stdout=__import__("subprocess").PIPE, text=True)
        try:
            self.assertTrue(p.stdout.readline().startswith("held "))
            self.assertEqual(sim_value(6), 1)
            self.assertTrue(used(root, "fan"))
            os.kill(p.pid, signal.SIGKILL)
            p.wait()
            self.assertTrue(wait_until(lambda: not used(root, "fan")))
            # Free for the next user at once.
            with connect_as(CAROL) as c, c.request("fan", output=True):
                pass
        finally:
            if p.poll() is None:
                p.kill()
            p.stdout.close()
            root.close()

    def test_call_timeout(self):
        b = connect_as(ALICE)
        b.timeout = 0.3
        self.assertAlmostEqual(b.timeout, 0.3)
        os.kill(benchenv.broker.proc.pid, signal.SIGSTOP)
        try:
            t0 = time.monotonic()
            with self.assertRaises(TimeoutError) as cm:
                b.request("spare", output=True)
            took = time.monotonic() - t0
        finally:
            os.kill(benchenv.broker.proc.pid, signal.SIGCONT)
        self.assertIsInstance(cm.exception, gpiobroker.CallTimeoutError)
        self.assertGreaterEqual(took, 0.25)
        self.assertLess(took, 5)
        b.timeout = None
        self.assertEqual(b.timeout, 25.0)
        b.close()

    def test_closing_the_connection_ends_its_requests(self):
        b = connect_as(ALICE)
        req = b.request("spare", output=True, value=True)
        b.close()
        self.assertTrue(req.released)
        with self.assertRaises(ValueError):
            req.value
        with connect_as(BOB) as c:
            self.assertTrue(wait_until(lambda: not used(c, "spare")))

    def test_persistent_request_outlives_its_connection(self):
        with connect_as(ALICE) as a:
            req = a.request("siren", output=True, value=True, persistent=True)
            path = req.path
            self.assertTrue(req.persistent)
            req.detach()
        self.assertEqual(sim_value(7), 1)
        with connect_as(ALICE) as a:
            req = a.open_request(path)
            req.value = False
            self.assertEqual(sim_value(7), 0)
            req.release()
            self.assertFalse(used(a, "siren"))

    def test_broker_gone(self):
        b = connect_as(BOB)
        try:
            bell = b.request("doorbell", edge="both", label="bell")
            self.assertEqual(bell.read_event(5 * slow()).type, "initial-state")
            self.assertEqual(benchenv.broker.stop(), 0)
            ev = bell.read_event(10 * slow())
            self.assertEqual(ev.type, "broker-gone")
            with self.assertRaises(gpiobroker.BrokerUnavailableError) as cm:
                b.request("spare", output=True)
            self.assertIsInstance(cm.exception, ConnectionError)
            self.assertEqual(cm.exception.errno, errno.EHOSTDOWN)
        finally:
            benchenv.broker = BrokerProcess()
            b.close()


if __name__ == "__main__":
    unittest.main()
