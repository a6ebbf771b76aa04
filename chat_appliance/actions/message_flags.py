"""Personal message flags: set and clear over message ids, with update_message_flags events."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.access import user_can_access_message
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.messages import direct_recipients
from chat_appliance.lib import event_catalogue
from chat_appliance.models import FLAG_BITS, Message, Subscription, UserMessage, unread_conditions

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import UserProfile

# Flags a user may change by hand; the others are computed by the server.
USER_EDITABLE_FLAGS = ("read", "starred", "collapsed")


def check_flag(flag: str) -> int:
    """A flag users may set, or BAD_REQUEST."""
    if flag not in USER_EDITABLE_FLAGS:
        raise JsonableError(f"Invalid flag: '{flag}'")
    return FLAG_BITS[flag]


def do_update_message_flags(user: UserProfile, op: str, flag: str, message_ids: list[int]) -> list[int]:
    """Add or remove a flag on the user's rows for these messages; returns the ids changed."""
    bit = check_flag(flag)
    message_ids = list(dict.fromkeys(message_ids))
    if not message_ids:
        return []
    with write_transaction():
        rows = UserMessage.select(UserMessage.message, UserMessage.flags).where(
            (UserMessage.user_profile == user) & UserMessage.message.in_(message_ids))
        if op == "add":
            changed = [row.message_id for row in rows if not row.flags & bit]
            expression = UserMessage.flags.bin_or(bit)
        else:
            changed = [row.message_id for row in rows if row.flags & bit]
            expression = UserMessage.flags.bin_and(~bit)
        for start in range(0, len(changed), 500):
            chunk = changed[start:start + 500]
            UserMessage.update(flags=expression).where(
                (UserMessage.user_profile == user) & UserMessage.message.in_(chunk)).execute()
    if changed:
        publish_flags_event(user, op, flag, changed)
    return changed


def message_details(user: UserProfile, message_ids: list[int]) -> JSONDict:
    """Zulip's message_details of a read-flag removal: enough for clients to count unreads again."""
    details = {}
    rows = (UserMessage.select(UserMessage.message, UserMessage.flags, Message.id, Message.stream, Message.topic,
                               Message.recipient)
            .join(Message, on=(UserMessage.message == Message.id))
            .where((UserMessage.user_profile == user) & UserMessage.message.in_(message_ids)))

    recipients = direct_recipients({row.message.recipient_id for row in rows if row.message.stream_id is None})
    for row in rows:
        mentioned = bool(row.flags & (FLAG_BITS["mentioned"] | FLAG_BITS["stream_wildcard_mentioned"]
                                      | FLAG_BITS["topic_wildcard_mentioned"]))
        if row.message.stream_id is not None:
            details[str(row.message.id)] = {"type": "stream", "stream_id": row.message.stream_id,
                                            "topic": row.message.topic, "mentioned": mentioned}
        else:
            others = [u["id"] for u in recipients.get(row.message.recipient_id, []) if u["id"] != user.id]
            details[str(row.message.id)] = {"type": "private", "mentioned": mentioned, "user_ids": others}
    return details


def publish_flags_event(user: UserProfile, op: str, flag: str, message_ids: list[int]) -> None:
    """update_message_flags, with both `op` and the legacy `operation` (zulip-terminal reads either)."""
    details = message_details(user, message_ids) if flag == "read" and op == "remove" else None
    publish(event_catalogue.update_message_flags(op, flag, sorted(message_ids), details), [user.id])


def unsubscribed_stream_ids(user: UserProfile, message_ids: list[int]) -> list[int]:
    """Channels of these messages the user is no longer subscribed to."""
    stream_ids = {m.stream_id for m in Message.select(Message.stream).where(
        Message.id.in_(list(message_ids)) & Message.stream.is_null(False)).distinct()}
    subscribed = {s.stream_id for s in Subscription.select(Subscription.stream).where(
        (Subscription.user_profile == user) & Subscription.active)}
    return sorted(stream_ids - subscribed)


def do_update_flags_by_id(user: UserProfile, op: str, flag: str, message_ids: list[int]) -> list[int]:
    """POST /messages/flags: the flag on messages by id. Messages the user may read but has no
    row for are refused, except that starring one keeps a historical copy (as Zulip)."""
    check_flag(flag)
    with write_transaction():
        owned = {row.message_id for row in UserMessage.select(UserMessage.message).where(
            (UserMessage.user_profile == user) & UserMessage.message.in_(message_ids))}
        for message_id in set(message_ids) - owned:
            message = Message.get_or_none(Message.id == message_id)
            if message is None or not user_can_access_message(user, message):
                raise JsonableError("Invalid message(s)")
            if flag == "starred" and op == "add":
                UserMessage.insert(user_profile=user, message=message_id,
                                   flags=FLAG_BITS["read"] | FLAG_BITS["historical"]).on_conflict_ignore().execute()
        return do_update_message_flags(user, op, flag, message_ids)


def do_update_flags_in_range(user: UserProfile, op: str, flag: str,
                             message_ids: list[int]) -> tuple[list[int], list[int] | None]:
    """POST /messages/flags/narrow: the flag on a fetched range. Marking unread skips messages of
    channels the user left. Returns (ids changed, skipped channel ids or None)."""
    check_flag(flag)
    skipped_streams = None
    if flag == "read" and op == "remove":
        skipped_streams = unsubscribed_stream_ids(user, message_ids)
        if skipped_streams:
            skipped = {m.id for m in Message.select(Message.id).where(
                Message.id.in_(message_ids) & Message.stream.in_(skipped_streams))}
            message_ids = [mid for mid in message_ids if mid not in skipped]
    return do_update_message_flags(user, op, flag, message_ids), skipped_streams


def do_mark_read(user: Any, *, stream: Any = None, topic: str | None = None) -> Any:
    """Mark the user's unread messages read: all of them, a channel's, or one topic's."""
    condition = Message.id > 0
    if stream is not None:
        condition = Message.stream == stream.id
    if topic is not None:
        condition &= Message.topic_key == topic.casefold()
    unread = sorted({row.message_id for part in unread_conditions() for row in
                     UserMessage.select(UserMessage.message).join(Message, on=(UserMessage.message == Message.id))
                     .where((UserMessage.user_profile == user) & part & condition)})
    return do_update_message_flags(user, "add", "read", unread)
