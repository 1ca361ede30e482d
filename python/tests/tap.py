# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run the unittest modules test_*.py of a directory, reporting TAP on stdout
(automake's tap-driver reads it); test output and tracebacks go out as comments."""
import sys
import unittest


class TapResult(unittest.TestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.n = 0

    def _line(self, ok, test, note=""):
        self.n += 1
        print("%s %d - %s%s" % ("ok" if ok else "not ok", self.n, test.id(), note), flush=True)

    def _comment(self, text):
        for line in text.rstrip().splitlines():
            print("# " + line, flush=True)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._line(True, test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._line(False, test)
        self._comment(self.failures[-1][1])

    def addError(self, test, err):
        super().addError(test, err)
        self._line(False, test)
        self._comment(self.errors[-1][1])

    def addSkip(self, test, reason):
        # A skipped test is not a pass here: the bench has everything they need.
        super().addSkip(test, reason)
        self._line(False, test, " (skipped: %s)" % reason)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._line(False, test, " (unexpected success)")

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._line(True, test)


def main():
    suite = unittest.defaultTestLoader.discover(sys.argv[1], pattern="test_*.py")
    total = suite.countTestCases()
    print("1..%d" % total, flush=True)
    result = TapResult()
    suite.run(result)
    if result.n != total:
        print("not ok %d - only %d of %d tests reported" % (result.n + 1, result.n, total))
        return 1
    return 0 if result.wasSuccessful() and not result.skipped else 1


if __name__ == "__main__":
    sys.exit(main())
