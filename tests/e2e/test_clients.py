"""End to end with unmodified clients against a real `chat-appliance serve` process: zulip-send,
call_on_each_message (and its re-register after the server lost its queue), and the zulip
library's calls for uploads, presence, bot storage and subscription settings."""

import json
import subprocess
import sys
import time

import pytest
import requests
import zulip

from ..support.clients import LineReader, script_path, write_zuliprc
from ..support.serve_process import ServeProcess

# Prints every message it receives as one JSON line: the library's own long-poll loop.
RECEIVER = """
import json, sys, zulip
client = zulip.Client(config_file=sys.argv[1])
print("READY", flush=True)
client.call_on_each_message(lambda m: print("MESSAGE " + json.dumps(
    {"id": m["id"], "content": m["content"], "sender_email": m["sender_email"]}), flush=True))
"""


@pytest.fixture
def server(tmp_path):
    proc = ServeProcess(tmp_path / "instance")
    yield proc
    proc.stop()


def make_user(server, owner, email, name):
    """A second human account (created by the owner), as a zulip Client of its own: its API key
    comes from POST /fetch_api_key, as zulip-terminal's login does."""
    password = "a long enough password"
    assert owner.create_user({"email": email, "password": password, "full_name": name})["result"] == "success"
    fetched = requests.post(server.url + "/api/v1/fetch_api_key", data={"username": email, "password": password},
                            timeout=10).json()
    assert fetched["result"] == "success", fetched
    return zulip.Client(email=fetched["email"], api_key=fetched["api_key"], site=server.url)


def test_zulip_send_stream_and_direct(server, tmp_path):
    """Does `zulip-send` deliver a stream message (--stream/--subject) and a direct message to an
    email, exiting 0 each time, and do both arrive as sent?"""
    rc = write_zuliprc(tmp_path / "zuliprc", server.email, server.api_key, server.url)
    send = script_path("zulip-send")
    subprocess.run([send, "--config-file", str(rc), "--stream", "general", "--subject", "cli",
                    "--message", "from **zulip-send**"], check=True, timeout=60, capture_output=True)
    subprocess.run([send, "--config-file", str(rc), server.email, "--message", "a note to myself"],
                   check=True, timeout=60, capture_output=True)
    client = zulip.Client(config_file=str(rc))
    messages = client.get_messages({"anchor": "newest", "num_before": 2, "num_after": 0, "narrow": [],
                                    "apply_markdown": False})["messages"]
    assert [(m["type"], m["content"]) for m in messages] == [
        ("stream", "from **zulip-send**"), ("private", "a note to myself")]
    assert messages[0]["display_recipient"] == "general" and messages[0]["subject"] == "cli"


def test_call_on_each_message_survives_a_restart(tmp_path):
    """Does call_on_each_message receive another user's message within a second, and after the
    server restarts (its queues lost) re-register by itself and receive the next one?"""
    server = ServeProcess(tmp_path / "instance")
    receiver = None
    try:
        owner = zulip.Client(email=server.email, api_key=server.api_key, site=server.url)
        sender = make_user(server, owner, "othello@example.com", "Othello")
        rc = write_zuliprc(tmp_path / "zuliprc", server.email, server.api_key, server.url)
        receiver = LineReader([sys.executable, "-c", RECEIVER, str(rc)])
        receiver.next_line("READY", timeout=30)
        time.sleep(0.5)  # let it register
        sent_at = time.monotonic()
        first = sender.send_message({"type": "stream", "to": "general", "subject": "live", "content": "one"})
        received = json.loads(receiver.next_line("MESSAGE ", timeout=5))
        assert received["id"] == first["id"] and received["content"] == "one"
        assert received["sender_email"] == sender.email
        assert time.monotonic() - sent_at < 1.0

        server.stop()
        server = ServeProcess(tmp_path / "instance", port=server.port)
        # The library retries the lost long-poll, gets BAD_EVENT_QUEUE_ID and registers again; a
        # message sent before it has re-registered is not replayed, so send until one arrives.
        sent_ids = set()
        for attempt in range(15):
            second = sender.send_message({"type": "stream", "to": "general", "subject": "live",
                                          "content": f"two {attempt}"})
            sent_ids.add(second["id"])
            try:
                received = json.loads(receiver.next_line("MESSAGE ", timeout=1))
                break
            except AssertionError:
                continue
        else:
            raise AssertionError("no message after the restart:\n" + "\n".join(receiver.seen))
        assert received["id"] in sent_ids
    finally:
        if receiver is not None:
            receiver.stop()
        server.stop()


def test_library_uploads_presence_storage_and_subscription_settings(server, tmp_path):
    """Do the zulip library's upload_file (multipart, the field named after the file's path) and
    get_attachments, update_presence / get_realm_presence / get_user_presence, update_storage /
    get_storage and update_subscription_settings work against serve, and is the uploaded file
    served back at its URL with the same HTTP Basic credentials?"""
    client = zulip.Client(email=server.email, api_key=server.api_key, site=server.url)
    source = tmp_path / "report.txt"
    source.write_bytes(b"quarterly numbers")
    with source.open("rb") as handle:
        uploaded = client.upload_file(handle)
    assert uploaded["result"] == "success", uploaded
    assert uploaded["uri"].startswith("/user_uploads/") and uploaded["uri"].endswith("/report.txt")
    download = requests.get(server.url + uploaded["uri"], auth=(server.email, server.api_key), timeout=10)
    assert download.status_code == 200 and download.content == b"quarterly numbers"
    assert [a["name"] for a in client.get_attachments()["attachments"]] == ["report.txt"]

    pinged = client.update_presence({"status": "active", "new_user_input": True})
    assert pinged["presences"][server.email]["aggregated"]["status"] == "active"
    assert server.email in client.get_realm_presence()["presences"]
    assert client.get_user_presence(server.email)["presence"]["aggregated"]["status"] == "active"

    assert client.update_storage({"storage": {"count": "3"}})["result"] == "success"
    assert client.get_storage({"keys": ["count"]})["storage"] == {"count": "3"}
    assert client.get_storage({"keys": ["missing"]})["result"] == "error"

    general = client.get_stream_id("general")["stream_id"]
    changed = client.update_subscription_settings([{"stream_id": general, "property": "color", "value": "#336699"},
                                                   {"stream_id": general, "property": "in_home_view", "value": False}])
    assert changed["result"] == "success", changed
    [sub] = [s for s in client.get_subscriptions()["subscriptions"] if s["stream_id"] == general]
    assert sub["color"] == "#336699" and sub["is_muted"] is True
