"""Editing messages: content, topic and channel (PATCH /messages/{id}), resolving topics, and the
Notification Bot's notes about moves.

Each edit is one transaction that prepends one entry to Message.edit_history per changed message
(the API's edit_history shape: only the changed parts, with their previous values); both the
message's `edit_history` and GET /messages/{id}/history are produced from it.

Moving to another channel (decided here, after Zulip's semantics): active subscribers of the new
channel who had no copy get one, marked read so a move creates no unread messages; users who had
a copy but cannot read the new channel (it is private and they are not subscribed, or they are a
guest not subscribed to it) lose their copy and get delete_message events instead of the update.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import hashlib

from chat_appliance.db.connection import backend, write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.access import access_stream_by_id, can_read_stream_history
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.message_permissions import check_channel_move, check_content_edit, check_topic_move
from chat_appliance.lib.messages import flags_to_names, message_audience_ids
from chat_appliance.lib.system_bots import NOTIFICATION_BOT, system_bot
from chat_appliance.models import (EMPTY_TOPIC_DISPLAY_NAME, FLAG_BITS, TOPIC_INHERIT, TOPIC_UNMUTED, Message,
                                   Subscription, UserMessage, UserProfile, UserTopic, now)
from chat_appliance.lib.rendering import render_message, render_topic_links, settle_upload_previews
from chat_appliance.lib import event_catalogue
from chat_appliance.actions.alert_words import users_with_alert_word_in
from chat_appliance.actions.channels import subscriber_ids
from chat_appliance.actions.message_delete import do_delete_messages, notify_first_message_ids, refresh_first_message_ids
from chat_appliance.actions.uploads import relink_attachments
from chat_appliance.actions.messages import (
    access_stream_for_send,
    check_content,
    check_send_message,
    check_wildcard_permission,
    link_facts,
    normalize_topic,
    recipient_flags,
    topic_participant_ids,
)

if TYPE_CHECKING:
    from chat_appliance.config import Limits
    from chat_appliance.markdown.context import RenderResult
    from chat_appliance.models import Stream

RESOLVED_TOPIC_PREFIX = "✔ "
PROPAGATE_MODES = ("change_one", "change_later", "change_all")
MENTION_BITS = FLAG_BITS["mentioned"] | FLAG_BITS["stream_wildcard_mentioned"] | FLAG_BITS["topic_wildcard_mentioned"]
# Resolving then quickly unresolving (or the reverse) deletes the first note instead of posting a
# second one, so an accidental click leaves no trace (Zulip's grace period).
RESOLVE_UNDO_GRACE_SECONDS = 60
RESOLVE_NOTE_ENDINGS = ("has marked this topic as resolved.", "has marked this topic as unresolved.")
# Statements stay well under SQLite's limit of bound variables (32766) for big moves.
ROWS_PER_STATEMENT = 500
# Zulip stores an edit that empties a message as this text rather than refusing it.
DELETED_CONTENT = "(deleted)"


def resolve_kind(old_topic: str, new_topic: str) -> str | None:
    """'resolve' or 'unresolve' when the rename only adds or removes the resolved prefix."""
    if new_topic.startswith(RESOLVED_TOPIC_PREFIX) and new_topic[len(RESOLVED_TOPIC_PREFIX):] == old_topic:
        return "resolve"
    if old_topic.startswith(RESOLVED_TOPIC_PREFIX) and old_topic[len(RESOLVED_TOPIC_PREFIX):] == new_topic:
        return "unresolve"
    return None


class EditPlan:
    """A validated edit: what changes, ready for do_update_message."""
    def __init__(self, message):
        self.message = message
        self.content = None
        self.rendered: Any = None
        self.topic = None
        self.stream = None
        self.propagate_mode = "change_one"
        self.notify_old = False
        self.notify_new = True
        self.limits = None
        # 'resolve' or 'unresolve' when the edit only adds or removes the resolved prefix.
        self.resolve_only = None

    @property
    def moves(self) -> bool:
        return self.topic is not None or self.stream is not None


def check_update_message(user: UserProfile, message: Message, *, content: str | None, topic: str | None,
                         stream_id: int | None, propagate_mode: str, notify_old: bool, notify_new: bool, limits: Limits,
                         prev_content_sha256: str | None = None) -> EditPlan:
    """Validate an edit against Zulip's rules (lib/message_permissions.py); returns an EditPlan."""
    plan = EditPlan(message)
    plan.limits = limits
    plan.propagate_mode, plan.notify_old, plan.notify_new = propagate_mode, notify_old, notify_new
    if propagate_mode != "change_one" and topic is None and stream_id is None:
        raise JsonableError("Invalid propagate_mode without topic edit")
    if content is None and topic is None and stream_id is None:
        raise JsonableError("Nothing to change")
    if message.stream_id is None and (topic is not None or stream_id is not None):
        raise JsonableError("Direct messages cannot have topics." if topic is not None
                            else "Direct messages cannot be moved to channels.")
    if topic is not None:
        new_topic = normalize_topic(topic, limits.max_topic_length)
        if new_topic == "" and user.realm.settings.get("mandatory_topics"):
            raise JsonableError("Topics are required in this organization.")
        if new_topic in (RESOLVED_TOPIC_PREFIX.strip(), RESOLVED_TOPIC_PREFIX + EMPTY_TOPIC_DISPLAY_NAME):
            raise JsonableError("General chat cannot be marked as resolved")
        if new_topic != message.topic:
            plan.topic = new_topic
    if stream_id is not None and stream_id != message.stream_id:
        destination = access_stream_by_id(user, stream_id)
        access_stream_for_send(user, destination.id)
        plan.stream = destination
    if content is not None:
        if plan.stream is not None:
            raise JsonableError("Cannot change message content while changing channel")
        check_content_edit(user, message)
        # Feature level 379: a client names the content it edited, so a concurrent edit is not lost.
        if prev_content_sha256 is not None and prev_content_sha256 != hashlib.sha256(
                message.content.encode()).hexdigest():
            raise JsonableError("The message was edited since the client loaded it.")
        content = check_content(content, limits.max_message_length) if content.strip() else DELETED_CONTENT
        if content != message.content:
            plan.content = content
            plan.rendered = render_message(content, realm=user.realm, sender=message.sender)
            if message.stream_id is not None:
                check_wildcard_permission(user, plan.rendered, message.stream, message.topic_key,
                                          len(subscriber_ids(message.stream)))
    if plan.content is None and not plan.moves:
        raise JsonableError("Nothing to change")
    if plan.topic is not None:
        if plan.stream is None:
            plan.resolve_only = resolve_kind(message.topic, plan.topic)
        check_topic_move(user, message, message.stream, resolve_only=bool(plan.resolve_only))
    if plan.stream is not None:
        check_channel_move(user, message, message.stream)
    return plan


