"""End to end: a real `chat-appliance serve` process and the unmodified zulip 0.9.1 client."""

import pytest
import zulip

from ..support.serve_process import ServeProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One serve for the module's tests that need no fresh start: each makes what it reads (its
    own channel, message or queue)."""
    proc = ServeProcess(tmp_path_factory.mktemp("serve") / "instance")
    yield proc
    proc.stop()


def test_serve_alone_creates_org_and_zulip_client_works(server):
    """Does `serve` on an empty instance print working owner credentials, and do the zulip
    client's get_profile, get_members, add_subscriptions and get_streams succeed against it?"""
    assert server.email and server.api_key
    client = zulip.Client(email=server.email, api_key=server.api_key, site=server.url)
    assert client.zulip_version.startswith("11.0")
    profile = client.get_profile()
    assert profile["result"] == "success" and profile["is_owner"] is True
    members = client.get_members()
    assert members["result"] == "success" and server.email in [m["email"] for m in members["members"]]
    added = client.add_subscriptions([{"name": "e2e-channel", "description": "made by the client"}])
    assert added["result"] == "success", added
    streams = client.get_streams()
    assert streams["result"] == "success" and "e2e-channel" in [s["name"] for s in streams["streams"]]


def test_sigterm_shuts_down_cleanly(tmp_path):
    """Does serve exit 0 on SIGTERM, saying so?"""
    proc = ServeProcess(tmp_path / "instance")
    assert proc.stop() == 0
    assert "Shut down cleanly." in "".join(proc.output)


def test_restart_keeps_the_organization(tmp_path):
    """Does a second serve on the same instance keep its data and not print new credentials?"""
    first = ServeProcess(tmp_path / "instance")
    first.stop()
    second = ServeProcess(tmp_path / "instance")
    try:
        assert second.api_key is None
        client = zulip.Client(email=first.email, api_key=first.api_key, site=second.url)
        assert client.get_profile()["result"] == "success"
    finally:
        second.stop()


def test_zulip_client_messaging(server):
    """Do the zulip client's send_message, get_messages and update_message_flags work against serve?"""
    client = zulip.Client(email=server.email, api_key=server.api_key, site=server.url)
    sent = client.send_message({"type": "stream", "to": "general", "subject": "e2e", "content": "hello **world**"})
    assert sent["result"] == "success", sent
    direct = client.send_message({"type": "private", "to": [server.email], "content": "note to self"})
    assert direct["result"] == "success", direct
    fetched = client.get_messages({"anchor": "newest", "num_before": 10, "num_after": 0,
                                   "narrow": [{"operator": "channel", "operand": "general"}]})
    assert fetched["result"] == "success"
    assert fetched["messages"][-1]["id"] == sent["id"]
    assert fetched["messages"][-1]["content"] == "<p>hello <strong>world</strong></p>"
    flagged = client.update_message_flags({"messages": [sent["id"]], "op": "add", "flag": "starred"})
    assert flagged["result"] == "success"
    starred = client.get_messages({"anchor": "newest", "num_before": 10, "num_after": 0,
                                   "narrow": [{"operator": "is", "operand": "starred"}]})
    assert [m["id"] for m in starred["messages"]] == [sent["id"]]


def test_zulip_client_register_and_get_events(server):
    """Does the zulip library's register + get_events work against a real serve process: a
    subscription made by the client arrives on its queue, and an unknown queue gives the error
    call_on_each_event re-registers on?"""
    client = zulip.Client(email=server.email, api_key=server.api_key, site=server.url)
    registered = client.register(event_types=["subscription", "stream"])
    assert registered["result"] == "success" and registered["last_event_id"] == -1
    assert client.add_subscriptions([{"name": "live"}])["result"] == "success"
    polled = client.get_events(queue_id=registered["queue_id"], last_event_id=-1)
    assert polled["result"] == "success", polled
    assert ("stream", "create") in [(e["type"], e["op"]) for e in polled["events"]]
    assert ("subscription", "add") in [(e["type"], e["op"]) for e in polled["events"]]
    missing = client.get_events(queue_id="gone", last_event_id=-1)
    assert missing["code"] == "BAD_EVENT_QUEUE_ID" and missing["msg"].startswith("Bad event queue id:")
    assert client.deregister(registered["queue_id"])["result"] == "success"
