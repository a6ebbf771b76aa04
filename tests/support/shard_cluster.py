"""Several `chat-appliance serve --shard-id` processes on one PostgreSQL database, and nginx in
front of them configured by `chat-appliance proxy-config nginx`: for tests/e2e/test_shards.py and
scripts/bench_shards.py."""

import os
import shutil
import socket
import subprocess
import sys
import time

import requests

from .serve_process import ServeProcess, free_port

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)


def start_shards(instance, names, *, rate_limiting=False, env=None):
    """A ServeProcess per shard name, one after the other (the first creates the organization
    and prints its owner's credentials), all on the instance folder's one database."""
    saved = {key: os.environ.get(key) for key in (env or {})}
    os.environ.update(env or {})
    try:
        shards = {}
        for name in names:
            shards[name] = ServeProcess(instance, "--shard-id", name, rate_limiting=rate_limiting)
            shards[name].instance = instance
        return shards
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def restart_shard(instance, name, port, *, rate_limiting=False):
    """Start shard `name` again on its old port."""
    return ServeProcess(instance, "--shard-id", name, port=port, rate_limiting=rate_limiting)


class NginxProxy:
    """nginx, as a non-daemon child process with its own prefix directory (pid, logs, temporary
    files), running the configuration `chat-appliance proxy-config nginx` prints."""

    def __init__(self, prefix, shards):
        self.prefix = prefix
        prefix.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = [sys.executable, "-m", "chat_appliance", "proxy-config", "nginx", "--listen", str(self.port)]
        for name, shard in shards.items():
            args += ["--shard", f"{name}=127.0.0.1:{shard.port}"]
        config = subprocess.run(args, check=True, capture_output=True, text=True, timeout=60).stdout
        self.config_path = prefix / "nginx.conf"
        self.config_path.write_text(config)
        self.process = subprocess.Popen([NGINX, "-e", "stderr", "-p", str(prefix), "-c", str(self.config_path),
                                         "-g", "daemon off;"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("nginx exited: " + self.process.stdout.read().decode(errors="replace"))
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        requests.get(self.url + "/api/v1/server_settings", timeout=10).raise_for_status()

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
