"""Outgoing webhook bots (bot_type 3) and embedded bots (bot_type 4): creation, what they are
sent, and how their answers come back. The webhook's service is a real local HTTP server."""

import time

import pytest

from chat_appliance.models import Message, UserProfile, database

from ..support.helpers import err, ok
from ..support.webhook_receiver import WebhookReceiver


@pytest.fixture
def receiver():
    server = WebhookReceiver()
    yield server
    server.close()


@pytest.fixture
def allow_private(app):
    """The receiver runs on loopback, which `serve` refuses unless allowed."""
    app.config["OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES"] = True


def create_outgoing_bot(org, url, interface_type=1, short_name="hook"):
    created = ok(org.client(org.hamlet).post("bots", full_name="Hook Bot", short_name=short_name, bot_type=3,
                                             payload_url=url, interface_type=interface_type))
    with database.connection_context():
        return UserProfile.get_by_id(created["user_id"])


def messages_from(bot, timeout=10):
    """Message rows the bot sent, waiting (bounded) for at least one to appear."""
    deadline = time.monotonic() + timeout
    while True:
        with database.connection_context():
            rows = list(Message.select().where(Message.sender == bot.id).order_by(Message.id))
        if rows or time.monotonic() > deadline:
            return rows
        time.sleep(0.05)


def test_outgoing_webhook_needs_a_public_payload_url(org):
    """Is an outgoing webhook bot refused without a payload_url, with a non-http one, and (by
    default) with one on a loopback address, creating nothing?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post("bots", full_name="Hook Bot", short_name="hook", bot_type=3), 400, "BAD_REQUEST",
        "Missing 'payload_url' argument")
    err(hamlet.post("bots", full_name="Hook Bot", short_name="hook", bot_type=3, payload_url="ftp://x.example/"),
        400, "BAD_REQUEST")
    body = err(hamlet.post("bots", full_name="Hook Bot", short_name="hook", bot_type=3,
                           payload_url="http://127.0.0.1:9/hook"), 400, "BAD_REQUEST")
    assert "private" in body["msg"]
    with database.connection_context():
        assert not UserProfile.select().where(UserProfile.full_name == "Hook Bot").exists()


def test_service_token_is_shown_to_administrators(org, allow_private, receiver):
    """Does /register's realm_bots give the owner (and administrators, not other members) the
    bot's services with its base_url, interface and token?"""
    bot = create_outgoing_bot(org, receiver.url, interface_type=2)
    state = ok(org.client(org.hamlet).post("register", fetch_event_types=["realm_bot"]))
    [entry] = [b for b in state["realm_bots"] if b["user_id"] == bot.id]
    [service] = entry["services"]
    assert service["base_url"] == receiver.url and service["interface"] == 2 and len(service["token"]) >= 16
    assert entry["bot_type"] == 3 and entry["owner_id"] == org.hamlet.id
    admin_state = ok(org.client(org.admin).post("register", fetch_event_types=["realm_bot"]))
    assert bot.id in {b["user_id"] for b in admin_state["realm_bots"]}
    other_state = ok(org.client(org.othello).post("register", fetch_event_types=["realm_bot"]))
    assert bot.id not in {b["user_id"] for b in other_state["realm_bots"]}


def test_mention_calls_the_webhook_and_the_answer_is_posted(org, allow_private, receiver):
    """Does an @-mention in a channel POST Zulip's payload (bot_email, bot_full_name, data, token,
    trigger, the message with Markdown content) and post the answer's `content` in the same topic?"""
    receiver.answer = (200, {"content": "pong"})
    bot = create_outgoing_bot(org, receiver.url)
    with database.connection_context():
        token = bot.services.get().token
    sent = ok(org.client(org.othello).post("messages", type="stream", to="Denmark", topic="pings",
                                           content="@**Hook Bot** ping"))
    [request] = receiver.wait_for(1)
    payload = request["body"]
    assert request["content_type"].startswith("application/json")
    assert (payload["bot_email"], payload["bot_full_name"], payload["token"], payload["trigger"]) == (
        bot.email, "Hook Bot", token, "mention")
    assert payload["data"] == "@**Hook Bot** ping"
    assert payload["message"]["id"] == sent["id"] and payload["message"]["content"] == "@**Hook Bot** ping"
    assert payload["message"]["sender_email"] == org.othello.email
    [reply] = messages_from(bot)
    assert (reply.content, reply.topic, reply.stream_id) == ("pong", "pings", org.denmark.id)


def test_direct_message_triggers_and_response_not_required_posts_nothing(org, allow_private, receiver):
    """Is a direct message to the bot sent with trigger direct_message, and does an answer with
    response_not_required leave the conversation alone?"""
    bot = create_outgoing_bot(org, receiver.url)
    ok(org.client(org.othello).post("messages", type="direct", to=[bot.id], content="hello bot"))
    [request] = receiver.wait_for(1)
    assert request["body"]["trigger"] == "direct_message" and request["body"]["data"] == "hello bot"
    assert messages_from(bot, timeout=0.5) == []


