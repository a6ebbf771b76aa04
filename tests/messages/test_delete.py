"""DELETE /messages/{id}, POST /streams/{id}/delete_topic, delete_message and first_message_id events."""

from chat_appliance.actions import message_delete
from chat_appliance.db.connection import backend
from chat_appliance.models import Message, Reaction, Stream, UserMessage, database

from ..support.helpers import err, get_events, ok, register, send, set_date_sent


def exists(message_id):
    with database.connection_context():
        return Message.select().where(Message.id == message_id).exists()


def search(client, word):
    body = ok(client.get("messages", anchor="newest", num_before=50, num_after=0, narrow=[["search", word]]))
    return [m["id"] for m in body["messages"]]


def test_sender_deletes_own_message_events_per_capability(org):
    """Does the sender's delete remove the message, and do recipients get delete_message in bulk
    form (message_ids) only when their queue declared bulk_message_deletion, else with message_id?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    mid = send(hamlet, content="ephemeral")
    legacy = register(othello, event_types=["delete_message"])["queue_id"]
    bulk = register(othello, event_types=["delete_message"],
                    client_capabilities={"bulk_message_deletion": True})["queue_id"]
    ok(hamlet.delete(f"messages/{mid}"))
    assert not exists(mid)
    err(othello.get(f"messages/{mid}"), 400, "BAD_REQUEST", "Invalid message(s)")
    [event] = get_events(othello, legacy)
    assert {k: v for k, v in event.items() if k != "id"} == {
        "type": "delete_message", "message_id": mid, "message_type": "stream", "stream_id": org.denmark.id,
        "topic": "castle"}
    [event] = get_events(othello, bulk)
    assert event["message_ids"] == [mid] and "message_id" not in event


def test_delete_permissions(org):
    """May members not delete others' messages, senders not after the 600 s limit, and
    administrators always?"""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet)
    err(org.client(org.othello).delete(f"messages/{mid}"), 400, "BAD_REQUEST",
        "You don't have permission to delete this message")
    err(org.client(org.moderator).delete(f"messages/{mid}"), 400, "BAD_REQUEST")
    set_date_sent(mid, 601)
    err(hamlet.delete(f"messages/{mid}"), 400, "BAD_REQUEST", "The time limit for deleting this message has passed")
    ok(org.client(org.admin).delete(f"messages/{mid}"))
    err(org.client(org.admin).delete(f"messages/{mid}"), 400, "BAD_REQUEST", "Invalid message(s)")


def test_deleting_oldest_message_updates_first_message_id(org):
    """Does deleting a channel's oldest message update first_message_id and send a stream update
    event with that property?"""
    hamlet = org.client(org.hamlet)
    first, second = send(hamlet, to="Verona"), send(hamlet, to="Verona")
    with database.connection_context():
        assert Stream.get_by_id(org.verona.id).first_message_id == first
    queue = register(org.client(org.cordelia), event_types=["stream"])["queue_id"]
    ok(hamlet.delete(f"messages/{first}"))
    with database.connection_context():
        assert Stream.get_by_id(org.verona.id).first_message_id == second
    [event] = get_events(org.client(org.cordelia), queue)
    assert (event["op"], event["property"], event["value"], event["stream_id"]) == (
        "update", "first_message_id", second, org.verona.id)


def test_delete_takes_reactions_rows_and_search_index(org):
    """Do a deleted message's reactions, personal rows and search-index row go with it?"""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet, content="platypus")
    assert search(hamlet, "platypus") == [mid]
    ok(org.client(org.othello).post(f"messages/{mid}/reactions", emoji_name="wave"))
    ok(hamlet.delete(f"messages/{mid}"))
    with database.connection_context():
        assert not Reaction.select().where(Reaction.message == mid).exists()
        assert not UserMessage.select().where(UserMessage.message == mid).exists()
        assert mid not in backend().indexed_message_ids(Message._meta.database)


