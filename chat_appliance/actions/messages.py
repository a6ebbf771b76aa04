"""Sending messages: recipients, permissions, rendering, mentions, flags, topic policies."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import json
import re

from chat_appliance.db.connection import backend, bulk_insert, write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.access import (
    can_access_stream_metadata,
    find_users_by_emails,
    get_realm,
    get_stream_by_name,
    is_subscribed,
    stream_in_realm,
    users_in_realm,
)
from chat_appliance.lib.errors import JsonableError, StreamDoesNotExistError, StreamIdDoesNotExistError
from chat_appliance.lib.groups import is_user_in_group, is_user_in_setting, recursive_member_ids
from chat_appliance.lib.messages import EMPTY_TOPIC_ALIASES, flags_to_names, message_dicts
from chat_appliance.lib.serializers import user_group_setting, user_group_setting_defaults
from chat_appliance.lib.user_settings import user_setting
from chat_appliance.lib.widgets import WIDGET_MSG_TYPE, submessage_dict, widget_content
from chat_appliance.models import (
    FLAG_BITS,
    RECIPIENT_DIRECT_MESSAGE_GROUP,
    DirectMessageGroup,
    DirectMessageGroupMember,
    Message,
    Reaction,
    Recipient,
    Stream,
    UserGroup,
    new_user_message_rows,
    now,
)
from chat_appliance.models.base import insert_row, query_rows
from chat_appliance.models import TOPIC_FOLLOWED, TOPIC_INHERIT, TOPIC_MUTED, TOPIC_UNMUTED, SubMessage
from chat_appliance.lib.rendering import render_message, settle_upload_previews
from chat_appliance.lib.subscriptions import subscriber_ids
from chat_appliance.lib import event_catalogue
from chat_appliance.actions.uploads import claim_attachments
from chat_appliance.actions.personal_flags import apply_personal_flags
from chat_appliance.actions.user_topics import set_topic_visibility
from chat_appliance.actions.soft_deactivation import rows_to_skip, still_idle

if TYPE_CHECKING:
    from chat_appliance.config import Limits
    from chat_appliance.markdown.context import RenderResult
    from chat_appliance.models import UserProfile

# Wildcard mentions in channels with more subscribers (topics with more participants) than this
# need membership of the organization's can_mention_many_users_group (Zulip's threshold).
WILDCARD_MENTION_THRESHOLD = 15

# automatically_follow_topics_policy / automatically_unmute_topics_in_muted_streams_policy values.
AUTO_ON_PARTICIPATION, AUTO_ON_SEND, AUTO_ON_INITIATION, AUTO_NEVER = 1, 2, 3, 4
AUTOMATIC_POLICIES = (AUTO_ON_PARTICIPATION, AUTO_ON_SEND, AUTO_ON_INITIATION)

# Clients whose messages are typed by a person, so they start read for their sender
# (Zulip's heuristic when read_by_sender is omitted); integrations using a user's key do not.
HUMAN_CLIENTS = {"website", "zulipandroid", "zulipios", "zulipdesktop", "zulipmobile", "zulipelectron",
                 "zulipterminal", "ios", "android", "snipe", "test suite"}


def client_name_from_user_agent(user_agent: str) -> str:
    """Zulip's client name: the User-Agent's leading product name ("ZulipPython/0.9.1 (...)" ->
    "ZulipPython"); "Unspecified" without one."""
    match = re.match(r"^\s*([^/ (]+)", user_agent or "")
    return match.group(1)[:30] if match else "Unspecified"


def default_read_by_sender(client_name: str) -> bool:
    """Whether a message from this client starts read for its sender."""
    name = client_name.lower()
    return name in HUMAN_CLIENTS or "desktop app" in name


def normalize_topic(topic: str, max_length: int | None) -> str:
    """Strip; map "(no topic)" and the display name to the empty topic; enforce the length
    (max_length None: a topic the server wrote itself)."""
    topic = (topic or "").strip()
    if topic in EMPTY_TOPIC_ALIASES:
        topic = ""
    if max_length is not None and len(topic) > max_length:
        raise JsonableError(f"Topic too long (limit: {max_length} characters)")
    if any(ord(ch) < 32 for ch in topic):
        raise JsonableError("Invalid character in topic")
    return topic


def check_content(content: str, max_length: int | None) -> str:
    """Not empty, not over the limit (max_length None: content the server wrote itself)."""
    if not content.strip():
        raise JsonableError("Message must not be empty")
    if max_length is not None and len(content) > max_length:
        raise JsonableError(f"Message too long (limit: {max_length} characters)")
    return content.rstrip()


# --- recipients --------------------------------------------------------------------------------


def access_stream_for_send(sender: UserProfile, to: Any, at: int | None = None) -> Stream:
    """The channel a message is addressed to, if the sender may post there. `at`: the
    configuration generation to keep the reads with (lib/snapshots.py); None reads them."""
    if isinstance(to, list):
        if len(to) != 1:
            raise JsonableError("Invalid recipient: a channel message goes to exactly one channel")
        to = to[0]
    if isinstance(to, bool) or not isinstance(to, (int, str)):
        raise JsonableError("Invalid channel")
    if isinstance(to, int):
        stream = stream_in_realm(sender.realm_id, to, at)
        missing: JsonableError = StreamIdDoesNotExistError(to)
    else:
        stream = get_stream_by_name(sender.realm_id, to, at)
        missing = StreamDoesNotExistError(to.strip())
    # A channel the sender may not know of gives the same error as a missing one. System bots
    # (the Notification Bot's reports and move notes) post in any channel, private ones included.
    if stream is None or stream.deactivated:
        raise missing
    if sender.is_system_bot:
        return stream
    subscribed = is_subscribed(sender, stream, at)
    if not can_access_stream_metadata(sender, stream, subscribed=subscribed):
        raise missing
    if (stream.invite_only or sender.is_guest) and not subscribed:
        raise JsonableError(f"Not authorized to send to channel '{stream.name}'")
    if not is_user_in_group(sender, stream.settings["can_send_message_group"], at):
        raise JsonableError("You do not have permission to post in this channel.")
    return stream


def resolve_direct_recipients(sender: UserProfile, to: list[Any]) -> list[UserProfile]:
    """Users of a direct message: ids, emails, or a comma-separated email string."""
    if isinstance(to, str):
        to = [part.strip() for part in to.split(",") if part.strip()]
    elif isinstance(to, int) and not isinstance(to, bool):
        to = [to]
    if not isinstance(to, list) or not to:
        raise JsonableError("Message must have recipients")
    # One query for the ids and one for the addresses, however many there are (a query per id
    # made a long list hold a worker for seconds).
    by_id = users_in_realm(sender.realm_id, [i for i in to if isinstance(i, int) and not isinstance(i, bool)])
    by_email = find_users_by_emails(sender, [i for i in to if isinstance(i, str)])
    users = {}
    for item in to:
        if isinstance(item, int) and not isinstance(item, bool):
            user = by_id.get(item)
            if user is None:
                raise JsonableError(f"Invalid user ID {item}")
        elif isinstance(item, str):
            user = by_email[item]
            if user is None:
                raise JsonableError(f"Invalid email '{item}'")
        else:
            raise JsonableError("Invalid recipient")
        if not user.is_active and user.id != sender.id:
            raise JsonableError(f"'{user.email}' is no longer using Zulip.")
        users[user.id] = user
    # The sender in the list is ignored, unless they are the only recipient.
    if len(users) > 1:
        users.pop(sender.id, None)
    users[sender.id] = sender
    return list(users.values())


def find_dm_group(users: list[UserProfile]) -> DirectMessageGroup | None:
    """The direct-message conversation of exactly these users (sender included), if it exists."""
    key = ",".join(str(uid) for uid in sorted(u.id for u in users))
    return DirectMessageGroup.get_or_none(DirectMessageGroup.member_key == key)


def get_or_create_dm_group(users: list[UserProfile]) -> DirectMessageGroup:
    """The direct-message conversation of exactly these users (sender included)."""
    key = ",".join(str(uid) for uid in sorted(u.id for u in users))
    group = DirectMessageGroup.get_or_none(DirectMessageGroup.member_key == key)
    if group is None:
        recipient = Recipient.create(type=RECIPIENT_DIRECT_MESSAGE_GROUP)
        group = DirectMessageGroup.create(member_key=key, recipient=recipient, group_size=len(users))
        DirectMessageGroupMember.insert_many([{"group": group.id, "user_profile": u.id} for u in users]).execute()
    return group


# --- mentions and topic policies --------------------------------------------------------------


def topic_participant_ids(stream: Stream, topic_key: str) -> set[int]:
    """Users who sent or reacted to a message in the topic."""
    in_topic = Message.select(Message.id).where((Message.recipient == stream.recipient_id)
                                                & (Message.topic_key == topic_key))
    senders = {m.sender_id for m in Message.select(Message.sender).where(Message.id.in_(in_topic)).distinct()}
    reactors = {r.user_profile_id for r in Reaction.select(Reaction.user_profile)
                .where(Reaction.message.in_(in_topic)).distinct()}
    return senders | reactors


def check_wildcard_permission(sender: UserProfile, rendered: RenderResult, stream: Stream, topic_key: str,
                              subscriber_count: int, at: int | None = None) -> None:
    """Channel and topic wildcards in big conversations need can_mention_many_users_group."""
    if sender.is_system_bot:
        return
    allowed = lambda: is_user_in_group(sender, sender.realm.can_mention_many_users_group_id, at)  # noqa: E731
    if rendered.stream_wildcard and subscriber_count > WILDCARD_MENTION_THRESHOLD and not allowed():
        raise JsonableError("You do not have permission to use channel wildcard mentions in this channel.",
                            code="STREAM_WILDCARD_MENTION_NOT_ALLOWED")
    if rendered.topic_wildcard and not allowed():
        if len(topic_participant_ids(stream, topic_key)) > WILDCARD_MENTION_THRESHOLD:
            raise JsonableError("You do not have permission to use topic wildcard mentions in this topic.",
                                code="TOPIC_WILDCARD_MENTION_NOT_ALLOWED")


def check_group_mention_permission(sender: UserProfile, rendered: RenderResult) -> None:
    """A non-silent group mention needs membership of the group's can_mention_group (Zulip)."""
    if sender.is_system_bot or not rendered.mentioned_group_ids:
        return

    defaults = user_group_setting_defaults(sender.realm_id)
    for group in UserGroup.select().where(UserGroup.id.in_(list(rendered.mentioned_group_ids))):
        if not is_user_in_setting(sender, user_group_setting(group, "can_mention_group", defaults)):
            raise JsonableError(f"You are not allowed to mention user group '{group.name}'.")


