"""End to end against a real `serve`: the zulip 0.9.1 library's methods (named ones where the library
has them, call_endpoint otherwise) for invitations, channel lifecycle, default channels, scheduled
messages and reminders, read receipts and edit typing; and the scheduler delivering on time, also
across a restart."""

import time

import pytest
import zulip

from ..support.clients import check, wait_for
from ..support.serve_process import ServeProcess
from ..support.smtp_sink import SmtpSink


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A serve whose mail (invitations) goes to an SMTP server on loopback."""
    smtp = SmtpSink()
    smtp.controller.start()
    proc = ServeProcess(tmp_path_factory.mktemp("part_a") / "instance", env=smtp.environment())
    proc.smtp = smtp
    yield proc
    proc.stop()
    smtp.controller.stop()


@pytest.fixture(scope="module")
def owner(server):
    return zulip.Client(email=server.email, api_key=server.api_key, site=server.url)


def call(client, method, url, **request):
    return check(client.call_endpoint(url=url, method=method, request=request))


def stream_id(client, name):
    return check(client.get_stream_id(name))["stream_id"]


def newest_message(client, narrow):
    return check(client.get_messages({"anchor": "newest", "num_before": 1, "num_after": 0,
                                      "apply_markdown": False, "narrow": narrow}))["messages"]


def test_invitation_methods(owner, server):
    """Do sending, listing, resending and revoking invitations and creating and revoking a reusable
    link work through call_endpoint, with links under the server's URL?"""
    general = stream_id(owner, "general")
    call(owner, "POST", "invites", invitee_emails="a@example.com, b@example.com", stream_ids=[general],
         invite_expires_in_minutes=60)
    link = call(owner, "POST", "invites/multiuse", invite_as=600)["invite_link"]
    assert link.startswith(server.url + "/join/")
    invites = call(owner, "GET", "invites")["invites"]
    emails = {i["email"]: i["id"] for i in invites if not i["is_multiuse"]}
    assert sorted(emails) == ["a@example.com", "b@example.com"]
    call(owner, "POST", f"invites/{emails['a@example.com']}/resend")
    mailed = sorted(m["To"].addresses[0].addr_spec for m in server.smtp.wait(3))
    assert mailed == ["a@example.com", "a@example.com", "b@example.com"]
    call(owner, "DELETE", f"invites/{emails['a@example.com']}")
    link_id = [i["id"] for i in invites if i["is_multiuse"]][0]
    call(owner, "DELETE", f"invites/multiuse/{link_id}")
    remaining = call(owner, "GET", "invites")["invites"]
    assert [i.get("email") for i in remaining] == ["b@example.com"]
    message_id = call(owner, "POST", "realm/test_welcome_bot_custom_message",
                      welcome_message_custom_text="Welcome!")["message_id"]
    assert isinstance(message_id, int)


def test_channel_methods(owner):
    """Do channels/create, add_default_stream, default_streams DELETE, get_subscription_status,
    get_stream_email_address, PATCH subscriptions, delete_stream and unarchiving work?"""
    me = check(owner.get_profile())["user_id"]
    new_id = call(owner, "POST", "channels/create", name="e2e-room", subscribers=[me], description="made here")["id"]
    check(owner.add_default_stream(new_id))
    call(owner, "DELETE", "default_streams", stream_id=new_id)
    assert check(owner.get_subscription_status(me, new_id))["is_subscribed"] is True
    assert "@" in check(owner.get_stream_email_address(new_id))["email"]
    body = call(owner, "PATCH", "users/me/subscriptions", add=[{"name": "e2e-other"}], delete=["e2e-room"])
    assert body["removed"] == ["e2e-room"]
    assert check(owner.get_subscription_status(me, new_id))["is_subscribed"] is False
    check(owner.delete_stream(new_id))
    names = [s["name"] for s in check(owner.get_streams())["streams"]]
    assert "e2e-room" not in names
    call(owner, "PATCH", f"streams/{new_id}", is_archived=False)
    assert "e2e-room" in [s["name"] for s in check(owner.get_streams(include_all_active=True))["streams"]]
    folders = [call(owner, "POST", "channel_folders/create", name=n)["channel_folder_id"] for n in ("x", "y")]
    call(owner, "PATCH", "channel_folders", order=list(reversed(folders)))
    assert [f["id"] for f in call(owner, "GET", "channel_folders")["channel_folders"]] == list(reversed(folders))


def test_message_methods(owner):
    """Do scheduled messages (create, list, edit, delete), reminders, read receipts and edit typing work?"""
    general = stream_id(owner, "general")
    future = int(time.time()) + 3600
    sm_id = call(owner, "POST", "scheduled_messages", type="stream", to=general, topic="later", content="soon",
                 scheduled_delivery_timestamp=future)["scheduled_message_id"]
    call(owner, "PATCH", f"scheduled_messages/{sm_id}", content="sooner")
    listed = call(owner, "GET", "scheduled_messages")["scheduled_messages"]
    assert [(s["scheduled_message_id"], s["content"]) for s in listed] == [(sm_id, "sooner")]
    call(owner, "DELETE", f"scheduled_messages/{sm_id}")
    assert call(owner, "GET", "scheduled_messages")["scheduled_messages"] == []
    msg = check(owner.send_message({"type": "stream", "to": "general", "topic": "t", "content": "x"}))["id"]
    reminder = call(owner, "POST", "reminders", message_id=msg, scheduled_delivery_timestamp=future, note="n")
    assert [r["reminder_id"] for r in call(owner, "GET", "reminders")["reminders"]] == [reminder["reminder_id"]]
    call(owner, "DELETE", f"reminders/{reminder['reminder_id']}")
    assert call(owner, "GET", f"messages/{msg}/read_receipts")["user_ids"] == []
    call(owner, "POST", f"messages/{msg}/typing", op="start")


def test_scheduler_sends_on_time(owner):
    """Does the running server send a scheduled message by itself once its time has come?"""
    general = stream_id(owner, "general")
    call(owner, "POST", "scheduled_messages", type="stream", to=general, topic="timed", content="right on time",
         scheduled_delivery_timestamp=int(time.time()) + 2)
    narrow = [{"operator": "channel", "operand": general}, {"operator": "topic", "operand": "timed"}]
    wait_for(lambda: newest_message(owner, narrow), timeout=20)
    assert call(owner, "GET", "scheduled_messages")["scheduled_messages"] == []


def test_scheduled_message_survives_restart(tmp_path):
    """Is a message that fell due while the server was stopped sent as soon as it starts again?"""
    instance = tmp_path / "instance"
    first = ServeProcess(instance)
    try:
        client = zulip.Client(email=first.email, api_key=first.api_key, site=first.url)
        general = stream_id(client, "general")
        due = int(time.time()) + 3
        call(client, "POST", "scheduled_messages", type="stream", to=general, topic="restart",
             content="sent after the restart", scheduled_delivery_timestamp=due)
    finally:
        assert first.stop() == 0
    # Start again only once it is due (stopping took part of the wait already).
    time.sleep(max(0.0, due + 0.2 - time.time()))
    second = ServeProcess(instance)
    try:
        client = zulip.Client(email=first.email, api_key=first.api_key, site=second.url)
        narrow = [{"operator": "channel", "operand": general}, {"operator": "topic", "operand": "restart"}]
        [message] = wait_for(lambda: newest_message(client, narrow), timeout=20)
        assert message["content"] == "sent after the restart"
    finally:
        second.stop()
