"""End to end: zulip-terminal 0.7.0, unmodified, in a detached tmux session against a real
`chat-appliance serve`: it starts, shows the existing messages, and sends one typed into it.

zulip-term 0.7.0 requires Python <= 3.10, so it lives in its own virtualenv (.ci/run makes
`.venv-zt`); $ZULIP_TERM may name another zulip-term executable. The test is skipped, saying why,
when either zulip-term or tmux is missing."""

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import zulip

from ..support.clients import unexplained_errors, wait_for, write_zuliprc
from ..support.serve_process import ServeProcess

REPO = Path(__file__).resolve().parents[2]


def zulip_term_executable():
    candidate = os.environ.get("ZULIP_TERM") or str(REPO / ".venv-zt" / "bin" / "zulip-term")
    return candidate if os.path.exists(candidate) else None


pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)"),
    pytest.mark.skipif(zulip_term_executable() is None,
                       reason="zulip-term 0.7.0 not found: .ci/run installs it into .venv-zt (needs Python 3.10)"),
]


class Tmux:
    """A tmux server on a socket of its own, so the test never touches anybody else's sessions."""

    def __init__(self, name):
        self.socket = f"chat-appliance-{name}-{os.getpid()}"
        self.target = "zt"

    def run(self, *args, check=True):
        # zulip-terminal runs its network calls synchronously (and hangs on "Loading") when it sees
        # PYTEST_CURRENT_TEST, so none of pytest's variables reach it.
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        return subprocess.run(["tmux", "-L", self.socket, *args], check=check, capture_output=True, text=True,
                              timeout=30, env=env)

    def start(self, command, cwd, width=200, height=50):
        self.run("new-session", "-d", "-s", self.target, "-x", str(width), "-y", str(height), "-c", str(cwd), command)

    def keys(self, *keys, literal=False):
        self.run("send-keys", "-t", self.target, *(("-l",) if literal else ()), *keys)
        time.sleep(0.3)

    def pane(self):
        return self.run("capture-pane", "-p", "-t", self.target, check=False).stdout

    def kill(self):
        self.run("kill-server", check=False)


def test_zulip_terminal_shows_and_sends_messages(tmp_path):
    """Does zulip-terminal start against the server, show the existing messages, send a stream
    message typed into its compose box (c, stream, Tab, topic, Tab, content, ctrl-d), show it
    back from the event queue, and after a server restart re-register and show new messages —
    with no Traceback on screen, on stderr or in its tracebacks log?"""
    server = ServeProcess(tmp_path / "instance")
    tmux = Tmux("zt")
    stderr = tmp_path / "zulip-term.stderr"
    try:
        api = zulip.Client(email=server.email, api_key=server.api_key, site=server.url)
        existing = api.send_message({"type": "stream", "to": "general", "subject": "history",
                                     "content": "an existing message"})
        assert existing["result"] == "success"
        rc = write_zuliprc(tmp_path / "zuliprc", server.email, server.api_key, server.url)
        tmux.start(f"env -u PYTEST_CURRENT_TEST {zulip_term_executable()} -c {rc} 2>{stderr}; "
                   "echo ZULIP-TERM-EXITED $?; sleep 60", cwd=tmp_path)

        try:
            wait_for(lambda: "an existing message" in tmux.pane() or "ZULIP-TERM-EXITED" in tmux.pane(), timeout=30)
        except AssertionError:
            raise AssertionError("zulip-terminal did not show the messages:\n" + tmux.pane()) from None
        screen = tmux.pane()
        assert "ZULIP-TERM-EXITED" not in screen, screen + stderr.read_text()
        assert "Welcome Bot" in screen

        tmux.keys("c")
        tmux.keys("general", literal=True)
        tmux.keys("Tab")
        tmux.keys("from the terminal", literal=True)
        tmux.keys("Tab")
        tmux.keys("typed in zulip-terminal", literal=True)
        tmux.keys("C-d")

        def sent():
            newest = api.get_messages({"anchor": "newest", "num_before": 1, "num_after": 0, "narrow": [],
                                       "apply_markdown": False})["messages"]
            return newest and newest[-1]["content"] == "typed in zulip-terminal" and newest[-1]

        message = wait_for(sent, timeout=15)
        assert message["subject"] == "from the terminal" and message["display_recipient"] == "general"
        assert message["client"].startswith("ZulipTerminal")
        # zulip-terminal shows its own message only when the server echoes it as an event.
        wait_for(lambda: "typed in zulip-terminal" in tmux.pane(), timeout=15)

        # A restart loses the queue; zulip-terminal re-registers on "Bad event queue id: ...".
        # Messages sent before it has re-registered never reach it, so send until one shows.
        server.stop()
        server = ServeProcess(tmp_path / "instance", port=server.port)
        for attempt in range(20):
            api.send_message({"type": "stream", "to": "general", "subject": "after restart",
                              "content": f"still here {attempt}"})
            try:
                wait_for(lambda: "still here" in tmux.pane(), timeout=1)
                break
            except AssertionError:
                continue
        else:
            raise AssertionError("zulip-terminal showed nothing after the restart:\n" + tmux.pane())
        screen = tmux.pane()
        assert "Traceback" not in screen and "ZULIP-TERM-EXITED" not in screen, screen
        assert not unexplained_errors(stderr.read_text()), stderr.read_text()
        # zulip-terminal logs the exceptions it catches to this file in its working directory.
        crash_log = tmp_path / "zulip-terminal-tracebacks.log"
        assert not crash_log.exists(), crash_log.read_text()
    finally:
        tmux.kill()
        server.stop()
