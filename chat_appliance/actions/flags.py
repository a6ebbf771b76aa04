"""Personal message flags: set and clear over message ids, with update_message_flags events."""

from ..db import write_transaction
from ..events.bus import publish
from ..lib.errors import JsonableError
from ..models import FLAG_BITS, Message, Subscription, UserMessage

# Flags a user may change by hand; the others are computed by the server.
USER_EDITABLE_FLAGS = ("read", "starred", "collapsed")


def check_flag(flag):
    """A flag users may set, or BAD_REQUEST."""
    if flag not in USER_EDITABLE_FLAGS:
        raise JsonableError(f"Invalid flag: '{flag}'")
    return FLAG_BITS[flag]


def do_update_message_flags(user, op, flag, message_ids):
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


def message_details(user, message_ids):
    """Zulip's message_details of a read-flag removal: enough for clients to count unreads again."""
    details = {}
    rows = (UserMessage.select(UserMessage.message, UserMessage.flags, Message.id, Message.stream, Message.topic,
                               Message.recipient)
            .join(Message, on=(UserMessage.message == Message.id))
            .where((UserMessage.user_profile == user) & UserMessage.message.in_(message_ids)))
    from ..lib.messages import direct_recipients

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


def publish_flags_event(user, op, flag, message_ids):
    """update_message_flags, with both `op` and the legacy `operation` (zulip-terminal reads either)."""
    event = {"type": "update_message_flags", "op": op, "operation": op, "flag": flag,
             "messages": sorted(message_ids), "all": False}
    if flag == "read" and op == "remove":
        event["message_details"] = message_details(user, message_ids)
    publish(event, [user.id])


def unsubscribed_stream_ids(user, message_ids):
    """Channels of these messages the user is no longer subscribed to."""
    stream_ids = {m.stream_id for m in Message.select(Message.stream).where(
        Message.id.in_(list(message_ids)) & Message.stream.is_null(False)).distinct()}
    subscribed = {s.stream_id for s in Subscription.select(Subscription.stream).where(
        (Subscription.user_profile == user) & Subscription.active)}
    return sorted(stream_ids - subscribed)
