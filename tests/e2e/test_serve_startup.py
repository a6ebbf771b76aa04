"""End to end: the traps of a first start (a port in use, lost credentials, a mistyped folder)."""

import os
import signal
import socket
import subprocess
import sys

from ..support.serve_process import free_port

# These starts make their own SQLite instance: the question is the command line, not the engine.
ENV = {k: v for k, v in os.environ.items() if k not in ("CHAT_APPLIANCE_DATABASE_URL", "CHAT_APPLIANCE_INSTANCE")}


def start(cwd, *args, until="Serving on"):
    """Run `serve` in `cwd` until it prints `until` (then stop it) or exits; returns
    (exit status, everything printed)."""
    process = subprocess.Popen([sys.executable, "-m", "chat_appliance", "serve", "--quiet", *args], cwd=cwd,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=ENV)
    lines = []
    for line in process.stdout:
        lines.append(line)
        if line.startswith(until):
            process.send_signal(signal.SIGTERM)
    return process.wait(timeout=60), "".join(lines)


def test_a_port_in_use_is_refused_before_the_credentials_are_made(tmp_path):
    """Does a first start on a port another program holds exit non-zero, naming --port, without
    printing (and losing) the owner's credentials, so that the next start shows them?"""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        status, output = start(tmp_path, "--port", str(taken.getsockname()[1]))
    assert status == 1 and "--port" in output and "Errno" not in output
    assert "password:" not in output
    status, output = start(tmp_path, "--port", str(free_port()))
    assert status == 0 and "password:" in output and "API key:" in output
    assert output.index("password:") < output.index("Serving on")


def test_every_start_before_the_first_sign_in_says_how_to_get_credentials(tmp_path):
    """Until the owner signs in, does each later start say how to get new credentials?"""
    assert "password:" in start(tmp_path, "--port", str(free_port()))[1]
    status, output = start(tmp_path, "--port", str(free_port()))
    assert status == 0 and "has not signed in yet" in output
    assert "chat-appliance set-password owner@localhost" in output and "reset-api-key" in output


def test_an_explicit_instance_without_organization_is_refused_unless_create(tmp_path):
    """Is `serve --instance` on a folder that does not exist, or holds no organization, refused
    naming what it found and `--create`, creating nothing; and does --create make one?"""
    typo = tmp_path / "instnace"
    status, output = start(tmp_path, "--instance", str(typo), "--port", str(free_port()))
    assert status == 1 and "no such folder" in output and "serve --create" in output
    assert not typo.exists() and "password:" not in output
    typo.mkdir()
    status, output = start(tmp_path, "--instance", str(typo), "--port", str(free_port()))
    assert status == 1 and "holds no organization" in output and "password:" not in output
    status, output = start(tmp_path, "--instance", str(typo), "--create", "--port", str(free_port()))
    assert status == 0 and "password:" in output
    status, output = start(tmp_path, "--instance", str(typo), "--port", str(free_port()))
    assert status == 0 and "password:" not in output


def test_the_reminder_stops_once_the_owner_has_signed_in(tmp_path):
    """Once the owner's client has reported its presence, does a start stop saying how to get
    new credentials?"""
    import requests

    from ..support.serve_process import ServeProcess

    first = ServeProcess(tmp_path / "instance")
    answer = requests.post(first.url + "/api/v1/users/me/presence", auth=(first.email, first.api_key),
                           data={"status": "active"}, timeout=10).json()
    assert answer["result"] == "success", answer
    first.stop()
    second = ServeProcess(tmp_path / "instance")
    second.stop()
    assert "has not signed in yet" not in "".join(second.output)