def recipient_flags(rendered: RenderResult, recipient_ids: set[int], *, sender_id: int, read_by_sender: bool,
                    is_direct: bool, topic_participants: set[Any]) -> dict[int, int]:
    """Each recipient's initial flag bits."""
    mentioned = set(rendered.mentioned_user_ids)
    for group_id in rendered.mentioned_group_ids:
        mentioned |= recipient_ids & recursive_member_ids(group_id)
    flags = {}
    for uid in recipient_ids:
        bits = FLAG_BITS["is_private"] if is_direct else 0
        if uid in mentioned:
            bits |= FLAG_BITS["mentioned"]
        if rendered.stream_wildcard:
            bits |= FLAG_BITS["stream_wildcard_mentioned"]
        if rendered.topic_wildcard and (is_direct or uid in topic_participants):
            bits |= FLAG_BITS["topic_wildcard_mentioned"]
        if uid == sender_id and read_by_sender:
            bits |= FLAG_BITS["read"]
        flags[uid] = bits
    return flags


def automatic_policy_after_send(sender: UserProfile, stream: Stream, topic_key: str) -> int | None:
    """The policy the sender's automatic follow/unmute settings give the topic, if it changes.

    What it depends on (whether the topic is new, the sender's policy for it, whether the
    channel is muted for them) is read in one statement: each statement a send makes lets other
    threads take the interpreter."""
    follow = user_setting(sender, "automatically_follow_topics_policy")
    unmute = user_setting(sender, "automatically_unmute_topics_in_muted_streams_policy")
    if follow not in AUTOMATIC_POLICIES and unmute not in AUTOMATIC_POLICIES:
        return None
    ((topic_exists, current, muted),) = query_rows(
        'SELECT (SELECT 1 FROM "message" WHERE "recipient_id" = {p} AND "topic_key" = {p} LIMIT 1),'
        ' (SELECT "visibility_policy" FROM "user_topic" WHERE "user_profile_id" = {p} AND "stream_id" = {p}'
        ' AND "topic_key" = {p} LIMIT 1),'
        ' (SELECT "is_muted" FROM "subscription" WHERE "user_profile_id" = {p} AND "stream_id" = {p} LIMIT 1)',
        stream.recipient_id, topic_key, sender.id, stream.id, topic_key, sender.id, stream.id)
    topic_is_new = not topic_exists
    current = TOPIC_INHERIT if current is None else current
    if current != TOPIC_FOLLOWED and (follow in (AUTO_ON_PARTICIPATION, AUTO_ON_SEND)
                                      or (follow == AUTO_ON_INITIATION and topic_is_new)):
        return TOPIC_FOLLOWED
    if (muted and current in (TOPIC_INHERIT, TOPIC_MUTED)
            and (unmute in (AUTO_ON_PARTICIPATION, AUTO_ON_SEND)
                 or (unmute == AUTO_ON_INITIATION and topic_is_new))):
        return TOPIC_UNMUTED
    return None