def test_failed_delete_leaves_message(org, monkeypatch):
    """If the search index fails inside the delete's transaction, is the message still there,
    with its rows?"""
    from chat_appliance.db import connection as db

    hamlet = org.client(org.hamlet)
    mid = send(hamlet)

    def broken(*args, **kwargs):
        raise RuntimeError("index is down")

    monkeypatch.setattr(db.backend(), "unindex_messages", broken)
    assert hamlet.delete(f"messages/{mid}").status_code == 500
    monkeypatch.undo()
    assert exists(mid)
    assert ok(org.client(org.othello).get(f"messages/{mid}"))["message"]["flags"] == []


def test_delete_topic_admin_only_and_complete(org):
    """Is delete_topic refused to non-administrators with UNAUTHORIZED_PRINCIPAL, and does an
    administrator's request delete the whole topic (any case), leaving other topics, with one
    bulk event per batch?"""
    hamlet = org.client(org.hamlet)
    ids = [send(hamlet, topic="doomed"), send(hamlet, topic="Doomed")]
    keep = send(hamlet, topic="safe")
    err(hamlet.post(f"streams/{org.denmark.id}/delete_topic", topic_name="doomed"), 400, "UNAUTHORIZED_PRINCIPAL",
        "Must be an organization administrator")
    queue = register(org.client(org.othello), event_types=["delete_message"],
                     client_capabilities={"bulk_message_deletion": True})["queue_id"]
    body = ok(org.client(org.admin).post(f"streams/{org.denmark.id}/delete_topic", topic_name="doomed"))
    assert body["complete"] is True
    assert not any(exists(mid) for mid in ids) and exists(keep)
    [event] = get_events(org.client(org.othello), queue)
    assert event["message_ids"] == ids


def test_delete_topic_times_out_in_batches_newest_first(org, app, monkeypatch):
    """With a zero time budget and batches of 2, does each request delete one batch, newest first,
    answering complete=false until the topic is gone?"""
    hamlet = org.client(org.hamlet)
    ids = [send(hamlet, topic="long") for _ in range(5)]
    app.config["DELETE_TOPIC_TIME_BUDGET_SECONDS"] = 0
    monkeypatch.setattr(message_delete, "DELETE_TOPIC_BATCH_SIZE", 2)
    admin = org.client(org.admin)
    assert ok(admin.post(f"streams/{org.denmark.id}/delete_topic", topic_name="long"))["complete"] is False
    assert [exists(mid) for mid in ids] == [True, True, True, False, False]
    assert ok(admin.post(f"streams/{org.denmark.id}/delete_topic", topic_name="long"))["complete"] is False
    assert ok(admin.post(f"streams/{org.denmark.id}/delete_topic", topic_name="long"))["complete"] is True
    assert not any(exists(mid) for mid in ids)


def test_delete_topic_general_chat_is_empty_topic(org):
    """Does topic_name 'general chat' delete the empty topic?"""
    hamlet = org.client(org.hamlet)
    mid = send(hamlet, topic="")
    ok(org.client(org.admin).post(f"streams/{org.denmark.id}/delete_topic", topic_name="general chat"))
    assert not exists(mid)


def test_channel_and_bot_owner_delete_rights(org):
    """Does a channel's can_delete_any_message_group let a moderator delete others' messages
    there, and may a bot's owner delete the bot's messages?"""
    from ..support.helpers import grant_in_channel

    mid = send(org.client(org.hamlet))
    err(org.client(org.moderator).delete(f"messages/{mid}"), 400, "BAD_REQUEST")
    grant_in_channel(org.denmark, "can_delete_any_message_group", "role:moderators")
    ok(org.client(org.moderator).delete(f"messages/{mid}"))
    bot = org.client(org.bot)
    bot_message = ok(bot.post("messages", type="stream", to="general", topic="bot", content="beep"))["id"]
    err(org.client(org.othello).delete(f"messages/{bot_message}"), 400, "BAD_REQUEST")
    ok(org.client(org.hamlet).delete(f"messages/{bot_message}"))
    assert not exists(bot_message)
