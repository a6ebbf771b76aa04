"""End to end: the organization's address (realm_url) that invitations, password resets and
missed-message mails carry, as `serve`, EXTERNAL_HOST and `set-realm-url` decide it."""

import os
import re
import socket

import pytest
import requests

from ..support import pg
from ..support.helpers import run
from ..support.serve_process import ServeProcess
from ..support.smtp_sink import body, running_sink

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def smtp():
    with running_sink() as sink:
        yield sink


def serve(instance, smtp, *args, **env):
    """A `serve` that mails through the sink, with CHAT_APPLIANCE_<KEY> variables from `env`."""
    return ServeProcess(instance, *args, env=smtp.environment(**env))


def realm_url(server):
    return requests.get(server.url + "/api/v1/server_settings", timeout=10).json()["realm_url"]


def invite_link(server, credentials=None):
    answer = requests.post(server.url + "/api/v1/invites/multiuse", auth=credentials or (server.email, server.api_key),
                           data={"invite_as": 400}, timeout=10).json()
    assert answer["result"] == "success", answer
    return answer["invite_link"]


def reset_mail_link(server, smtp, email):
    """The link of the password reset mail `email` asks for."""
    before = len(smtp.messages)
    answer = requests.post(server.url + "/accounts/password/reset", data={"email": email},
                           headers={"X-Requested-With": "XMLHttpRequest"}, timeout=10)
    assert answer.json()["result"] == "success"
    message = smtp.wait(before + 1)[-1]
    return re.search(r"https?://\S+/accounts/password/reset/\S+", body(message, "plain")).group(0)


def test_every_interface_stores_the_host_name_and_says_how_to_change_it(tmp_path, smtp):
    """Does `serve --host 0.0.0.0` make an organization whose address is this machine's host name
    (not 0.0.0.0), and say so in one line that tells how to change it?"""
    server = serve(tmp_path / "instance", smtp, "--host", "0.0.0.0")
    try:
        expected = f"http://{socket.gethostname()}:{server.port}"
        assert realm_url(server) == expected
        assert invite_link(server).startswith(expected + "/join/")
    finally:
        server.stop()
    lines = [line for line in server.output if line.startswith("Invitations and mails link to")]
    assert len(lines) == 1 and expected in lines[0] and "EXTERNAL_HOST" in lines[0] and "set-realm-url" in lines[0]


def test_external_host_and_set_realm_url_change_the_links(tmp_path, smtp):
    """On an organization the quick start made, do EXTERNAL_HOST (at the next start) and then, once
    it is unset, `set-realm-url` change the address in /server_settings, invitation links and
    password reset mails, with set-realm-url refused while EXTERNAL_HOST decides?"""
    instance = tmp_path / "instance"
    server = serve(instance, smtp)
    owner = (server.email, server.api_key)
    assert realm_url(server) == server.url
    server.stop()

    server = serve(instance, smtp, EXTERNAL_HOST="chat.example.test")
    try:
        expected = f"http://chat.example.test:{server.port}"
        assert realm_url(server) == expected
        assert invite_link(server, owner).startswith(expected + "/join/")
        assert reset_mail_link(server, smtp, owner[0]).startswith(expected + "/accounts/password/reset/")
    finally:
        server.stop()

    # The instance's database, as ServeProcess gives it on PostgreSQL.
    env = dict(os.environ, **({"CHAT_APPLIANCE_DATABASE_URL": pg.database_for_instance(instance)} if pg.ENABLED else {}))
    refused = run("set-realm-url", "https://elsewhere.example.test", "--instance", str(instance),
                  env=dict(env, CHAT_APPLIANCE_EXTERNAL_HOST="chat.example.test:443"))
    assert refused.returncode == 1 and "EXTERNAL_HOST" in refused.stderr
    bad = run("set-realm-url", "chat.example.test/path", "--instance", str(instance), env=env)
    assert bad.returncode == 1 and "is not an organization URL" in bad.stderr
    changed = run("set-realm-url", "https://chat.example.test/", "--instance", str(instance), env=env)
    assert changed.returncode == 0, changed.stderr

    server = serve(instance, smtp)
    try:
        assert realm_url(server) == "https://chat.example.test"
        assert invite_link(server, owner).startswith("https://chat.example.test/join/")
        assert reset_mail_link(server, smtp, owner[0]).startswith("https://chat.example.test/accounts/password/reset/")
    finally:
        server.stop()
