"""Start a real `chat-appliance serve` process for end-to-end and client tests."""

import os
import re
import socket
import subprocess
import sys
import threading
import time

import requests

from . import pg


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServeProcess:
    """`python -m chat_appliance serve` on a fresh instance; parses the printed owner credentials."""

    def __init__(self, instance_path, *extra_args, port=None, rate_limiting=False, listen=None, ready=None, env=None,
                 quiet=True):
        """`listen` replaces `--port PORT` (e.g. --http-port/--https-port); `ready` is called until
        it stops raising ConnectionError (default: GET /api/v1/server_settings on `url`); `env`
        adds environment variables; `quiet=False` keeps the request log."""
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ready = ready or (lambda: requests.get(self.url + "/api/v1/server_settings", timeout=1))
        # Load and client tests run without rate limits, as `CHAT_APPLIANCE_RATE_LIMITING=false` allows.
        env = dict(os.environ, PYTHONUNBUFFERED="1", CHAT_APPLIANCE_RATE_LIMITING="true" if rate_limiting else "false",
                   **(env or {}))
        if pg.ENABLED:
            # A database per instance folder: a restart on the same folder finds its data.
            env["CHAT_APPLIANCE_DATABASE_URL"] = pg.database_for_instance(instance_path)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "chat_appliance", "serve", "--instance", str(instance_path), "--create",
             "--host", "127.0.0.1",
             *(listen if listen is not None else ["--port", str(self.port)]), *(["--quiet"] if quiet else []),
             *extra_args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.output = []
        self._wait_ready()
        # Keep reading what it prints: a pipe nobody reads fills up (64 KiB), and the server's
        # next log line would then block it mid-request.
        self._reader = threading.Thread(target=self._read_rest, daemon=True)
        self._reader.start()

    def _read_rest(self):
        for line in self.process.stdout:
            self.output.append(line)

    def _wait_ready(self, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("serve exited early:\n" + "".join(self.output))
            self.output.append(line)
            if line.startswith("Serving on"):
                break
        text = "".join(self.output)
        self.email = re.search(r"email:\s+(\S+)", text).group(1) if "email:" in text else None
        self.api_key = re.search(r"API key:\s+(\S+)", text).group(1) if "API key:" in text else None
        while time.monotonic() < deadline:
            try:
                self.ready()
                return
            except (requests.ConnectionError, ConnectionError, OSError):
                time.sleep(0.05)
        raise RuntimeError("server did not answer")

    def stop(self, sig=None):
        """SIGTERM (or sig) and wait; returns the exit code."""
        import signal

        self.process.send_signal(sig or signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        finally:
            if self.process.poll() is None:
                self.process.kill()
        self._reader.join(timeout=5)
        return self.process.returncode
