# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Python examples of the documentation, run on the bench as a reader would run
them: every ```python block of the files in DOCS, as a bench user, against the real
broker and gpio-sim lines. A block must say how it runs, in an HTML comment on the
line before its fence (hidden where the Markdown is rendered):

    <!-- bench: user=gb-alice press=doorbell expect="edge rising True" -->

Words as the shell splits them:
  user=NAME        run as this bench user (required)
  env=NAME=VALUE   with NAME=VALUE in the environment (may be repeated)
  press=LINE       once the program listens to LINE's edges (its Line object's Edge
                   is no longer "none"), pull LINE up; down again after expect
  expect=TEXT      the program prints TEXT (after the press)
  high=LINE        when TEXT is printed, the program drives LINE high
  stop             the program runs until stopped: SIGTERM once TEXT is printed
Without stop the program must end by itself, with status 0. A block without a
comment, or a comment without a block, fails."""
import os
import pwd
import queue
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import gpiobroker
from benchenv import chip_name, sim_pull, sim_value, slow, wait_until
from benchenv import setUpModule, tearDownModule  # noqa: F401 (unittest calls them)

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
DOCS = ["README.md", "python/README.md"]
MARK = re.compile(r"<!-- bench: (.*) -->")
KEYS = {"user", "env", "press", "expect", "high"}
# Generous: an example waits at most ~10 s for silence; this only stops a hang.
RUN_TIMEOUT = 60


def read_blocks(rel):
    """The ```python blocks of a Markdown file: [(fence line number, marker words or
    None, code)], and the line numbers of markers followed by no python block."""
    with open(os.path.join(TOP, rel)) as f:
        lines = f.read().split("\n")
    blocks, strays, i = [], [], 0
    while i < len(lines):
        m = MARK.fullmatch(lines[i].strip())
        if m and not (i + 1 < len(lines) and lines[i + 1].strip() == "```python"):
            strays.append(i + 1)
        if not lines[i].startswith("```"):
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        if lines[i].strip() == "```python":
            m = MARK.fullmatch(lines[i - 1].strip()) if i > 0 else None
            blocks.append((i + 1, m.group(1) if m else None, "\n".join(lines[i + 1:end]) + "\n"))
        i = end + 1
    return blocks, strays


def parse_marker(words):
    """The marker's words as a dict (env a list, stop a bool); ValueError if bad."""
    spec = {"env": [], "stop": False}
    for w in shlex.split(words):
        if w == "stop":
            spec["stop"] = True
            continue
        key, sep, value = w.partition("=")
        if not sep or key not in KEYS:
            raise ValueError("unknown word %r" % w)
        if key == "env":
            spec["env"].append(value.partition("="))
        else:
            spec[key] = value
    if "user" not in spec:
        raise ValueError("no user=")
    if (spec["stop"] or "high" in spec) and "expect" not in spec:
        raise ValueError("stop and high= need expect=")
    return spec


def line_edge(path):
    """The Edge property of a line object, as the broker publishes it."""
    out = subprocess.run(["busctl", "--system", "get-property", "org.gpiodbroker1", path,
                          "org.gpiodbroker1.Line", "Edge"], capture_output=True, text=True,
                         check=True).stdout
    return shlex.split(out)[1]


