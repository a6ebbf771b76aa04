"""POST /messages: addressing forms, topics, limits, permissions, mentions, policies."""

import pytest

from ..support import pg
from ..support.helpers import err, ok

HELD_ANSWERS_ARE_SQLITES = pytest.mark.skipif(pg.ENABLED, reason="held answers are SQLite's group commit")


def send_stream(client, stream="Denmark", topic="greetings", content="hello", **extra):
    return client.post("messages", type="stream", to=stream, topic=topic, content=content, **extra)


def fetch(client, msg_id):
    return ok(client.get(f"messages/{msg_id}"))["message"]


def test_send_to_channel_by_name_id_and_list(org):
    """Is `to` accepted as a channel name, a channel id, and a JSON list holding one name?"""
    client = org.client(org.hamlet)
    ids = [ok(send_stream(client, stream=to))["id"] for to in ("Denmark", org.denmark.id, ["Denmark"])]
    for msg_id in ids:
        message = fetch(client, msg_id)
        assert message["display_recipient"] == "Denmark" and message["stream_id"] == org.denmark.id
        assert message["subject"] == "greetings" and message["type"] == "stream"


def test_type_channel_and_subject_alias(org):
    """Do type=channel and the legacy `subject` alias work?"""
    client = org.client(org.hamlet)
    msg_id = ok(client.post("messages", type="channel", to="Denmark", subject="old style", content="x"))["id"]
    assert fetch(client, msg_id)["subject"] == "old style"


def test_direct_message_forms(org):
    """Are direct messages accepted with user ids, emails, a comma-separated string, type private/direct?"""
    client = org.client(org.hamlet)
    forms = [("direct", [org.othello.id]), ("private", [org.othello.email]), ("private", org.othello.email),
             ("direct", f"{org.othello.email},{org.cordelia.email}")]
    for kind, to in forms:
        msg_id = ok(client.post("messages", type=kind, to=to, content="hi"))["id"]
        message = fetch(org.client(org.othello), msg_id)
        assert message["type"] == "private" and org.othello.id in [u["id"] for u in message["display_recipient"]]


def test_sender_in_recipients_is_ignored_unless_alone(org):
    """Does listing the sender among recipients change nothing, and does a message to oneself work?"""
    client = org.client(org.hamlet)
    a = fetch(client, ok(client.post("messages", type="direct", to=[org.othello.id, org.hamlet.id], content="a"))["id"])
    b = fetch(client, ok(client.post("messages", type="direct", to=[org.othello.id], content="b"))["id"])
    assert a["recipient_id"] == b["recipient_id"]
    me = fetch(client, ok(client.post("messages", type="direct", to=[org.hamlet.id], content="note"))["id"])
    assert [u["id"] for u in me["display_recipient"]] == [org.hamlet.id]


def test_unknown_channel(org):
    """Does a message to a missing channel give STREAM_DOES_NOT_EXIST with the `stream` field?"""
    body = err(send_stream(org.client(org.hamlet), stream="nowhere"), 400, "STREAM_DOES_NOT_EXIST",
               "Channel 'nowhere' does not exist")
    assert body["stream"] == "nowhere"


def test_private_channel_outsider_sees_does_not_exist(org):
    """Does a non-subscriber posting to a private channel learn only that it does not exist?"""
    err(send_stream(org.client(org.othello), stream="secret"), 400, "STREAM_DOES_NOT_EXIST")


def test_guest_cannot_post_to_unsubscribed_public_channel(org):
    """May a guest post only where it is subscribed?"""
    err(send_stream(org.client(org.guest), stream="Denmark"), 400, "STREAM_DOES_NOT_EXIST")
    ok(send_stream(org.client(org.guest), stream="Verona"))


def test_direct_message_to_unknown_user(org):
    """Is a direct message to a user who does not exist BAD_REQUEST?"""
    err(org.client(org.hamlet).post("messages", type="direct", to=[99999], content="x"), 400, "BAD_REQUEST",
        "Invalid user ID 99999")
    err(org.client(org.hamlet).post("messages", type="direct", to=["ghost@zulip.example"], content="x"), 400,
        "BAD_REQUEST", "Invalid email 'ghost@zulip.example'")


def test_topic_rules(org):
    """Is a topic required for channel messages, and are (no topic) and the display name the empty topic?"""
    client = org.client(org.hamlet)
    err(client.post("messages", type="stream", to="Denmark", content="x"), 400, "BAD_REQUEST", "Missing topic")
    for alias in ("(no topic)", "general chat", ""):
        msg_id = ok(send_stream(client, topic=alias))["id"]
        assert fetch(client, msg_id)["subject"] == "general chat"
        assert ok(client.get(f"messages/{msg_id}", allow_empty_topic_name=True))["message"]["subject"] == ""


