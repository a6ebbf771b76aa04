"""Who may edit, move, resolve and delete a message (Zulip's rules, read from facts only).

The organization-level settings live in `realm.settings` under Zulip's names; absent keys take
the defaults below, which are Zulip's organization defaults. Group settings hold a system group
name ("role:members") or a user-group id. A channel's own group settings (can_move_messages_*,
can_delete_*_message_group, can_resolve_topics_group) grant the right in that channel in addition
to the organization's setting, as in Zulip, where a channel setting can only widen who may act.

Decisions where Zulip's documentation leaves room:
- Content: only the sender may edit it, while the organization allows editing, within
  message_content_edit_limit_seconds (0 = no limit; 20 s of grace). Administrators cannot edit others' content.
- Topic moves: can_move_messages_between_topics_group (default everyone but guests) or the
  channel's can_move_messages_within_channel_group; channel moves: can_move_messages_between_
  channels_group (same default) or the source channel's can_move_messages_out_of_channel_group,
  and the mover must be allowed to post in the destination. Members (not moderators or
  administrators) are held to move_messages_within_stream_limit_seconds /
  move_messages_between_streams_limit_seconds (Zulip's default: one week) for the edited message.
- Resolving or unresolving alone needs only can_resolve_topics_group (default everyone).
- Deleting: can_delete_any_message_group (default administrators) or the channel's
  can_delete_any_message_group deletes anything; the sender (or a bot's owner) deletes their own
  message when in can_delete_own_message_group (default everyone) or the channel's, within
  message_content_delete_limit_seconds (default 600 s; null = no limit). Holders of
  can_delete_any are not time-limited.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chat_appliance.models import now
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.groups import is_user_in_group, system_group_ids

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import Message, Realm, UserProfile

ONE_WEEK = 7 * 24 * 3600
# Zulip allows content edits this many seconds past the limit: the web app offers editing until
# shortly before it, and a slow network should not turn a timely edit into an error.
EDIT_LIMIT_BUFFER_SECONDS = 20

REALM_MESSAGE_SETTING_DEFAULTS = {
    "can_move_messages_between_topics_group": "role:members",
    "can_move_messages_between_channels_group": "role:members",
    "can_resolve_topics_group": "role:everyone",
    "can_delete_any_message_group": "role:administrators",
    "can_delete_own_message_group": "role:everyone",
    "move_messages_within_stream_limit_seconds": ONE_WEEK,
    "move_messages_between_streams_limit_seconds": ONE_WEEK,
    "message_content_delete_limit_seconds": 600,
}


def realm_setting(realm: Realm, name: str) -> Any:
    """An organization message setting, or Zulip's default."""
    return (realm.settings or {}).get(name, REALM_MESSAGE_SETTING_DEFAULTS[name])


def _group_id(realm, value):
    if isinstance(value, int):
        return value
    return system_group_ids(realm.id).get(value)


MESSAGE_GROUP_SETTINGS = tuple(k for k in REALM_MESSAGE_SETTING_DEFAULTS if k.endswith("_group"))
MESSAGE_LIMIT_SETTINGS = tuple(k for k in REALM_MESSAGE_SETTING_DEFAULTS if k.endswith("_seconds"))


def realm_message_settings_state(realm: Realm) -> JSONDict:
    """These settings as /register's realm_* keys: group settings as group ids, limits in seconds
    (None: no limit)."""
    state = {f"realm_{name}": _group_id(realm, realm_setting(realm, name)) for name in MESSAGE_GROUP_SETTINGS}
    state.update({f"realm_{name}": realm_setting(realm, name) for name in MESSAGE_LIMIT_SETTINGS})
    return state


def realm_allows(user: Any, setting: str) -> Any:
    """Whether the user is in the organization's group for this setting."""
    group_id = _group_id(user.realm, realm_setting(user.realm, setting))
    return group_id is not None and is_user_in_group(user, group_id)


def channel_allows(user: Any, stream: Any, setting: str) -> Any:
    """Whether the channel's own group setting grants the user this right."""
    if stream is None:
        return False
    group_id = (stream.settings or {}).get(setting)
    return group_id is not None and is_user_in_group(user, group_id)


def within_limit(message: Message, limit_seconds: int) -> bool:
    """Whether the message is younger than the limit (None or 0: no limit)."""
    return not limit_seconds or now() - message.date_sent <= limit_seconds


def is_moderator_or_admin(user: Any) -> Any:
    return user.is_realm_admin or user.is_moderator


def check_content_edit(user: UserProfile, message: Message) -> None:
    """The sender, while editing is on, within the edit limit."""
    realm = user.realm
    if not realm.allow_message_editing:
        raise JsonableError("Your organization has turned off message editing")
    if message.sender_id != user.id:
        raise JsonableError("You don't have permission to edit this message")
    limit = realm.message_content_edit_limit_seconds
    if limit and not within_limit(message, limit + EDIT_LIMIT_BUFFER_SECONDS):
        raise JsonableError("The time limit for editing this message has past")


def check_topic_move(user: Any, message: Any, stream: Any, *, resolve_only: Any) -> None:
    """Renaming the topic of a channel message (or resolving it)."""
    if resolve_only and (realm_allows(user, "can_resolve_topics_group")
                         or channel_allows(user, stream, "can_resolve_topics_group")):
        return
    if not (realm_allows(user, "can_move_messages_between_topics_group")
            or channel_allows(user, stream, "can_move_messages_within_channel_group")):
        raise JsonableError("You don't have permission to edit this message")
    if not is_moderator_or_admin(user) and not within_limit(
            message, realm_setting(user.realm, "move_messages_within_stream_limit_seconds")):
        raise JsonableError("The time limit for editing this message's topic has passed.")


def check_channel_move(user: Any, message: Any, stream: Any) -> None:
    """Moving a channel message out of its channel."""
    if not (realm_allows(user, "can_move_messages_between_channels_group")
            or channel_allows(user, stream, "can_move_messages_out_of_channel_group")):
        raise JsonableError("You don't have permission to move this message")
    if not is_moderator_or_admin(user) and not within_limit(
            message, realm_setting(user.realm, "move_messages_between_streams_limit_seconds")):
        raise JsonableError("The time limit for editing this message's channel has passed")


def check_delete(user: Any, message: Any, stream: Any) -> None:
    """Deleting a message: see the module's rules."""
    if realm_allows(user, "can_delete_any_message_group") or channel_allows(
            user, stream, "can_delete_any_message_group"):
        return
    own = message.sender_id == user.id or message.sender.bot_owner_id == user.id
    if not own or not (realm_allows(user, "can_delete_own_message_group")
                       or channel_allows(user, stream, "can_delete_own_message_group")):
        raise JsonableError("You don't have permission to delete this message")
    if not within_limit(message, realm_setting(user.realm, "message_content_delete_limit_seconds")):
        raise JsonableError("The time limit for deleting this message has passed")