def messages_to_move(user: UserProfile, message: Message, propagate_mode: str) -> list[Message]:
    """The messages a topic or channel move carries along; only those the mover can read."""
    if propagate_mode == "change_one":
        return [message]
    query = Message.select().where((Message.recipient == message.recipient_id)
                                   & (Message.topic_key == message.topic_key))
    if propagate_mode == "change_later":
        query = query.where(Message.id >= message.id)
    if not can_read_stream_history(user, message.stream):
        query = query.join(UserMessage, on=(UserMessage.message == Message.id)).where(
            UserMessage.user_profile == user.id)
    # The edited message itself is always moved, as the very row object the caller holds.
    return [message] + [m for m in query.order_by(Message.id) if m.id != message.id]


def refresh_mention_flags(message: Message, rendered: RenderResult) -> dict[int, int]:
    """Recompute the mention and alert-word flags of everyone who has the message from its new
    content (adding and removing, as Zulip does); returns {user_id: flag bits}."""
    rows = {row.user_profile_id: row.flags for row in
            UserMessage.select().where(UserMessage.message == message.id)}
    participants = (topic_participant_ids(message.stream, message.topic_key)
                    if rendered.topic_wildcard and message.stream_id else set())
    computed = recipient_flags(rendered, set(rows), sender_id=message.sender_id, read_by_sender=False,
                               is_direct=message.stream_id is None, topic_participants=participants)

    alerted = users_with_alert_word_in(message.content, set(rows) - {message.sender_id})
    alert_bit = FLAG_BITS["has_alert_word"]
    result = {}
    for uid, bits in rows.items():
        new_bits = (bits & ~MENTION_BITS & ~alert_bit) | (computed[uid] & MENTION_BITS) \
            | (alert_bit if uid in alerted else 0)
        if new_bits != bits:
            UserMessage.update(flags=new_bits).where(
                (UserMessage.message == message.id) & (UserMessage.user_profile == uid)).execute()
        result[uid] = new_bits
    return result