def test_reply_to_a_direct_message_goes_to_the_conversation(org, allow_private, receiver):
    """Does `response_string` come back as the bot's direct message to the sender?"""
    receiver.answer = (200, {"response_string": "got it"})
    bot = create_outgoing_bot(org, receiver.url)
    ok(org.client(org.othello).post("messages", type="direct", to=[bot.id], content="note this"))
    [reply] = messages_from(bot)
    assert reply.content == "got it" and reply.stream_id is None
    messages = ok(org.client(org.othello).get("messages", anchor="newest", num_before=1, num_after=0))["messages"]
    assert messages[-1]["sender_id"] == bot.id and messages[-1]["content"] == "<p>got it</p>"


def test_silent_mentions_and_other_channels_messages_trigger_nothing(org, allow_private, receiver):
    """Do a silent mention (@_**name**) and a message that does not mention the bot leave it uncalled?"""
    create_outgoing_bot(org, receiver.url)
    othello = org.client(org.othello)
    ok(othello.post("messages", type="stream", to="Denmark", topic="t", content="@_**Hook Bot** quiet"))
    ok(othello.post("messages", type="stream", to="Denmark", topic="t", content="no mention here"))
    ok(othello.post("messages", type="stream", to="Denmark", topic="t", content="@**Hook Bot** loud"))
    [request] = receiver.wait_for(1)
    assert request["body"]["data"] == "@**Hook Bot** loud"
    time.sleep(0.3)
    assert len(receiver.requests) == 1


def test_slack_interface_sends_a_form_and_reads_text(org, allow_private, receiver):
    """Does the Slack-compatible interface POST a form (token, user_name, text, trigger_word, ...)
    and post the answer's `text`?"""
    receiver.answer = (200, {"text": "slack says hi"})
    bot = create_outgoing_bot(org, receiver.url, interface_type=2)
    ok(org.client(org.othello).post("messages", type="stream", to="Denmark", topic="slack",
                                    content="@**Hook Bot** hi"))
    [request] = receiver.wait_for(1)
    form = request["body"]
    assert request["content_type"].startswith("application/x-www-form-urlencoded")
    assert form["text"] == "@**Hook Bot** hi" and form["trigger_word"] == "mention"
    assert form["user_name"] == org.othello.full_name and form["channel_name"] == "Denmark"
    [reply] = messages_from(bot)
    assert reply.content == "slack says hi" and reply.topic == "slack"


def test_failing_webhook_is_reported_to_the_owner(org, allow_private, receiver):
    """Does a webhook answering HTTP 500 get the bot's owner a direct message from the
    Notification Bot naming the status, and post nothing as the bot?"""
    receiver.answer = (500, {"error": "boom"})
    bot = create_outgoing_bot(org, receiver.url)
    ok(org.client(org.othello).post("messages", type="direct", to=[bot.id], content="hi"))
    receiver.wait_for(1)
    deadline = time.monotonic() + 10
    notice = None
    while notice is None and time.monotonic() < deadline:
        messages = ok(org.client(org.hamlet).get("messages", anchor="newest", num_before=5, num_after=0,
                                                 apply_markdown=False))["messages"]
        notice = next((m for m in messages if m["sender_email"].startswith("notification-bot")), None)
        time.sleep(0.05)
    assert notice is not None, "the owner was not told"
    assert "500" in notice["content"] and "Hook Bot" in notice["content"]
    assert messages_from(bot, timeout=0.2) == []


def test_unreachable_webhook_is_retried_then_reported(org, allow_private, app, monkeypatch):
    """Is a payload URL that refuses connections tried OUTGOING_WEBHOOK_ATTEMPTS times before
    the owner hears of it?"""
    app.config["OUTGOING_WEBHOOK_ATTEMPTS"] = 2  # not the default (3)
    dispatcher = app.extensions["chat_appliance"].workers["service_bots"]
    dispatcher.retry_delays = (0.01,)
    tried = []
    real_post = dispatcher.post

    def counted_post(url, *args):
        tried.append(url)
        return real_post(url, *args)

    monkeypatch.setattr(dispatcher, "post", counted_post)
    closed = WebhookReceiver()
    url = closed.url
    closed.close()
    bot = create_outgoing_bot(org, url)
    ok(org.client(org.othello).post("messages", type="direct", to=[bot.id], content="anyone there?"))
    deadline = time.monotonic() + 10
    notice = None
    while notice is None and time.monotonic() < deadline:
        messages = ok(org.client(org.hamlet).get("messages", anchor="newest", num_before=3, num_after=0,
                                                 apply_markdown=False))["messages"]
        notice = next((m for m in messages if m["sender_email"].startswith("notification-bot")), None)
        time.sleep(0.05)
    assert notice is not None, "the owner was not told about the unreachable webhook"
    assert tried == [url, url]
    assert "Hook Bot" in notice["content"] and "could not be completed" in notice["content"]


def test_embedded_helloworld_answers(org):
    """Does an embedded helloworld bot (zulip-bots) answer a direct message in-process?"""
    created = ok(org.client(org.hamlet).post("bots", full_name="Hello Bot", short_name="hello", bot_type=4,
                                             service_name="helloworld"))
    with database.connection_context():
        bot = UserProfile.get_by_id(created["user_id"])
    ok(org.client(org.othello).post("messages", type="direct", to=[bot.id], content="hi"))
    [reply] = messages_from(bot)
    assert "beep boop" in reply.content


def test_embedded_bot_names_are_checked(org):
    """Is an unknown embedded bot name refused?"""
    err(org.client(org.hamlet).post("bots", full_name="X Bot", short_name="x", bot_type=4, service_name="nope"),
        400, "BAD_REQUEST", "Invalid embedded bot name.")
