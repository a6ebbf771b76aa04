"""A pytest plugin for bot authors: a real chat-appliance server inside their own test suite.

Installed with the package (a `pytest11` entry point), it gives the session-scoped fixture
`chat_server`: a `chat-appliance serve` child process on a temporary instance and a free port,
with rate limits off and webhooks to loopback allowed. It needs only `pip install
chat-appliance zulip pytest`:

    def test_my_bot_answers(chat_server):
        bot = chat_server.create_bot("Echo Bot")
        ana = chat_server.create_user("Ana")
        ana.send_message({"type": "private", "to": [bot.email], "content": "hi"})
        ...

Nothing here runs until a test asks for the fixture.
"""

import collections
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import pytest

# What a test server needs that a production one must not have.
TEST_SETTINGS = {"RATE_LIMITING": False, "OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES": True,
                 "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000", "LOG_REQUESTS": False}
START_TIMEOUT_SECONDS = 30


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ChatServer:
    """A running server, its owner's client, and helpers that make accounts."""

    def __init__(self, root=None):
        self._root = Path(root or tempfile.mkdtemp(prefix="chat-appliance-"))
        self._process = None
        self._serial = 0
        self.start()

    # --- life cycle -------------------------------------------------------------------------

    def start(self):
        """Start `serve` on a fresh instance and wait until it answers."""
        self.instance = self._root / "instance"
        self.instance.mkdir(parents=True, exist_ok=True)
        (self.instance / "config.json").write_text(json.dumps(TEST_SETTINGS))
        port = _free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        # Always the instance's own SQLite file: a throwaway server that reset() wipes by deleting
        # its folder, whatever database the surrounding suite was pointed at.
        env.pop("CHAT_APPLIANCE_DATABASE_URL", None)
        self._process = subprocess.Popen(
            [sys.executable, "-m", "chat_appliance", "serve", "--instance", str(self.instance), "--create",
             "--host", "127.0.0.1",
             "--port", str(port), "--quiet"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        output = self._read_until_serving()
        # Keep reading what it prints (its last lines stay in `log`): a pipe nobody reads fills
        # up, and the server's next warning would then block it mid-request.
        self._log = collections.deque(maxlen=1000)
        threading.Thread(target=self._read_rest, args=(self._process.stdout, self._log), daemon=True).start()
        self.owner_email = re.search(r"email:\s+(\S+)", output).group(1)
        self.owner_password = re.search(r"password:\s+(\S+)", output).group(1)
        self.owner_api_key = re.search(r"API key:\s+(\S+)", output).group(1)
        self._wait_until_answering()
        self.owner = self.client(self.owner_email, self.owner_api_key)

    @property
    def log(self):
        """The server's last 1,000 lines of output, as a list taken now: the deque behind it
        grows on another thread, and iterating it while a line arrives raises RuntimeError."""
        return list(self._log)

    def _read_until_serving(self):
        lines, deadline = [], time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            line = self._process.stdout.readline()
            if not line:
                raise RuntimeError("chat-appliance serve exited early:\n" + "".join(lines))
            lines.append(line)
            if line.startswith("Serving on"):
                return "".join(lines)
        raise RuntimeError("chat-appliance serve did not start:\n" + "".join(lines))

    @staticmethod
    def _read_rest(stream, log):
        try:
            for line in stream:
                log.append(line)
        except (OSError, ValueError):  # closed by stop()
            pass

    def _wait_until_answering(self):
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(self.url + "/api/v1/server_settings", timeout=1).read()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"chat-appliance serve did not answer at {self.url}")

    def stop(self):
        """Stop the server (SIGTERM, then SIGKILL if it lingers)."""
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        if self._process is not None:
            self._process.stdout.close()
        self._process = None

    def reset(self):
        """A fresh server and organization: every account and message made so far is gone."""
        self.stop()
        shutil.rmtree(self.instance, ignore_errors=True)
        self.start()

    def close(self):
        """Stop the server and delete its files."""
        self.stop()
        shutil.rmtree(self._root, ignore_errors=True)

    # --- accounts ---------------------------------------------------------------------------

    def client(self, email, api_key):
        """A zulip.Client for these credentials on this server."""
        import zulip

        return zulip.Client(email=email, api_key=api_key, site=self.url, client="ChatApplianceTest")

    def _next(self, full_name):
        self._serial += 1
        slug = re.sub(r"[^a-z0-9]+", "", full_name.lower())[:20] or "user"
        return f"{slug}{self._serial}"

    def create_user(self, full_name, *, email=None, password=None, **options):
        """A new member (or, with role=..., another role); returns a zulip.Client for them. The
        client's `.email` is the login email and `.password` the password."""
        email = email or f"{self._next(full_name)}@example.com"
        password = password or secrets.token_urlsafe(12)
        created = self.owner.call_endpoint("users", method="POST",
                                           request={"email": email, "password": password, "full_name": full_name})
        if created.get("result") != "success":
            raise RuntimeError(f"could not create {email}: {created.get('msg')}")
        key = self.owner.call_endpoint("fetch_api_key", method="POST",
                                       request={"username": email, "password": password})
        if key.get("result") != "success":
            raise RuntimeError(f"could not log in as {email}: {key.get('msg')}")
        role = options.pop("role", None)
        if role is not None:
            self.owner.call_endpoint(f"users/{created['user_id']}", method="PATCH", request={"role": role})
        client = self.client(email, key["api_key"])
        client.user_id, client.password = created["user_id"], password
        return client

    def create_bot(self, full_name, bot_type=1, **options):
        """A new bot owned by the organization's owner; returns a zulip.Client for it. Options go
        to POST /bots: `payload_url` and `interface_type` for outgoing webhooks (bot_type=3),
        `service_name` and `config_data` for embedded bots (bot_type=4), `short_name`."""
        request = {"full_name": full_name, "short_name": options.pop("short_name", self._next(full_name)),
                   "bot_type": bot_type}
        for key, value in options.items():
            request[key] = value if isinstance(value, (str, int)) else json.dumps(value)
        created = self.owner.call_endpoint("bots", method="POST", request=request)
        if created.get("result") != "success":
            raise RuntimeError(f"could not create bot {full_name!r}: {created.get('msg')}")
        user = self.owner.call_endpoint(f"users/{created['user_id']}", method="GET")["user"]
        client = self.client(user["email"], created["api_key"])
        client.user_id = created["user_id"]
        return client


@pytest.fixture(scope="session")
def chat_server(tmp_path_factory):
    """A real chat-appliance server for the test session (rate limits off). `.url`, `.owner`
    (a zulip.Client), `.create_user(full_name)`, `.create_bot(full_name, bot_type=1)`, `.reset()`."""
    server = ChatServer(tmp_path_factory.mktemp("chat-appliance"))
    yield server
    server.close()