def test_length_limits(org, app):
    """Are over-long content and topics refused, and empty content too?"""
    client = org.client(org.hamlet)
    err(send_stream(client, content="x" * 10001), 400, "BAD_REQUEST", "Message too long (limit: 10000 characters)")
    err(send_stream(client, topic="t" * 61), 400, "BAD_REQUEST", "Topic too long (limit: 60 characters)")
    err(send_stream(client, content="   "), 400, "BAD_REQUEST", "Message must not be empty")


def test_null_bytes_in_content(org):
    """Is content with a NUL byte refused?"""
    err(send_stream(org.client(org.hamlet), content="a\x00b"), 400, "BAD_REQUEST")


def test_queue_id_and_local_id_require_each_other(org):
    """Does queue_id without local_id (and the reverse) give a missing-argument error?"""
    client = org.client(org.hamlet)
    err(send_stream(client, queue_id="q1"), 400, "REQUEST_VARIABLE_MISSING", "Missing 'local_id' argument")
    err(send_stream(client, local_id="l1"), 400, "REQUEST_VARIABLE_MISSING", "Missing 'queue_id' argument")


def test_client_from_user_agent(org):
    """Does the message's client come from the User-Agent's product name?"""
    client = org.client(org.hamlet)
    client.headers["User-Agent"] = "ZulipPython/0.9.1 (Debian GNU/Linux; 12)"
    assert fetch(client, ok(send_stream(client))["id"])["client"] == "ZulipPython"


def test_read_by_sender_heuristic(org):
    """Do messages from API clients start unread for their sender, from human clients read,
    and does read_by_sender override?"""
    client = org.client(org.hamlet)
    client.headers["User-Agent"] = "ZulipPython/0.9.1"
    assert "read" not in fetch(client, ok(send_stream(client))["id"])["flags"]
    client.headers["User-Agent"] = "ZulipTerminal/0.7.0 Linux"
    assert "read" in fetch(client, ok(send_stream(client))["id"])["flags"]
    client.headers["User-Agent"] = "ZulipPython/0.9.1"
    assert "read" in fetch(client, ok(send_stream(client, read_by_sender=True))["id"])["flags"]


def test_mentions_set_flags(org):
    """Do @**Name**, @**Name|id** set `mentioned` for the target, and silent mentions not?"""
    client = org.client(org.hamlet)
    loud = ok(send_stream(client, content="@**Othello, the Moor of Venice** look"))["id"]
    by_id = ok(send_stream(client, content=f"@**Othello, the Moor of Venice|{org.othello.id}** look"))["id"]
    silent = ok(send_stream(client, content="@_**Othello, the Moor of Venice** fyi"))["id"]
    othello = org.client(org.othello)
    assert "mentioned" in fetch(othello, loud)["flags"] and "mentioned" in fetch(othello, by_id)["flags"]
    assert "mentioned" not in fetch(othello, silent)["flags"]
    assert 'class="user-mention"' in fetch(othello, loud)["content"]


def test_wildcard_mentions_set_flags(org):
    """Do @**all** and @**topic** set the wildcard flags?"""
    client = org.client(org.hamlet)
    ok(send_stream(org.client(org.othello), topic="party", content="I am here"))
    everyone = ok(send_stream(client, topic="party", content="@**all** hello"))["id"]
    topic = ok(send_stream(client, topic="party", content="@**topic** hello"))["id"]
    flags = fetch(org.client(org.othello), everyone)["flags"]
    assert "stream_wildcard_mentioned" in flags and "wildcard_mentioned" in flags
    assert "topic_wildcard_mentioned" in fetch(org.client(org.othello), topic)["flags"]
    # Admin was not a topic participant.
    assert "topic_wildcard_mentioned" not in fetch(org.client(org.admin), topic)["flags"]


def test_stream_wildcard_needs_permission_in_big_channels(org):
    """Is @**all** in a channel with more than 15 subscribers refused to members, allowed to admins?"""
    from chat_appliance.actions.channels import subscribe_users_to_streams
    from chat_appliance.actions.users import do_create_user
    from chat_appliance.models import database

    with database.connection_context():
        extra = [do_create_user(org.realm, f"u{i}@zulip.example", "pw-long-enough", f"User {i}", password_method="pbkdf2:sha256:1")
                 for i in range(14)]
        subscribe_users_to_streams([org.denmark], extra)
    err(send_stream(org.client(org.hamlet), content="@**all** hi"), 400, "STREAM_WILDCARD_MENTION_NOT_ALLOWED")
    ok(send_stream(org.client(org.admin), content="@**all** hi"))
    # In a small channel members may.
    ok(send_stream(org.client(org.hamlet), stream="Verona", content="@**all** hi"))


