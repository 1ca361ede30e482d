# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the Python tests need of the bench: its gpio-sim chip, a broker with a test
policy, connections as the bench's users. Inside the bench only (test-python.sh)."""
import os
import signal
import subprocess
import sys
import time

import gpiobroker

ALICE, BOB, CAROL = 60001, 60002, 60003
SIM = "gbpy"
CONFIGFS = "/sys/kernel/config/gpio-sim/" + SIM
POLICY_DIR = "/run/gb-py-policy"

# Offsets (the bench's --chip names them): 0 porch (alias porch-light), 1 doorbell,
# 2 spare, 3 relay (alias alice-relay, only gb-alice may use it), 4 alarm (direct line
# fds allowed), 5-7 open.
POLICY = """\
[line porch-light]
chip = gbpy
offset = 0
users = *
directions = input, output
direction-may-change = yes

[line alice-relay]
chip = gbpy
offset = 3
users = gb-alice
directions = output

[line alarm]
chip = gbpy
offset = 4
users = *
directions = input, output
direction-may-change = yes
edges = none, rising, falling, both
bias = as-is, disabled, pull-up, pull-down
drive = push-pull, open-drain, open-source
direct = yes

[group rest]
chip = gbpy
offsets = 1-2, 5-7
users = *
directions = input, output
direction-may-change = yes
edges = none, rising, falling, both
bias = as-is, disabled, pull-up, pull-down
watch-users = *
persistent = yes
"""


def chip_name():
    with open(CONFIGFS + "/bank0/chip_name") as f:
        return f.read().strip()


def _line_dir(offset):
    with open(CONFIGFS + "/dev_name") as f:
        dev = f.read().strip()
    return "/sys/devices/platform/%s/%s/sim_gpio%d" % (dev, chip_name(), offset)


def sim_value(offset):
    """The level gpio-sim sees on the line (what an output drives)."""
    with open(_line_dir(offset) + "/value") as f:
        return int(f.read().strip())


def sim_pull(offset, up):
    """Drive a simulated input high (pull-up) or low (pull-down)."""
    with open(_line_dir(offset) + "/pull", "w") as f:
        f.write("pull-up" if up else "pull-down")


def slow():
    """Multiplier for timeouts, as gb_slow() in tests/lib/timing.c."""
    if os.environ.get("GB_TEST_VALGRIND") == "1":
        return 20
    factor = os.environ.get("GB_TEST_TIMEOUT_FACTOR", "")
    # A bench under emulation (the ARM lane's qemu guests) is slower throughout.
    if factor.isdigit() and 1 <= int(factor) <= 100:
        return int(factor)
    return 1


class BrokerProcess:
    """The broker under test, started with POLICY, stopped with SIGTERM."""

    def __init__(self):
        os.makedirs(POLICY_DIR, exist_ok=True)
        with open(POLICY_DIR + "/50-test.conf", "w") as f:
            f.write(POLICY)
        self.proc = subprocess.Popen([os.environ["GB_TEST_BROKER"], "--log-level=warning",
                                      "--policy-dir=" + POLICY_DIR])
        deadline = time.monotonic() + 20 * slow()
        while True:
            try:
                with gpiobroker.Broker() as b:
                    b.find_line("porch-light")
                return
            except (gpiobroker.BrokerUnavailableError, ConnectionError):
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("the broker did not come up")
                time.sleep(0.05)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=30 * slow())


broker = None  # the BrokerProcess of the running test module


def setUpModule():
    """Each test module's start (imported as its setUpModule): every simulated line
    pulled low, and a broker."""
    global broker
    for off in range(8):
        sim_pull(off, False)
    broker = BrokerProcess()


def tearDownModule():
    assert broker.stop() == 0, "the broker did not exit cleanly"


def connect_as(uid):
    """A Broker connection made with effective uid/gid @uid: the bus daemon records
    the caller's credentials when it connects, so this is that user to the broker."""
    os.setegid(uid)
    os.seteuid(uid)
    try:
        return gpiobroker.Broker()
    finally:
        os.seteuid(0)
        os.setegid(0)


def run_as(uid, args, **kwargs):
    """Popen of a Python program as @uid (real, effective and saved)."""
    return subprocess.Popen([sys.executable] + args, user=uid, group=uid, extra_groups=[],
                            **kwargs)


def wait_until(pred, timeout=5.0):
    deadline = time.monotonic() + timeout * slow()
    while not pred():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def pace():
    # UML ticks at 100 Hz: closer edges would coalesce into one.
    time.sleep(0.03)