def move_personal_rows(message_ids: Any, destination: Any) -> Any:
    """Adjust who has copies of messages moved into `destination`; returns the ids of users who
    lost their copies (see the module docstring)."""
    holders = {row.user_profile_id for row in UserMessage.select(UserMessage.user_profile)
               .where(UserMessage.message.in_(message_ids)).distinct()}
    subscribers = {row.user_profile_id for row in Subscription.select(Subscription.user_profile).join(UserProfile)
                   .where((Subscription.stream == destination) & Subscription.active & UserProfile.is_active)}
    losing = set()
    for user in UserProfile.select().where(UserProfile.id.in_(list(holders - subscribers))):
        if destination.invite_only or user.is_guest:
            losing.add(user.id)
    for start in range(0, len(message_ids), ROWS_PER_STATEMENT):
        chunk = message_ids[start:start + ROWS_PER_STATEMENT]
        if losing:
            UserMessage.delete().where(UserMessage.message.in_(chunk)
                                       & UserMessage.user_profile.in_(list(losing))).execute()
        rows = [{"user_profile": uid, "message": mid, "flags": FLAG_BITS["read"]}
                for uid in subscribers for mid in chunk]
        for row_start in range(0, len(rows), ROWS_PER_STATEMENT):
            UserMessage.insert_many(rows[row_start:row_start + ROWS_PER_STATEMENT]).on_conflict_ignore().execute()
    return losing


def merged_visibility_policy(moved: Any, existing: Any) -> Any:
    """Zulip's rule when a moved topic meets one the user already has a policy for: the same
    policy stays; otherwise unmuted wins if either is unmuted (err on showing messages), else
    neither policy is kept."""
    if moved == existing:
        return moved
    return TOPIC_UNMUTED if TOPIC_UNMUTED in (moved, existing) else TOPIC_INHERIT


def move_user_topics(old_stream: Stream, old_topic: str, new_stream: Stream, new_topic: str,
                     timestamp: int) -> list[tuple[int, dict[Any, Any]]]:
    """A whole topic's visibility policies (muted, followed, ...) move with it, as in Zulip,
    merging with any policy the user has for the destination. Returns the user_topic events as
    (user_id, event)."""
    events = []
    rows = UserTopic.select().where((UserTopic.stream == old_stream.id)
                                    & (UserTopic.topic_key == old_topic.casefold()))
    for row in list(rows):
        kept = UserTopic.get_or_none((UserTopic.user_profile == row.user_profile_id)
                                     & (UserTopic.stream == new_stream.id)
                                     & (UserTopic.topic_key == new_topic.casefold()))
        if kept is None or kept.id == row.id:
            UserTopic.update(stream=new_stream.id, topic=new_topic, topic_key=new_topic.casefold(),
                             last_updated=timestamp).where(UserTopic.id == row.id).execute()
            policy = row.visibility_policy
        else:
            row.delete_instance()
            policy = merged_visibility_policy(row.visibility_policy, kept.visibility_policy)
            if policy == TOPIC_INHERIT:
                kept.delete_instance()
            elif policy != kept.visibility_policy:
                UserTopic.update(visibility_policy=policy, last_updated=timestamp).where(
                    UserTopic.id == kept.id).execute()
        events.append((row.user_profile_id, event_catalogue.user_topic(old_stream.id, old_topic, 0, timestamp)))
        events.append((row.user_profile_id, event_catalogue.user_topic(new_stream.id, new_topic, policy, timestamp)))
    return events


def do_update_message(user: UserProfile, plan: EditPlan) -> None:
    """Apply a validated edit in one transaction, then publish the events and post the notes."""
    timestamp = now()
    message = plan.message
    old_stream, old_topic = message.stream, message.topic
    losing, first_ids, flags, topic_events = set(), {}, {}, []
    with write_transaction():
        moved = messages_to_move(user, message, plan.propagate_mode) if plan.moves else [message]
        moved_ids = [m.id for m in moved]
        for target in moved:
            entry = {"user_id": user.id, "timestamp": timestamp}
            if target.id == message.id and plan.content is not None:
                entry.update(prev_content=target.content, prev_rendered_content=target.rendered_content)
                has_link, has_image, has_attachment = link_facts(plan.rendered)
                target.content = plan.content
                target.rendered_content = settle_upload_previews(target.realm_id, plan.rendered.html)
                target.is_me_message = plan.rendered.is_me_message
                target.has_link, target.has_image, target.has_attachment = has_link, has_image, has_attachment
                target.last_edit_time = timestamp
                relink_attachments(user, target.id, plan.content)
            if plan.topic is not None:
                entry.update(prev_topic=target.topic, topic=plan.topic)
                target.topic, target.topic_key = plan.topic, plan.topic.casefold()
            if plan.stream is not None:
                entry.update(prev_stream=target.stream_id, stream=plan.stream.id)
                target.stream, target.recipient = plan.stream.id, plan.stream.recipient_id
            if plan.moves and not plan.resolve_only:
                target.last_moved_time = timestamp
            target.edit_history = [entry] + list(target.edit_history or [])
            target.save()
        if plan.content is not None:
            flags = refresh_mention_flags(message, plan.rendered)
        backend().index_messages(Message._meta.database,
                                 [(m.id, m.topic, m.rendered_content) for m in moved])
        if plan.stream is not None:
            losing = move_personal_rows(moved_ids, plan.stream)
            first_ids = refresh_first_message_ids({old_stream.id, plan.stream.id})
        if plan.moves and plan.propagate_mode == "change_all":
            topic_events = move_user_topics(old_stream, old_topic, plan.stream or old_stream, message.topic, timestamp)
    notify_message_updated(user, plan, moved_ids, old_stream, old_topic, timestamp, flags, losing)
    notify_first_message_ids(first_ids)
    for user_id, event in topic_events:
        publish(event, [user_id])
    post_move_notes(user, plan, len(moved_ids), old_stream, old_topic)


