"""Missed-message emails: direct messages and mentions to someone away, mailed after the delay to
a real SMTP server on loopback, batched, and not mailed when read, online or turned off."""

import re
import time

import pytest

from ..support.helpers import ok, register
from ..support.smtp_sink import body

DELAY = 0.4


@pytest.fixture
def away(app, mail):
    """Mail goes to the `smtp` server; missed messages are mailed after DELAY seconds."""
    app.config["MISSED_MESSAGE_EMAIL_DELAY_SECONDS"] = DELAY
    return mail


def dm(org, sender, to, content):
    return ok(org.client(sender).post("messages", type="direct", to=[to.id], content=content))["id"]


def to_channel(org, sender, stream, topic, content):
    return ok(org.client(sender).post("messages", type="stream", to=stream.name, topic=topic, content=content))["id"]


def test_a_missed_direct_message_is_mailed_after_the_delay(org, away):
    """Is a DM to someone with no event queue mailed to them once the delay has passed (not
    before), with the rendered message, its sender, and a link to the conversation?"""
    sent = time.monotonic()
    message_id = dm(org, org.hamlet, org.othello, "Meet me at **noon**, <script>x</script>")
    [message] = away.wait()
    assert time.monotonic() - sent >= DELAY
    assert message["To"] == "\"Othello, the Moor of Venice\" <othello@zulip.example>"
    assert message["Subject"] == "DMs with King Hamlet"
    assert message["From"].addresses[0].display_name == "King Hamlet (Zulip Dev)"
    html, text = body(message, "html"), body(message, "plain")
    assert "<strong>noon</strong>" in html and "<script>" not in html
    assert "Meet me at **noon**" in text
    link = f"{org.realm.url.rstrip('/')}/#narrow/dm/{org.hamlet.id}-King-Hamlet/near/{message_id}"
    assert link in text and link in html


def test_messages_within_the_delay_are_batched_in_one_mail(app, org, away):
    """Do two DMs sent within the delay arrive as one mail holding both, oldest first?"""
    app.config["MISSED_MESSAGE_EMAIL_DELAY_SECONDS"] = 2  # both sends within it, even on a loaded machine
    dm(org, org.hamlet, org.othello, "first")
    dm(org, org.hamlet, org.othello, "second")
    [message] = away.wait()
    text = body(message, "plain")
    assert text.index("first") < text.index("second")
    assert len(away.settle(DELAY + 0.3)) == 1


def test_a_missed_mention_is_mailed_and_a_plain_message_is_not(org, away):
    """Is a channel message mentioning someone away mailed to them (subject: channel > topic), while
    a message that mentions nobody is mailed to no one?"""
    to_channel(org, org.hamlet, org.denmark, "castle", "just chatting")
    to_channel(org, org.hamlet, org.denmark, "castle", "@**Othello, the Moor of Venice** look at this")
    [message] = away.wait()
    assert message["To"].addresses[0].addr_spec == "othello@zulip.example"
    assert message["Subject"] == "#Denmark > castle"
    assert "look at this" in body(message, "plain") and "just chatting" not in body(message, "plain")
    assert re.search(r"/#narrow/channel/\d+-Denmark/topic/castle/near/\d+", body(message, "plain"))
    assert len(away.settle(DELAY + 0.3)) == 1


def test_someone_with_an_event_queue_is_not_mailed(org, away):
    """Is a DM to someone whose client holds an event queue (online) not mailed?"""
    register(org.client(org.othello), event_types=["message"])
    dm(org, org.hamlet, org.othello, "you are here")
    assert away.settle(DELAY + 0.5) == []


def test_a_message_read_before_the_delay_ends_is_not_mailed(app, org, away):
    """Is a DM the person reads (from another client, say their phone, without a queue) before
    the delay ends left out of the mail, while an unread one in the same batch is mailed?"""
    # Three requests must land within the delay: DELAY was too short for a loaded CI machine.
    app.config["MISSED_MESSAGE_EMAIL_DELAY_SECONDS"] = 3
    read_id = dm(org, org.hamlet, org.othello, "read on the phone")
    dm(org, org.cordelia, org.othello, "still unread")
    ok(org.client(org.othello).post("messages/flags", messages=[read_id], op="add", flag="read"))
    [message] = away.wait()
    assert "still unread" in body(message, "plain") and "read on the phone" not in body(message, "plain")
    assert len(away.settle(DELAY + 0.3)) == 1


def test_nothing_is_mailed_with_the_setting_off(org, away):
    """With enable_offline_email_notifications off, are DMs and mentions not mailed?"""
    ok(org.client(org.othello).patch("settings", enable_offline_email_notifications=False))
    dm(org, org.hamlet, org.othello, "quiet please")
    to_channel(org, org.hamlet, org.denmark, "castle", "@**Othello, the Moor of Venice** hello")
    assert away.settle(DELAY + 0.5) == []


def test_wildcard_mentions_follow_wildcard_mentions_notify(org, away):
    """Is an @**all** mention mailed to an away subscriber, but not to one who turned
    wildcard_mentions_notify off?"""
    ok(org.client(org.admin).patch("settings", wildcard_mentions_notify=False))
    to_channel(org, org.hamlet, org.denmark, "castle", "@**all** dinner is served")
    [message] = away.wait()
    assert message["To"].addresses[0].addr_spec == "othello@zulip.example"
    assert len(away.settle(DELAY + 0.3)) == 1


def test_without_email_configured_nothing_is_noted(org, app):
    """Without EMAIL_HOST, does a DM to someone away leave nothing pending?"""
    dm(org, org.hamlet, org.othello, "no mail server")
    assert app.extensions["chat_appliance"].workers["missed_messages"]._pending == {}


def test_a_direct_message_from_a_muted_user_is_not_mailed(org, away):
    """Is a DM from someone the recipient muted (it arrives read) left unmailed?"""
    ok(org.client(org.othello).post(f"users/me/muted_users/{org.hamlet.id}"))
    dm(org, org.hamlet, org.othello, "you muted me")
    assert away.settle(DELAY + 0.5) == []


def test_a_followed_topic_is_mailed_as_its_setting_says(org, away):
    """Is a plain message in a topic someone away follows mailed to them, while a message in
    another topic is not, and nothing once enable_followed_topic_email_notifications is off?"""
    othello = org.client(org.othello)
    ok(othello.post("user_topics", stream_id=org.denmark.id, topic="Castle", visibility_policy=3))
    to_channel(org, org.hamlet, org.denmark, "lunch", "not followed")
    to_channel(org, org.hamlet, org.denmark, "castle", "the walls are up")
    [message] = away.wait()
    assert message["To"].addresses[0].addr_spec == "othello@zulip.example"
    assert message["Subject"] == "#Denmark > castle"
    assert "the walls are up" in body(message, "plain") and "not followed" not in body(message, "plain")
    assert "a topic you follow" in body(message, "plain")
    assert len(away.settle(DELAY + 0.3)) == 1

    ok(othello.patch("settings", enable_followed_topic_email_notifications=False))
    to_channel(org, org.hamlet, org.denmark, "castle", "the roof too")
    everything = away.settle(DELAY + 0.5)  # every mail received so far: still only the first
    assert [body(m, "plain") for m in everything] == [body(message, "plain")]