def test_welcome_message_for_new_users(org):
    """Does every new user have a welcome direct message from the Welcome Bot?"""
    body = ok(org.client(org.othello).get("messages", anchor="newest", num_before=10, num_after=0,
                                          narrow=[{"operator": "is", "operand": "dm"}]))
    assert any(m["sender_email"].startswith("welcome-bot@") for m in body["messages"])


def test_automatic_follow_on_initiation(org):
    """Does starting a topic report automatic_new_visibility_policy (followed), and not the next message?"""
    client = org.client(org.hamlet)
    first = ok(send_stream(client, topic="fresh topic"))
    assert first["automatic_new_visibility_policy"] == 3
    assert "automatic_new_visibility_policy" not in ok(send_stream(client, topic="fresh topic"))
    topics = ok(client.get("user_topics"))["user_topics"]
    assert {"stream_id": org.denmark.id, "topic_name": "fresh topic", "visibility_policy": 3}.items() <= topics[0].items()


def test_render_endpoint(org):
    """Does POST /messages/render return rendered HTML and refuse over-long content?"""
    client = org.client(org.hamlet)
    assert ok(client.post("messages/render", content="**bold**"))["rendered"] == "<p><strong>bold</strong></p>"
    err(client.post("messages/render", content="x" * 10001), 400, "BAD_REQUEST")


def test_render_endpoint_empty_content(org):
    """Does POST /messages/render render empty or blank content to an empty string, as Zulip does,
    while a send of the same content is still refused?"""
    client = org.client(org.hamlet)
    assert ok(client.post("messages/render", content=""))["rendered"] == ""
    assert ok(client.post("messages/render", content="  \n "))["rendered"] == ""
    err(client.post("messages", type="stream", to="Denmark", topic="t", content=""), 400, "BAD_REQUEST")
    err(client.post("messages/render"), 400, "REQUEST_VARIABLE_MISSING")  # no content at all is still a missing argument


def test_html_is_escaped(org):
    """Is HTML typed by a user escaped in the stored rendering?"""
    client = org.client(org.hamlet)
    content = fetch(client, ok(send_stream(client, content="<script>alert(1)</script>"))["id"])["content"]
    assert "<script>" not in content and "&lt;script&gt;" in content


def sends_in_a_deferring_worker(sender_id, contents, **message):
    """Send `contents` one after another in a thread that allows deferred COMMITs, as a worker of
    `serve` runs requests, then settle the last COMMIT left open; returns (ids, debts)."""
    import threading

    from chat_appliance.actions.messages import check_send_message
    from chat_appliance.db.admission import turns
    from chat_appliance.models import UserProfile, database

    ids, debts = [], []

    def worker():
        with database.connection_context():
            sender = UserProfile.get_by_id(sender_id)
            for content in contents:
                turns.allow_deferred_commits(True)
                try:
                    ids.append(check_send_message(sender, content=content, client_name="test", limits=None,
                                                  defer_commit=True, **message)[0])
                    debts.append(turns.debt())
                finally:
                    turns.allow_deferred_commits(False)
            if debts[-1] is not None:
                debts[-1].settle()

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(10)
    return ids, debts


@HELD_ANSWERS_ARE_SQLITES
def test_sends_committed_together_keep_the_first_message_id_of_a_new_channel(org):
    """Two sends to a new channel that a worker runs one after the other, the first left
    uncommitted (its answer held, as under `serve`): the second reads the channel before the
    first is committed. Is first_message_id still the first message's id?"""
    from chat_appliance.models import Stream, database

    ok(org.client(org.hamlet).post("users/me/subscriptions", subscriptions='[{"name": "fresh"}]'))
    ids, debts = sends_in_a_deferring_worker(org.hamlet.id, ("first", "second"), message_type="stream",
                                             to="fresh", topic="t")
    assert len(ids) == 2 and debts[0].batch is debts[1].batch  # committed together
    with database.connection_context():
        assert Stream.get(Stream.name == "fresh").first_message_id == ids[0]


@HELD_ANSWERS_ARE_SQLITES
def test_a_held_direct_message_event_lists_its_recipients(org):
    """Under `serve` a send's COMMIT can be left for later. A first direct message creates its
    conversation, which the message event reads back to list the recipients: is that send
    committed at once, and a later one in the same conversation held, both events listing
    both users?"""
    from chat_appliance.events import bus

    events = []
    listener = bus.add_listener(lambda event, user_ids: events.append(event) if event["type"] == "message" else None)
    try:
        _ids, debts = sends_in_a_deferring_worker(org.hamlet.id, ("first", "second"), message_type="private",
                                                  to=[org.othello.id], topic=None)
    finally:
        bus.remove_listener(listener)
    assert debts[0] is None and debts[1] is not None
    assert [sorted(r["id"] for r in e["message"]["display_recipient"]) for e in events] == \
        [sorted([org.hamlet.id, org.othello.id])] * 2
