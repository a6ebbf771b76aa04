"""Deleting messages: one message (DELETE /messages/{id}) and a whole topic (delete_topic).

A message's reactions and personal rows go with it (foreign-key cascades); its search-index row
is removed by hand. A channel whose oldest message goes gets a new first_message_id and a
`stream` update event. delete_message events are published in the bulk form (`message_ids`);
the queue manager splits them for clients without bulk_message_deletion.
"""

from __future__ import annotations

from typing import Any

import time

from peewee import SQL, fn

from chat_appliance.db.connection import backend, write_transaction
from chat_appliance.events.bus import publish, publish_internal
from chat_appliance.lib import event_catalogue
from chat_appliance.models import FLAG_BITS, AttachmentMessage, Message, Stream, UserMessage
from chat_appliance.actions.channels import stream_audience_ids, subscriber_ids

# delete_topic deletes this many messages per transaction, so one request never holds the write
# lock for long and a timeout leaves whole batches deleted.
DELETE_TOPIC_BATCH_SIZE = 100

# A push notification a phone still shows for the message.
ACTIVE_PUSH = FLAG_BITS["active_mobile_push_notification"]


def delete_message_rows(messages: list[Message]) -> tuple[dict[int, Any], dict[int, Any]]:
    """Delete messages inside the caller's transaction.

    Returns ({message_id: holder user ids}, {stream_id: new first_message_id}) for the events.
    """
    ids = [m.id for m in messages]
    holders: dict[int, list[int]] = {mid: [] for mid in ids}
    notified: dict[int, list[int]] = {}
    for row in UserMessage.select(UserMessage.message, UserMessage.user_profile, UserMessage.flags).where(
            UserMessage.message.in_(ids)):
        holders[row.message_id].append(row.user_profile_id)
        if row.flags & ACTIVE_PUSH:
            notified.setdefault(row.user_profile_id, []).append(row.message_id)
    for user_id, message_ids in notified.items():
        # The rows that say which phones show these messages go with them: the push service
        # learns now, and takes the notifications off those phones once this commits.
        publish_internal({"type": "remove_push_notifications", "message_ids": sorted(message_ids)}, [user_id])
    AttachmentMessage.delete().where(AttachmentMessage.message_id.in_(ids)).execute()
    Message.delete().where(Message.id.in_(ids)).execute()
    backend().unindex_messages(Message._meta.database, ids)
    return holders, refresh_first_message_ids({m.stream_id for m in messages if m.stream_id is not None})


def refresh_first_message_ids(stream_ids: set[int]) -> dict[int, int | None]:
    """Recompute first_message_id of these channels; {stream_id: value} for those that changed."""
    changed = {}
    for stream in Stream.select().where(Stream.id.in_(list(stream_ids))):
        # By recipient: the (recipient, id) index answers MIN(id) without a scan.
        first = Message.select(fn.MIN(Message.id)).where(Message.recipient == stream.recipient_id).scalar()
        if first != stream.first_message_id:
            Stream.update(first_message_id=first).where(Stream.id == stream.id).execute()
            changed[stream.id] = first
    return changed


def notify_messages_deleted(messages: list[Message], holders: dict[int, list[int]],
                            first_ids: dict[int, int | None]) -> None:
    """One delete_message event per conversation, to the users who had the messages and, for a
    channel whose history is shared, its subscribers (who may have read it from history)."""
    groups: dict[Any, Any] = {}
    topics: dict[Any, Any] = {}
    for message in messages:
        key = (message.stream_id, message.topic_key, message.recipient_id)
        groups.setdefault(key, []).append(message.id)
        topics.setdefault(key, message.topic)
    for key, ids in groups.items():
        stream_id, topic = key[0], topics[key]
        audience = {uid for mid in ids for uid in holders.get(mid, ())}
        if stream_id is None:
            event = event_catalogue.delete_message(sorted(ids))
        else:
            stream = Stream.get_by_id(stream_id)
            if stream.history_public_to_subscribers:
                audience |= subscriber_ids(stream)
            event = event_catalogue.delete_message(sorted(ids), stream_id, topic)
        publish(event, audience)
    notify_first_message_ids(first_ids)


def notify_first_message_ids(first_ids: dict[int, int | None]) -> None:
    """stream update events for channels whose oldest message changed."""
    for stream_id, first in first_ids.items():
        stream = Stream.get_by_id(stream_id)
        publish(event_catalogue.stream_update_first_message_id(stream_id, stream.name, first),
                stream_audience_ids(stream))


def do_delete_messages(messages: list[Message]) -> None:
    """Delete these messages in one transaction, then tell their audience."""
    with write_transaction():
        holders, first_ids = delete_message_rows(messages)
    notify_messages_deleted(messages, holders, first_ids)


def do_delete_topic(stream: Stream, topic_key: str, *, time_budget_seconds: int, received_by: Any = None) -> bool:
    """Delete a topic's messages newest first, a batch per transaction, until none are left
    (True) or the time budget is spent with messages left (False). Returns whether it finished.
    With received_by, only the messages that user received."""
    deadline = time.monotonic() + time_budget_seconds
    in_topic = Message.select().where((Message.recipient == stream.recipient_id) & (Message.topic_key == topic_key))
    if received_by is not None:
        # By the (message, user) key, message by message.
        in_topic = in_topic.where(fn.EXISTS(UserMessage.select(SQL("1")).where(
            (UserMessage.message == Message.id) & (UserMessage.user_profile == received_by))))
    while True:
        batch = list(in_topic.order_by(Message.id.desc()).limit(DELETE_TOPIC_BATCH_SIZE))
        if not batch:
            return True
        # At least one batch per request, so a client repeating the request always progresses.
        do_delete_messages(batch)
        if time.monotonic() >= deadline:
            return not in_topic.exists()
