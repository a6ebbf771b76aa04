"""Helpers for driving unmodified Zulip clients (zulip-send, zulip-run-bot, zulip-term, scripts
using the zulip library) as subprocesses against a real `serve` process."""

import os
import queue
import re
import subprocess
import sys
import threading
import time


def write_zuliprc(path, email, api_key, site):
    """A zuliprc as zulip-terminal writes it: mode 600 (it refuses to start otherwise)."""
    path.write_text(f"[api]\nemail={email}\nkey={api_key}\nsite={site}\n")
    os.chmod(path, 0o600)
    return path


def script_path(name):
    """A console script installed beside the running interpreter (the venv's bin)."""
    candidate = os.path.join(os.path.dirname(sys.executable), name)
    return candidate if os.path.exists(candidate) else name


def wait_for(predicate, timeout=10.0, interval=0.05):
    """Poll until predicate() is truthy; return its value, or raise with the last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s (last value {value!r})")
        time.sleep(interval)


class LineReader:
    """A subprocess whose stdout lines are collected by a thread, so tests can wait on them."""

    def __init__(self, args, **kwargs):
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        env=dict(os.environ, PYTHONUNBUFFERED="1"), **kwargs)
        self.lines = queue.Queue()
        self.seen = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))

    def next_line(self, prefix, timeout=10.0):
        """The next output line starting with prefix (other lines are kept in `seen`)."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no line starting {prefix!r} within {timeout}s; output:\n" + "\n".join(self.seen))
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                continue
            self.seen.append(line)
            if line.startswith(prefix):
                return line[len(prefix):]

    def stop(self):
        """Terminate (then kill) the process this helper started."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def check(result):
    """A zulip library call's answer, asserted to be a success."""
    assert result["result"] == "success", result
    return result


# zulip-terminal 0.7.0's own start-up race (zulip/zulip-terminal#391): its presence thread may
# get the server's answer before the UI has made its update pipe, and that thread then dies on
# `assert hasattr(self, "_update_pipe")`. The UI carries on. Nothing a server does can avoid
# it (it is a matter of how fast the answer comes), so only those lines are tolerated on stderr.
KNOWN_CLIENT_RACE_LINES = (
    "Traceback (most recent call last):", "self.run()",
    "self._target(*self._args, **self._kwargs)", "self.view.controller.update_screen()",
    "self.controller.update_screen()", "view.middle_column.update_message_list_status_markers()",
    "view.users_view.update_user_list(user_list=self.users)", 'assert hasattr(self, "_update_pipe")',
    "AssertionError",
)
# Two threads may die of it at once, and their tracebacks then interleave within lines
# ("Exception in thread Exception in thread Thread-2 (...):", or a header's name on one line and
# its colon alone on the next), so the known pieces are taken out wherever they stand in a line,
# with the thread headers and the client's own frames, and what is left may be bare colons.
_KNOWN_RACE_PIECES = re.compile("|".join(
    [re.escape(line) for line in KNOWN_CLIENT_RACE_LINES]
    + [r"Exception in thread", r"Thread-\d+ \([\w.]*\):?",
       r'File "[^"]*(?:threading\.py|zulipterminal[^"]*)", line \d+, in \w+']))


def unexplained_errors(stderr):
    """stderr without zulip-terminal's known start-up race, or "" when nothing else is there."""
    if 'assert hasattr(self, "_update_pipe")' not in stderr:
        return stderr if "Traceback" in stderr else ""
    return "\n".join(line for line in stderr.splitlines() if _KNOWN_RACE_PIECES.sub("", line).strip(": \t"))
