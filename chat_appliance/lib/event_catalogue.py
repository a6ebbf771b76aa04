"""Every event the server sends to clients' queues, one constructor each.

A publisher builds its event here and hands it to events.bus.publish; no other module writes an
event dictionary (a test walks the package's source to keep it so). The constructors are plain
functions returning the dictionary, so a publish costs what a dict literal costs. Keys are built
in the order clients have always received them.

Grouped by Zulip's event `type`; each `op` has its own constructor, except where the op is the
client's own word passed through (typing start/stop, reaction and flag add/remove). `catalogue()`
lists (type, op, constructor, what it tells clients) for docs and the web client's dispatcher;
scripts/event_catalogue.py prints it as Markdown.

The module lives in lib/ rather than events/ because lib/ builds events too (user_topic,
default_streams) and the layers let lib/ import only what lies below it.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from chat_appliance.lib.types import JSONDict

F = TypeVar("F", bound=Callable[..., JSONDict])

# (type, ops, constructor) in definition order; ops is (None,) for an event without op.
_ENTRIES: list[tuple[str, tuple[str | None, ...], Callable[..., JSONDict]]] = []


def _event(event_type: str, *ops: str) -> Callable[[F], F]:
    """Register a constructor under its type and op(s); the function itself is returned
    unchanged, so calling it costs nothing more."""
    def register(constructor: F) -> F:
        _ENTRIES.append((event_type, ops or (None,), constructor))
        return constructor
    return register


def catalogue() -> list[tuple[str, str | None, str, str]]:
    """(type, op, constructor name, its docstring's first paragraph on one line) for every event,
    in catalogue order; an op-parameterized constructor gives one row per op."""
    rows: list[tuple[str, str | None, str, str]] = []
    for event_type, ops, constructor in _ENTRIES:
        doc = " ".join((constructor.__doc__ or "").strip().split("\n\n")[0].split())
        rows.extend((event_type, op, constructor.__name__, doc) for op in ops)
    return rows


def constructors() -> list[Callable[..., JSONDict]]:
    """The constructors, each once, in catalogue order."""
    return [constructor for _type, _ops, constructor in _ENTRIES]


# --- queue-level ----------------------------------------------------------------------------

@_event("heartbeat")
def heartbeat(event_id: int) -> JSONDict:
    """Nothing happened: ends a long poll that waited its full time, so the client polls again."""
    return {"type": "heartbeat", "id": event_id}


# --- messages ---------------------------------------------------------------------------------

@_event("message")
def message(message: JSONDict, raw_content: str, flags: dict[int, list[str]], sender_queue_id: str | None,
            local_id: str | None, invite_only: bool, stream_id: int | None, realm_id: int) -> JSONDict:
    """A new message (as published: each queue receives it through message_for_queue)."""
    return {"type": "message", "message": message, "raw_content": raw_content, "flags": flags,
            "sender_queue_id": sender_queue_id, "local_id": local_id, "invite_only": invite_only,
            "stream_id": stream_id, "realm_id": realm_id}


@_event("message")
def message_for_queue(message: JSONDict, flags: list[str], local_message_id: str | None = None) -> JSONDict:
    """A new message as one queue receives it: in its content format, with its user's flags, and
    the sender's local id when this queue sent it (so the client replaces its local echo)."""
    shaped = {"type": "message", "message": message, "flags": flags}
    if local_message_id is not None:
        shaped["local_message_id"] = local_message_id
    return shaped


@_event("update_message")
def update_message(user_id: int, edit_timestamp: int, message_id: int, message_ids: list[int],
                   changes: JSONDict, user_flags: dict[int, list[str]]) -> JSONDict:
    """A message was edited or moved: `changes` holds the channel it was in and what changed
    (content with the original, topic and channel moves); each queue gets its user's flags."""
    return {"type": "update_message", "user_id": user_id, "edit_timestamp": edit_timestamp,
            "message_id": message_id, "message_ids": message_ids, "rendering_only": False, **changes,
            "user_flags": user_flags}


@_event("update_message")
def update_message_rendering(edit_timestamp: int, message_id: int, content: str, rendered_content: str,
                             is_me_message: bool, user_flags: dict[int, list[str]]) -> JSONDict:
    """A message's HTML changed without an edit (link previews added): no edit history, no user."""
    return {"type": "update_message", "user_id": None, "edit_timestamp": edit_timestamp,
            "message_id": message_id, "message_ids": [message_id], "rendering_only": True,
            "content": content, "rendered_content": rendered_content, "is_me_message": is_me_message,
            "user_flags": user_flags}


@_event("delete_message")
def delete_message(message_ids: list[int], stream_id: int | None = None, topic: str | None = None) -> JSONDict:
    """Messages are gone for these users (deleted, or moved to a channel they cannot read): a
    channel's topic, or direct messages when no channel is given."""
    if stream_id is None:
        return {"type": "delete_message", "message_ids": message_ids, "message_type": "private"}
    return {"type": "delete_message", "message_ids": message_ids, "message_type": "stream",
            "stream_id": stream_id, "topic": topic}


@_event("update_message_flags", "add", "remove")
def update_message_flags(op: str, flag: str, messages: list[int],
                         message_details: JSONDict | None = None) -> JSONDict:
    """The user's flag was set or cleared on these messages (`operation` is the legacy name of
    op, which zulip-terminal reads); marking unread carries message_details for the recount."""
    event = {"type": "update_message_flags", "op": op, "operation": op, "flag": flag, "messages": messages,
             "all": False}
    if message_details is not None:
        event["message_details"] = message_details
    return event


@_event("reaction", "add", "remove")
def reaction(op: str, message_id: int, emoji_name: str, emoji_code: str, reaction_type: str, user_id: int,
             user: JSONDict) -> JSONDict:
    """An emoji reaction was added to or removed from a message (`user` is the legacy sender
    object zulip-terminal 0.7.0 reads)."""
    return {"type": "reaction", "op": op, "message_id": message_id, "emoji_name": emoji_name,
            "emoji_code": emoji_code, "reaction_type": reaction_type, "user_id": user_id, "user": user}


@_event("submessage")
def submessage(msg_type: str, content: str, message_id: int, sender_id: int, submessage_id: int) -> JSONDict:
    """A widget's message got a submessage (a poll vote, a todo item): clients update the widget."""
    return {"type": "submessage", "msg_type": msg_type, "content": content, "message_id": message_id,
            "sender_id": sender_id, "submessage_id": submessage_id}


@_event("typing", "start", "stop")
def typing_direct(op: str, sender: JSONDict, recipients: list[JSONDict]) -> JSONDict:
    """Someone started or stopped composing a direct message to these recipients."""
    return {"type": "typing", "op": op, "message_type": "direct", "sender": sender, "recipients": recipients}


@_event("typing", "start", "stop")
def typing_stream(op: str, sender: JSONDict, stream_id: int, topic: str) -> JSONDict:
    """Someone started or stopped composing in a channel's topic."""
    return {"type": "typing", "op": op, "message_type": "stream", "sender": sender, "stream_id": stream_id,
            "topic": topic}


@_event("typing_edit_message", "start", "stop")
def typing_edit_message(op: str, sender_id: int, message_id: int, recipient: JSONDict) -> JSONDict:
    """Someone started or stopped editing a message; `recipient` says where it lives."""
    return {"type": "typing_edit_message", "op": op, "sender_id": sender_id, "message_id": message_id,
            "recipient": recipient}


# --- channels and subscriptions ---------------------------------------------------------------

@_event("stream", "create")
def stream_create(streams: list[JSONDict]) -> JSONDict:
    """Channels became visible to these users (created, unarchived, or made accessible)."""
    return {"type": "stream", "op": "create", "streams": streams}


@_event("stream", "update")
def stream_update(stream_id: int, name: str, property: str, value: Any, **extra: Any) -> JSONDict:
    """A channel's property changed; `extra` carries its companions (rendered_description with
    description, history_public_to_subscribers with invite_only)."""
    return {"type": "stream", "op": "update", "stream_id": stream_id, "name": name, "property": property,
            "value": value, **extra}


@_event("stream", "update")
def stream_update_first_message_id(stream_id: int, name: str, value: int | None) -> JSONDict:
    """A channel's oldest message changed (deleted or moved away), so clients know where history
    starts."""
    return {"type": "stream", "op": "update", "property": "first_message_id", "value": value,
            "stream_id": stream_id, "name": name}


@_event("stream", "delete")
def stream_delete(stream_id: int) -> JSONDict:
    """A channel is gone for these users (archived, or no longer accessible); `stream_ids` beside
    the legacy `streams` objects."""
    return {"type": "stream", "op": "delete", "streams": [{"stream_id": stream_id}], "stream_ids": [stream_id]}


@_event("subscription", "add")
def subscription_add(subscriptions: list[JSONDict]) -> JSONDict:
    """The user was subscribed to these channels."""
    return {"type": "subscription", "op": "add", "subscriptions": subscriptions}


@_event("subscription", "remove")
def subscription_remove(stream_id: int, name: str) -> JSONDict:
    """The user was unsubscribed from a channel."""
    return {"type": "subscription", "op": "remove", "subscriptions": [{"name": name, "stream_id": stream_id}]}


@_event("subscription", "update")
def subscription_update(stream_id: int, property: str, value: Any) -> JSONDict:
    """One of the user's settings for a channel changed (color, muting, notifications...)."""
    return {"type": "subscription", "op": "update", "stream_id": stream_id, "property": property, "value": value}


@_event("subscription", "peer_add")
def subscription_peer_add(stream_id: int, user_ids: list[int]) -> JSONDict:
    """Other users joined a channel the recipient can see."""
    return {"type": "subscription", "op": "peer_add", "stream_ids": [stream_id], "user_ids": user_ids}


@_event("subscription", "peer_remove")
def subscription_peer_remove(stream_id: int, user_ids: list[int]) -> JSONDict:
    """Other users left a channel the recipient can see."""
    return {"type": "subscription", "op": "peer_remove", "stream_ids": [stream_id], "user_ids": user_ids}


@_event("default_streams")
def default_streams(stream_ids: list[int]) -> JSONDict:
    """The organization's default channels, as ids (Zulip feature level 330)."""
    return {"type": "default_streams", "default_streams": stream_ids}


@_event("channel_folder", "add")
def channel_folder_add(channel_folder: JSONDict) -> JSONDict:
    """A channel folder was created."""
    return {"type": "channel_folder", "op": "add", "channel_folder": channel_folder}


@_event("channel_folder", "update")
def channel_folder_update(channel_folder_id: int, data: JSONDict) -> JSONDict:
    """A channel folder's name, description or archived state changed."""
    return {"type": "channel_folder", "op": "update", "channel_folder_id": channel_folder_id, "data": data}


@_event("channel_folder", "reorder")
def channel_folder_reorder(order: list[int]) -> JSONDict:
    """The organization's channel folders have a new order."""
    return {"type": "channel_folder", "op": "reorder", "order": order}


# --- users, bots and groups -------------------------------------------------------------------

@_event("realm_user", "add")
def realm_user_add(person: JSONDict) -> JSONDict:
    """A user joined the organization (the full user object, as this viewer may see it)."""
    return {"type": "realm_user", "op": "add", "person": person}


@_event("realm_user", "update")
def realm_user_update(user_id: int, **fields: Any) -> JSONDict:
    """Some of a user's fields changed (name, role, avatar, email, deactivation...)."""
    return {"type": "realm_user", "op": "update", "person": {"user_id": user_id, **fields}}


@_event("realm_bot", "add")
def realm_bot_add(bot: JSONDict) -> JSONDict:
    """A bot the recipient administers appeared (created, or given to them)."""
    return {"type": "realm_bot", "op": "add", "bot": bot}


@_event("realm_bot", "update")
def realm_bot_update(user_id: int, **fields: Any) -> JSONDict:
    """Some fields of a bot the recipient administers changed."""
    return {"type": "realm_bot", "op": "update", "bot": {"user_id": user_id, **fields}}


@_event("realm_bot", "delete")
def realm_bot_delete(user_id: int) -> JSONDict:
    """A bot is no longer administered by the recipient."""
    return {"type": "realm_bot", "op": "delete", "bot": {"user_id": user_id}}


@_event("user_group", "add")
def user_group_add(group: JSONDict) -> JSONDict:
    """A user group was created."""
    return {"type": "user_group", "op": "add", "group": group}


@_event("user_group", "update")
def user_group_update(group_id: int, data: JSONDict) -> JSONDict:
    """A user group's name, description or settings changed."""
    return {"type": "user_group", "op": "update", "group_id": group_id, "data": data}


@_event("user_group", "add_members")
def user_group_add_members(group_id: int, user_ids: list[int]) -> JSONDict:
    """Users became members of a group."""
    return {"type": "user_group", "op": "add_members", "group_id": group_id, "user_ids": user_ids}


@_event("user_group", "remove_members")
def user_group_remove_members(group_id: int, user_ids: list[int]) -> JSONDict:
    """Users stopped being members of a group."""
    return {"type": "user_group", "op": "remove_members", "group_id": group_id, "user_ids": user_ids}


@_event("user_group", "add_subgroups")
def user_group_add_subgroups(group_id: int, direct_subgroup_ids: list[int]) -> JSONDict:
    """Groups became direct subgroups of a group."""
    return {"type": "user_group", "op": "add_subgroups", "group_id": group_id,
            "direct_subgroup_ids": direct_subgroup_ids}


@_event("user_group", "remove_subgroups")
def user_group_remove_subgroups(group_id: int, direct_subgroup_ids: list[int]) -> JSONDict:
    """Groups stopped being direct subgroups of a group."""
    return {"type": "user_group", "op": "remove_subgroups", "group_id": group_id,
            "direct_subgroup_ids": direct_subgroup_ids}


@_event("user_group", "remove")
def user_group_remove(group_id: int) -> JSONDict:
    """A user group was deleted."""
    return {"type": "user_group", "op": "remove", "group_id": group_id}


@_event("presence")
def presence(user_id: int, email: str, server_timestamp: float, presence: JSONDict) -> JSONDict:
    """A user's presence changed (active, idle), in the legacy per-client form."""
    return {"type": "presence", "user_id": user_id, "email": email, "server_timestamp": server_timestamp,
            "presence": presence}


@_event("user_status")
def user_status(user_id: int, away: bool | None = None, status_text: str | None = None,
                emoji: tuple[str, str, str] | None = None) -> JSONDict:
    """A user's status changed: only the parts that changed (away, text, emoji name/code/type)."""
    event: JSONDict = {"type": "user_status", "user_id": user_id}
    if away is not None:
        event["away"] = away
    if status_text is not None:
        event["status_text"] = status_text
    if emoji is not None:
        event.update(emoji_name=emoji[0], emoji_code=emoji[1], reaction_type=emoji[2])
    return event


@_event("muted_users")
def muted_users(muted_users: list[JSONDict]) -> JSONDict:
    """The user's full list of muted users, after a mute or unmute."""
    return {"type": "muted_users", "muted_users": muted_users}


@_event("invites_changed")
def invites_changed() -> JSONDict:
    """The list of pending invitations changed: clients that show it fetch it again."""
    return {"type": "invites_changed"}


# --- the user's own settings and data ---------------------------------------------------------

@_event("user_settings", "update")
def user_settings_update(property: str, value: Any) -> JSONDict:
    """One of the user's own settings changed."""
    return {"type": "user_settings", "op": "update", "property": property, "value": value}


@_event("user_topic")
def user_topic(stream_id: int, topic_name: str, visibility_policy: int, last_updated: int) -> JSONDict:
    """The user's visibility policy for a topic (muted, unmuted, followed, or inherit)."""
    return {"type": "user_topic", "stream_id": stream_id, "topic_name": topic_name, "last_updated": last_updated,
            "visibility_policy": visibility_policy}


@_event("alert_words")
def alert_words(words: list[str]) -> JSONDict:
    """The user's full list of alert words."""
    return {"type": "alert_words", "alert_words": words}


@_event("drafts", "add")
def drafts_add(drafts: list[JSONDict]) -> JSONDict:
    """Drafts were saved."""
    return {"type": "drafts", "op": "add", "drafts": drafts}


@_event("drafts", "update")
def drafts_update(draft: JSONDict) -> JSONDict:
    """A draft was edited."""
    return {"type": "drafts", "op": "update", "draft": draft}


@_event("drafts", "remove")
def drafts_remove(draft_id: int) -> JSONDict:
    """A draft was deleted."""
    return {"type": "drafts", "op": "remove", "draft_id": draft_id}


@_event("saved_snippets", "add")
def saved_snippets_add(saved_snippet: JSONDict) -> JSONDict:
    """A saved snippet was created."""
    return {"type": "saved_snippets", "op": "add", "saved_snippet": saved_snippet}


@_event("saved_snippets", "update")
def saved_snippets_update(saved_snippet: JSONDict) -> JSONDict:
    """A saved snippet was edited."""
    return {"type": "saved_snippets", "op": "update", "saved_snippet": saved_snippet}


@_event("saved_snippets", "remove")
def saved_snippets_remove(saved_snippet_id: int) -> JSONDict:
    """A saved snippet was deleted."""
    return {"type": "saved_snippets", "op": "remove", "saved_snippet_id": saved_snippet_id}


@_event("scheduled_messages", "add")
def scheduled_messages_add(scheduled_messages: list[JSONDict]) -> JSONDict:
    """Messages were scheduled."""
    return {"type": "scheduled_messages", "op": "add", "scheduled_messages": scheduled_messages}


@_event("scheduled_messages", "update")
def scheduled_messages_update(scheduled_message: JSONDict) -> JSONDict:
    """A scheduled message was edited, or failed to send."""
    return {"type": "scheduled_messages", "op": "update", "scheduled_message": scheduled_message}


@_event("scheduled_messages", "remove")
def scheduled_messages_remove(scheduled_message_id: int) -> JSONDict:
    """A scheduled message was sent or deleted."""
    return {"type": "scheduled_messages", "op": "remove", "scheduled_message_id": scheduled_message_id}


@_event("reminders", "add")
def reminders_add(reminders: list[JSONDict]) -> JSONDict:
    """Message reminders were set."""
    return {"type": "reminders", "op": "add", "reminders": reminders}


@_event("reminders", "remove")
def reminders_remove(reminder_id: int) -> JSONDict:
    """A reminder was delivered or deleted."""
    return {"type": "reminders", "op": "remove", "reminder_id": reminder_id}


@_event("navigation_view", "add")
def navigation_view_add(navigation_view: JSONDict) -> JSONDict:
    """A navigation view (a pinned or renamed left-sidebar view) was added."""
    return {"type": "navigation_view", "op": "add", "navigation_view": navigation_view}


@_event("navigation_view", "update")
def navigation_view_update(fragment: str, data: JSONDict) -> JSONDict:
    """A navigation view's name or pinning changed."""
    return {"type": "navigation_view", "op": "update", "fragment": fragment, "data": data}


@_event("navigation_view", "remove")
def navigation_view_remove(fragment: str) -> JSONDict:
    """A navigation view was removed."""
    return {"type": "navigation_view", "op": "remove", "fragment": fragment}


@_event("device", "add")
def device_add(device_id: int) -> JSONDict:
    """The user registered a device for push notifications."""
    return {"type": "device", "op": "add", "device_id": device_id}


@_event("device", "update")
def device_update(device_id: int, **fields: Any) -> JSONDict:
    """The push registration of one of the user's devices changed: only the fields that changed
    (push_key_id, push_token_id, pending_push_token_id, push_token_last_updated_timestamp,
    push_registration_error_code)."""
    return {"type": "device", "op": "update", "device_id": device_id, **fields}


@_event("device", "remove")
def device_remove(device_id: int) -> JSONDict:
    """The user removed a device."""
    return {"type": "device", "op": "remove", "device_id": device_id}


# --- the organization -------------------------------------------------------------------------

@_event("realm", "update")
def realm_update(property: str, value: Any) -> JSONDict:
    """One organization setting changed."""
    return {"type": "realm", "op": "update", "property": property, "value": value}


@_event("realm", "update_dict")
def realm_update_dict(property: str, data: JSONDict) -> JSONDict:
    """Several organization settings changed together (`property` names the group: default, icon)."""
    return {"type": "realm", "op": "update_dict", "property": property, "data": data}


@_event("realm_user_settings_defaults", "update")
def realm_user_settings_defaults_update(property: str, value: Any) -> JSONDict:
    """A default of the organization's new users' settings changed."""
    return {"type": "realm_user_settings_defaults", "op": "update", "property": property, "value": value}


@_event("realm_emoji", "update")
def realm_emoji_update(realm_emoji: JSONDict) -> JSONDict:
    """The organization's full custom emoji set, after an upload or deactivation."""
    return {"type": "realm_emoji", "op": "update", "realm_emoji": realm_emoji}


@_event("realm_linkifiers")
def realm_linkifiers(linkifiers: list[JSONDict]) -> JSONDict:
    """The organization's full list of linkifiers."""
    return {"type": "realm_linkifiers", "realm_linkifiers": linkifiers}


@_event("realm_playgrounds")
def realm_playgrounds(playgrounds: list[JSONDict]) -> JSONDict:
    """The organization's full list of code playgrounds."""
    return {"type": "realm_playgrounds", "realm_playgrounds": playgrounds}


@_event("custom_profile_fields")
def custom_profile_fields(fields: list[JSONDict]) -> JSONDict:
    """The organization's full list of custom profile fields."""
    return {"type": "custom_profile_fields", "fields": fields}


@_event("realm_export")
def realm_export(exports: list[JSONDict]) -> JSONDict:
    """The organization's exports, after one started, finished, failed or was deleted."""
    return {"type": "realm_export", "exports": exports}


@_event("realm_export_consent")
def realm_export_consent(user_id: int, consented: bool) -> JSONDict:
    """A user allowed or refused that their private data go into exports."""
    return {"type": "realm_export_consent", "user_id": user_id, "consented": consented}