class Example:
    """One block running as its user, its output (stdout and stderr) read by a thread."""

    def __init__(self, name, code, spec):
        self.dir = tempfile.mkdtemp(prefix="gb-docs-")
        os.chmod(self.dir, 0o755)
        self.file = os.path.join(self.dir, name)
        with open(self.file, "w") as f:
            f.write(code)
        os.chmod(self.file, 0o644)
        env = dict(os.environ)
        env.update({k: v for k, _, v in spec["env"]})
        pw = pwd.getpwnam(spec["user"])
        # -u: the output arrives as it is printed, not when the pipe's buffer fills.
        self.proc = subprocess.Popen([sys.executable, "-u", self.file], user=pw.pw_uid,
                                     group=pw.pw_gid, extra_groups=[], cwd=self.dir, env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True)
        self.output = ""
        self.closed = False
        self.lines = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.deadline = time.monotonic() + RUN_TIMEOUT * slow()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def wait_output(self, text):
        """True once the output holds text; False if the program ended or hung first."""
        while text not in self.output:
            left = self.deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                return False
            if line is None:
                return False
            self.output += line
        return True

    def wait_exit(self):
        try:
            return self.proc.wait(timeout=max(0, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return None

    def close(self):
        if self.closed:
            return
        self.closed = True
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.reader.join()
        while True:
            line = self.lines.get()
            if line is None:
                break
            self.output += line
        self.proc.stdout.close()
        shutil.rmtree(self.dir)


class TestDocs(unittest.TestCase):
    def tearDown(self):
        # The next example finds every line free: the broker has seen this one go.
        with gpiobroker.Broker() as b:
            chip = chip_name()
            self.assertTrue(wait_until(lambda: not any(
                b.line_info("%s:%d" % (chip, off))["used"] for off in range(8))),
                "a line is still held after the example ended")
        for off in range(8):
            sim_pull(off, False)

    def test_every_block_is_marked(self):
        problems = []
        for rel in DOCS:
            blocks, strays = read_blocks(rel)
            problems += ["%s:%d: a bench comment with no ```python block after it" % (rel, line)
                         for line in strays]
            for line, words, _ in blocks:
                if words is None:
                    problems.append("%s:%d: a ```python block without a <!-- bench: ... --> "
                                    "line before it" % (rel, line))
                    continue
                try:
                    parse_marker(words)
                except ValueError as e:
                    problems.append("%s:%d: %s" % (rel, line - 1, e))
        if problems:
            self.fail("\n".join(problems))

    def run_block(self, rel, line, words, code):
        where = "%s:%d" % (rel, line)
        spec = parse_marker(words)
        with gpiobroker.Broker() as b:
            press = b.find_line(spec["press"]) if "press" in spec else None
            high = b.find_line(spec["high"]) if "high" in spec else None
        ex = Example(re.sub(r"\W", "-", rel) + "-%d.py" % line, code, spec)
        try:
            if press:
                listening = wait_until(lambda: ex.proc.poll() is not None or
                                       line_edge(press[0]) != "none", RUN_TIMEOUT)
                self.assertIsNone(ex.proc.poll(), "%s: the example ended (status %s) before it "
                                  "listened to %s's edges" % (where, ex.proc.poll(), spec["press"]))
                self.assertTrue(listening, "%s: the example never listened to %s's edges"
                                % (where, spec["press"]))
                sim_pull(press[2], True)
            if "expect" in spec:
                self.assertTrue(ex.wait_output(spec["expect"]),
                                "%s: the example did not print %r" % (where, spec["expect"]))
            if high:
                self.assertEqual(sim_value(high[2]), 1,
                                 "%s: the example does not drive %s high" % (where, spec["high"]))
            if press:
                sim_pull(press[2], False)
            if spec["stop"]:
                ex.proc.send_signal(signal.SIGTERM)
            status = ex.wait_exit()
            self.assertIsNotNone(status, "%s: the example did not end" % where)
            self.assertIn(status, (0, -signal.SIGTERM) if spec["stop"] else (0,),
                          "%s: the example ended with status %s" % (where, status))
        except AssertionError as e:
            ex.close()
            raise AssertionError("%s\n--- its output:\n%s" % (e, ex.output)) from None
        finally:
            ex.close()


def _add_block_tests():
    """One test per ```python block, named after its file and line."""
    for rel in DOCS:
        for line, words, code in read_blocks(rel)[0]:
            if words is None:
                continue  # test_every_block_is_marked says so

            def test(self, rel=rel, line=line, words=words, code=code):
                self.run_block(rel, line, words, code)
            name = "test_%s_line_%d" % (re.sub(r"\W", "_", rel), line)
            setattr(TestDocs, name, test)


_add_block_tests()

if __name__ == "__main__":
    unittest.main()
