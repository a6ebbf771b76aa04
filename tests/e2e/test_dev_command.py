"""End to end: `chat-appliance dev` on a fresh folder starts a server on the sample organization,
and every zuliprc it writes works with the zulip library."""

import configparser
import os
import subprocess
import sys

import pytest
import requests
import zulip

from ..support import pg
from ..support.clients import wait_for
from ..support.serve_process import ServeProcess, free_port


@pytest.fixture(scope="module")
def dev_server(tmp_path_factory):
    """One `dev` for the module (it builds the sample organization, seconds of work): its tests
    read what it made, and none but the mail test sends mail."""
    folder = tmp_path_factory.mktemp("dev") / "dev"
    port = free_port()
    env = dict(os.environ)
    if pg.ENABLED:
        # A database of its own, as ServeProcess gives each instance: the tests' working database is
        # reset before each test.
        env["CHAT_APPLIANCE_DATABASE_URL"] = pg.database_for_instance(folder)
    process = subprocess.Popen([sys.executable, "-m", "chat_appliance", "dev", "--instance", str(folder),
                                "--port", str(port), "--quiet"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines = []
    for line in process.stdout:
        lines.append(line)
        if line.startswith("Serving on"):
            break
    url = f"http://127.0.0.1:{port}"
    wait_for(lambda: _up(url), timeout=30)
    yield folder, url, "".join(lines)
    process.terminate()
    process.wait(timeout=15)


def _up(url):
    try:
        return requests.get(url + "/api/v1/server_settings", timeout=1).ok
    except requests.ConnectionError:
        return False


def test_every_written_zuliprc_works(dev_server):
    """Does each zuliprc `dev` writes authenticate as the account it names, people and bots,
    and does the printed table name every one of them?"""
    folder, url, output = dev_server
    files = sorted((folder / "zuliprc").glob("*.zuliprc"))
    assert len(files) >= 9
    kinds = set()
    for path in files:
        client = zulip.Client(config_file=str(path))
        profile = client.get_profile()
        parser = configparser.ConfigParser()
        parser.read(path)
        if profile.get("msg") == "This API is not available to incoming webhook bots.":
            # An incoming webhook bot's key opens only /api/v1/external/*, as on Zulip: it posts there.
            answer = requests.post(f"{url}/api/v1/external/json", params={
                "api_key": parser["api"]["key"], "stream": "general", "topic": "zuliprc"}, json={"ok": 1}, timeout=10)
            assert answer.status_code == 200, (path, answer.text)
            kinds.add((True, "incoming webhook"))
            continue
        assert profile["result"] == "success", (path, profile)
        assert profile["email"] == parser["api"]["email"] and parser["api"]["site"] == url
        assert parser["api"]["email"] in output
        kinds.add((profile["is_bot"], profile["role"]))
    assert (False, 100) in kinds and (False, 200) in kinds and (False, 600) in kinds and (True, 400) in kinds
    botserverrc = configparser.ConfigParser()
    botserverrc.read(folder / "zuliprc" / "botserverrc")
    assert set(botserverrc["helloworld"]) >= {"email", "key", "site", "token"}


def test_sample_organization_has_what_bot_authors_play_with(dev_server):
    """Are there several channels (one private) with a few hundred messages in several topics,
    reactions, a direct conversation, a user group, and is /dev_fetch_api_key on?"""
    folder, url, _output = dev_server
    hamlet = zulip.Client(config_file=str(folder / "zuliprc" / "hamlet.zuliprc"))
    streams = hamlet.get_subscriptions()["subscriptions"]
    assert len(streams) >= 4 and any(s["invite_only"] for s in streams)
    messages = hamlet.get_messages({"anchor": "newest", "num_before": 400, "num_after": 0})["messages"]
    assert len(messages) >= 200
    assert len({m["subject"] for m in messages if m["type"] == "stream"}) >= 4
    assert any(m["reactions"] for m in messages) and any(m["type"] == "private" for m in messages)
    assert any(g["name"] == "engineers" for g in hamlet.get_user_groups()["user_groups"])
    key = requests.post(url + "/api/v1/dev_fetch_api_key", data={"username": "iago@example.com"}).json()
    assert key["result"] == "success" and key["email"] == "iago@example.com"


def test_reset_refuses_a_folder_dev_did_not_make(tmp_path):
    """Does `dev --reset` refuse to delete a folder it did not create, leaving it untouched?"""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "precious.txt").write_text("keep me")
    result = subprocess.run([sys.executable, "-m", "chat_appliance", "dev", "--instance", str(folder), "--reset"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "not created by" in result.stderr
    assert (folder / "precious.txt").read_text() == "keep me"


def test_dev_fetch_api_key_does_not_exist_under_serve(tmp_path):
    """Are /dev_fetch_api_key and the /emails page a 404 on a server started with `serve`?"""
    server = ServeProcess(tmp_path / "instance")
    try:
        response = requests.post(server.url + "/api/v1/dev_fetch_api_key", data={"username": server.email})
        assert response.status_code == 404 and response.json()["result"] == "error"
        assert requests.get(server.url + "/emails", timeout=10).status_code == 404
    finally:
        server.stop()


def test_dev_keeps_mail_and_shows_it_at_emails(dev_server):
    """Without an SMTP server, does `dev` keep the mail it would send (a password reset here) and
    show it at /emails, its HTML part served sandboxed?"""
    import json

    folder, url, _output = dev_server
    person = next(a for a in json.loads((folder / "accounts.json").read_text())["accounts"] if a["password"])
    assert requests.get(url + "/emails", timeout=10).text.count("<article>") == 0
    answer = requests.post(url + "/accounts/password/reset", data={"email": person["email"]},
                           headers={"X-Requested-With": "XMLHttpRequest"}, timeout=10)
    assert answer.json()["result"] == "success"
    page = requests.get(url + "/emails", timeout=10)
    assert page.status_code == 200 and "Reset your password for" in page.text
    assert f"{url}/accounts/password/reset/" in page.text
    part = requests.get(url + "/emails/0.html", timeout=10)
    assert part.status_code == 200 and "Reset password</a>" in part.text
    assert part.headers["Content-Security-Policy"].startswith("sandbox;")
