"""End to end: nginx with `proxy-config`'s configuration answers Zulip's JSON envelope, not an
HTML page, when no shard can answer."""

import socket
import subprocess
import time

import pytest
import requests

from chat_appliance.ops.proxy_config import nginx_config, parse_shard

from ..support.serve_process import free_port
from ..support.shard_cluster import NGINX

needs_nginx = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx)")


@needs_nginx
def test_a_shard_that_cannot_answer_gives_a_json_error(tmp_path):
    """With every shard down, do an API request and a long poll through the proxy get a 502 with
    a JSON body in Zulip's error envelope and a JSON Content-Type?"""
    closed, listen = free_port(), free_port()
    config = tmp_path / "nginx.conf"
    config.write_text(nginx_config(listen, [parse_shard(f"a=127.0.0.1:{closed}")], runtime_dir=str(tmp_path)))
    nginx = subprocess.Popen([NGINX, "-e", "stderr", "-p", str(tmp_path), "-c", str(config), "-g", "daemon off;"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert nginx.poll() is None, nginx.stdout.read().decode(errors="replace")
            try:
                socket.create_connection(("127.0.0.1", listen), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        for path in ("/api/v1/users/me", "/json/events?queue_id=a:1&last_event_id=-1"):
            answer = requests.get(f"http://127.0.0.1:{listen}{path}", timeout=10)
            assert answer.status_code == 502
            assert answer.headers["Content-Type"].startswith("application/json")
            body = answer.json()
            assert body["result"] == "error" and body["msg"] and body["code"]
    finally:
        nginx.terminate()
        nginx.wait(timeout=10)
