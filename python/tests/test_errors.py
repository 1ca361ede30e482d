# SPDX-License-Identifier: LGPL-2.1-or-later
"""The exception of each broker error, as python/README.md's Errors table gives it,
for every error name dbus/org.gpiodbroker1.h defines. Pure: no broker needed."""
import builtins
import errno
import os
import re
import unittest

import gpiobroker
from gpiobroker import _errors

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Not in the table: a failure the broker has no better name for is the base class.
GENERIC = {"Failed"}
# Error names outside the broker's own, as the table spells them.
BUS_ERRORS = {"UnknownObject": "org.freedesktop.DBus.Error.UnknownObject"}


def header_errors():
    """The broker's error names (the part after org.gpiodbroker1.Error.)."""
    with open(os.path.join(TOP, "dbus", "org.gpiodbroker1.h")) as f:
        return set(re.findall(r'#define GB_ERROR_\w+\s+GB_ERROR_PREFIX "(\w+)"', f.read()))


def table_rows():
    """python/README.md's Errors table: [(names, exception, builtin or None)]."""
    with open(os.path.join(TOP, "python", "README.md")) as f:
        text = f.read()
    section = text[text.index("## Errors"):]
    rows = []
    for line in section.split("\n")[1:]:
        if line.startswith("## "):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[1].startswith("`"):
            continue
        names = re.findall(r"`(\w+)`", cells[0])
        exc = re.match(r"`(\w+)`", cells[1]).group(1)
        also = re.match(r"`(\w+)`", cells[2])
        rows.append((names, exc, also.group(1) if also else None, cells[0]))
    return rows


class TestErrors(unittest.TestCase):
    def check(self, exc, cls_name, also):
        cls = getattr(gpiobroker, cls_name)
        self.assertIs(type(exc), cls)
        self.assertIsInstance(exc, gpiobroker.Error)
        self.assertIsInstance(exc, OSError)
        if also:
            self.assertIsInstance(exc, getattr(builtins, also))

    def test_every_broker_error_has_its_row(self):
        named = {n for names, _, _, _ in table_rows() for n in names}
        self.assertEqual(header_errors() - GENERIC - named, set(),
                         "broker errors missing from python/README.md's Errors table")
        self.assertEqual(named - header_errors() - set(BUS_ERRORS), set(),
                         "python/README.md names errors the broker does not have")

    def test_each_row_by_name(self):
        rows = table_rows()
        self.assertGreater(len(rows), 8)
        for names, cls_name, also, _ in rows:
            for n in names:
                name = BUS_ERRORS.get(n, "org.gpiodbroker1.Error." + n)
                exc = _errors.from_broker(errno.EIO, name, "the broker's message")
                self.check(exc, cls_name, also)
                self.assertEqual(exc.dbus_name, name)
                self.assertEqual(exc.strerror, "the broker's message")

    def test_rows_without_a_name(self):
        # What the library finds itself: no broker, no bus, no answer in time.
        by_words = {words: (cls_name, also) for names, cls_name, also, words in table_rows()
                    if not names}
        cases = {"no broker on the bus, no bus": [
                     (errno.EHOSTDOWN, ""),
                     (errno.EHOSTDOWN, "org.freedesktop.DBus.Error.ServiceUnknown"),
                     (errno.EHOSTDOWN, "org.freedesktop.DBus.Error.NameHasNoOwner")],
                 "the call timeout": [(errno.ETIMEDOUT, "")],
                 "the link to the bus lost": [(errno.ENOTCONN, "")]}
        self.assertEqual(set(by_words), set(cases))
        for words, calls in cases.items():
            for err, name in calls:
                self.check(_errors.from_broker(err, name, "m"), *by_words[words])

    def test_generic_failure_is_the_base_class(self):
        for n in GENERIC:
            exc = _errors.from_broker(errno.EIO, "org.gpiodbroker1.Error." + n, "m")
            self.assertIs(type(exc), gpiobroker.Error)
            self.assertEqual(exc.errno, errno.EIO)


if __name__ == "__main__":
    unittest.main()