def notify_message_updated(user: UserProfile, plan: EditPlan, moved_ids: list[int], old_stream: Stream, old_topic: str,
                           timestamp: int, flags: dict[int, int], losing: set[Any]) -> None:
    """update_message (with the legacy fields zulip-terminal reads) to who has the messages now;
    delete_message to those who lost them in a channel move."""
    message = plan.message
    changes: dict[str, Any] = {}
    if old_stream is not None:
        changes.update(stream_id=old_stream.id, stream_name=old_stream.name)
    if plan.content is not None:
        previous = message.edit_history[0]
        changes.update(orig_content=previous["prev_content"], orig_rendered_content=previous["prev_rendered_content"],
                       content=message.content, rendered_content=message.rendered_content,
                       is_me_message=message.is_me_message)
    if plan.moves:
        changes.update(propagate_mode=plan.propagate_mode, orig_subject=old_topic)
        if plan.topic is not None:
            changes.update(subject=plan.topic, topic_links=render_topic_links(plan.topic, user.realm)
                           if plan.topic else [])
        if plan.stream is not None:
            changes["new_stream_id"] = plan.stream.id
    audience = message_audience_ids(moved_ids, plan.stream or old_stream)
    if not flags:
        flags = {row.user_profile_id: row.flags for row in UserMessage.select().where(
            UserMessage.message == message.id)}
    publish(event_catalogue.update_message(user.id, timestamp, message.id, sorted(moved_ids), changes,
                                           {uid: flags_to_names(bits) for uid, bits in flags.items()}), audience)
    if losing:
        publish(event_catalogue.delete_message(sorted(moved_ids), old_stream.id, old_topic), losing)


def undo_recent_resolve_note(user: Any, stream: Any, topic: str) -> bool:
    """Delete the topic's newest message if it is a resolve/unresolve note younger than the grace
    period; returns whether it did."""
    last = (Message.select().where((Message.recipient == stream.recipient_id) & (Message.topic_key == topic.casefold()))
            .order_by(Message.id.desc()).first())
    bot = system_bot(user.realm, NOTIFICATION_BOT[0])
    if (last is None or last.sender_id != bot.id or not last.content.endswith(RESOLVE_NOTE_ENDINGS)
            or now() - last.date_sent > RESOLVE_UNDO_GRACE_SECONDS):
        return False
    do_delete_messages([last])
    return True


def post_move_notes(user: UserProfile, plan: EditPlan, count: int, old_stream: Stream, old_topic: str) -> None:
    """The Notification Bot's notes in the old and new conversations, as the client asked."""
    if not plan.moves:
        return
    new_stream = plan.stream or old_stream
    new_topic = plan.topic if plan.topic is not None else old_topic
    who = f"@_**{user.full_name}|{user.id}**"
    notes = []
    kind = plan.resolve_only
    if kind:
        if plan.notify_new and not undo_recent_resolve_note(user, new_stream, new_topic):
            verb = "resolved" if kind == "resolve" else "unresolved"
            notes.append((new_stream, new_topic, f"{who} has marked this topic as {verb}."))
    else:
        old_link = f"#**{old_stream.name}>{old_topic}**"
        new_link = f"#**{new_stream.name}>{new_topic}**"
        if plan.propagate_mode == "change_all":
            what_old, what_new = "This topic was moved to", "This topic was moved here from"
        elif count == 1:
            what_old, what_new = "A message was moved from this topic to", "A message was moved here from"
        else:
            what_old = f"{count} messages were moved from this topic to"
            what_new = f"{count} messages were moved here from"
        if plan.notify_old:
            notes.append((old_stream, old_topic, f"{what_old} {new_link} by {who}."))
        if plan.notify_new:
            notes.append((new_stream, new_topic, f"{what_new} {old_link} by {who}."))
    bot = system_bot(user.realm, NOTIFICATION_BOT[0]) if notes else None
    for stream, topic, content in notes:
        # The loop runs only when there are notes, so bot is set (mypy cannot tell).
        check_send_message(bot, message_type="stream", to=stream.id, topic=topic, content=content,  # type: ignore[arg-type]
                           client_name="Internal", limits=plan.limits)
