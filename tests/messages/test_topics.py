"""GET /users/me/{stream_id}/topics."""

from chat_appliance.actions.channels import subscribe_users_to_streams
from chat_appliance.models import database

from ..support.helpers import err, ok, send


def test_topics_newest_first_with_max_id(org):
    """Are a channel's topics listed newest first, each with its newest message id, topics that
    differ only in case counted as one, and the empty topic named per allow_empty_topic_name?"""
    hamlet = org.client(org.hamlet)
    a1 = send(hamlet, topic="apple")
    send(hamlet, topic="")
    b1 = send(hamlet, topic="banana")
    a2 = send(hamlet, topic="Apple")
    topics = ok(hamlet.get(f"users/me/{org.denmark.id}/topics"))["topics"]
    assert topics == [{"name": "Apple", "max_id": a2}, {"name": "banana", "max_id": b1},
                      {"name": "general chat", "max_id": b1 - 1}]
    assert a1 < a2
    raw = ok(hamlet.get(f"users/me/{org.denmark.id}/topics", allow_empty_topic_name=True))["topics"]
    assert raw[2]["name"] == ""


def test_private_channel_history_rules(org):
    """In a private channel with protected history, does a late subscriber see only the topics of
    messages they received, and a non-subscriber get 'Invalid channel ID'?"""
    admin = org.client(org.admin)
    early = send(admin, to="secret", topic="before")
    with database.connection_context():
        subscribe_users_to_streams([org.secret], [org.othello])
    late = send(admin, to="secret", topic="after")
    assert [t["name"] for t in ok(admin.get(f"users/me/{org.secret.id}/topics"))["topics"]] == ["after", "before"]
    assert ok(org.client(org.othello).get(f"users/me/{org.secret.id}/topics"))["topics"] == [
        {"name": "after", "max_id": late}]
    err(org.client(org.cordelia).get(f"users/me/{org.secret.id}/topics"), 400, "BAD_REQUEST", "Invalid channel ID")
    assert early < late


def test_topics_and_their_names_come_from_one_statement(org, statements):
    """Are a channel's topics, their newest ids and those messages' names read by one statement
    (one snapshot)? Read apart, a topic's newest message deleted in between (a resolve notice
    taken back when the topic is unresolved) left an id without a name: a 500."""
    hamlet = org.client(org.hamlet)
    send(hamlet, topic="apple")
    send(hamlet, topic="banana")
    statements.clear()
    assert [t["name"] for t in ok(hamlet.get(f"users/me/{org.denmark.id}/topics"))["topics"]][:2] == ["banana", "apple"]
    reading_messages = [sql for sql, _ in statements if '"message"' in sql]
    assert len(reading_messages) == 1, reading_messages