# --- sending -----------------------------------------------------------------------------------


def link_facts(rendered: RenderResult) -> tuple[bool, bool, bool]:
    """(has_link, has_image, has_attachment) for has: narrows."""
    has_attachment = any("/user_uploads/" in link for link in rendered.links)
    return bool(rendered.links), bool(rendered.has_image), has_attachment


def check_send_message(sender: UserProfile, *, message_type: str, to: Any, topic: str | None, content: str,
                       client_name: str, limits: Limits | None, queue_id: str | None = None,
                       local_id: str | None = None, read_by_sender: bool | None = None,
                       date_sent: Any = None, defer_commit: bool = False) -> tuple[int, int | None]:
    """Validate, store and announce a message. Returns (message id, automatic policy or None).

    `limits` (config.Limits) bounds what users send; None for the server's own messages."""

    # What the send reads of its configuration (the organization, the channel, the sender's
    # subscription and permission groups, the subscribers, their mutes) is kept with the
    # configuration generation read before the sender's account (web/auth.py): a sender read
    # otherwise carries none, and reads it all.
    at = getattr(sender, "config_at", None)
    if at is not None:
        sender.realm = get_realm(sender.realm_id, at)
    content = check_content(content, limits and limits.max_message_length)  # type: ignore[arg-type]  # a Limits is truthy
    if read_by_sender is None:
        read_by_sender = default_read_by_sender(client_name) or sender.is_bot
    is_direct = message_type in ("direct", "private")
    stream, topic_key = None, ""  # type: Any, str  # a Stream whenever the message is a channel message
    if is_direct:
        users = resolve_direct_recipients(sender, to)
        topic = ""
    else:
        stream = access_stream_for_send(sender, to, at)
        if topic is None:
            raise JsonableError("Missing topic")
        topic = normalize_topic(topic, limits and limits.max_topic_length)  # type: ignore[arg-type]  # a Limits is truthy
        if topic == "" and sender.realm.settings.get("mandatory_topics"):
            raise JsonableError("Topics are required in this organization.")
        topic_key = topic.casefold()
    rendered = render_message(content, realm=sender.realm, sender=sender)
    check_group_mention_permission(sender, rendered)
    has_link, has_image, has_attachment = link_facts(rendered)
    automatic_policy = None
    timestamp = date_sent or now()
    # Everything the send only reads is worked out before the write transaction: writers take
    # turns, and under the GIL each query a writer makes while holding the turn can leave it
    # waiting for other threads' Python, with every other writer waiting behind it. (Zulip too
    # computes recipients before its transaction; a subscription changing in between decides
    # the message's audience either way, as it would a moment earlier or later.)
    if is_direct:
        recipient_ids = {u.id for u in users if u.is_active}
        participants = set()
    else:
        recipient_ids = subscriber_ids(stream.id, at)
        participants = topic_participant_ids(stream, topic_key) if rendered.topic_wildcard else set()
        check_wildcard_permission(sender, rendered, stream, topic_key, len(recipient_ids), at)
        if sender.id in recipient_ids:
            automatic_policy = automatic_policy_after_send(sender, stream, topic_key)
    # The sender always keeps a copy of what they sent, even in a channel they are not in.
    recipient_ids.add(sender.id)
    flags = recipient_flags(rendered, recipient_ids, sender_id=sender.id, read_by_sender=read_by_sender,
                            is_direct=is_direct, topic_participants=participants)
    apply_personal_flags(flags, sender.id, content, at)
    # Idle subscribers whose row would say nothing get none (actions/soft_deactivation.py).
    skip = set() if is_direct else rows_to_skip(stream.id, topic_key, flags, sender.id, at)
    dm_group = find_dm_group(users) if is_direct else None
    # Its COMMIT may be left for later (group_commit.py, "Held answers") only if nothing read
    # after the transaction, on another connection, needs what it writes: the message event
    # lists a direct message's recipients from its conversation, which a first message creates.
    deferrable = defer_commit and (not is_direct or dm_group is not None)
    with write_transaction(deferrable=deferrable):
        if skip:
            skip = still_idle(sender.realm_id, skip)
        if is_direct:
            recipient_id = (dm_group or get_or_create_dm_group(users)).recipient_id
        else:
            recipient_id = stream.recipient_id
        html = settle_upload_previews(sender.realm_id, rendered.html)
        message = insert_row(
            Message, realm=sender.realm_id, sender=sender, recipient=recipient_id, stream=stream, topic=topic,
            topic_key=topic_key, content=content, rendered_content=html, date_sent=timestamp,
            sending_client=client_name, is_me_message=rendered.is_me_message, has_link=has_link,
            has_image=has_image, has_attachment=has_attachment,
        )
        rows, pending = new_user_message_rows(
            message.id, {uid: bits for uid, bits in flags.items() if uid not in skip} if skip else flags)
        bulk_insert("user_message", ("user_profile_id", "message_id", "flags"), rows)
        if pending:
            bulk_insert("pending_unread_message", ("message_id",), [(message.id,)])
        backend().index_messages(Message._meta.database, [(message.id, topic, html)], new=True)
        claim_attachments(sender, message.id, content)
        if stream is not None and stream.first_message_id is None:
            # Conditional: `stream` was read before the transaction, and a send committed with
            # this one (group_commit.py) may have set it since.
            if type(stream).update(first_message_id=message.id).where(
                    (type(stream).id == stream.id) & type(stream).first_message_id.is_null()).execute():
                stream.first_message_id = message.id
        if automatic_policy is not None:
            set_topic_visibility(sender, stream, topic, automatic_policy)
        widget = widget_content(content)
        if widget is not None:
            # The widget is the message's first submessage, by its sender, in the message event.
            row = SubMessage.create(message=message.id, sender=sender.id, msg_type=WIDGET_MSG_TYPE,
                                    content=json.dumps(widget))
            message.fresh_submessages = [submessage_dict(row.id, message.id, sender.id, row.msg_type, row.content)]
    message.sender, message.stream = sender, stream
    publish_message_event(message, sender, flags, stream=stream, queue_id=queue_id, local_id=local_id)
    if automatic_policy is not None:
        publish(event_catalogue.user_topic(stream.id, topic, automatic_policy, timestamp), [sender.id])
    return message.id, automatic_policy


def publish_message_event(message: Message, sender: UserProfile, flags_by_user: dict[int, int], *,
                          stream: Stream | None, queue_id: str | None, local_id: str | None) -> None:
    """The message event (rendered and raw forms; each queue picks per its settings). `message`
    is the row just created, with its sender and channel attached: no reload."""

    data = message_dicts([message], sender, {}, apply_markdown=True, client_gravatar=False,
                         allow_empty_topic_name=True, fresh=True)[0]
    data.pop("flags")
    publish(event_catalogue.message(
        data,
        message.content,
        {uid: flags_to_names(bits) for uid, bits in flags_by_user.items()},
        queue_id,
        local_id,
        bool(stream and stream.invite_only),
        stream.id if stream else None,
        sender.realm_id,
    ), list(flags_by_user))


def internal_send_direct_message(sender: UserProfile, recipient: UserProfile, content: str) -> tuple[int, Any]:
    """A direct message from a system bot (the welcome message)."""
    return check_send_message(sender, message_type="private", to=[recipient.id], topic=None, content=content,
                              client_name="Internal", limits=None)
