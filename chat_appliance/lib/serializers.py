"""The one place that shapes API objects (users, channels, subscriptions).

Responses and events both use these functions, so a field is defined once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import functools
import hashlib
from datetime import datetime, timezone

from chat_appliance.models import BOT_OUTGOING_WEBHOOK
from chat_appliance.lib.access import can_see_real_email
from chat_appliance.lib.groups import creator_group_value, system_group
from chat_appliance.lib.profile_data import profile_data_for

if TYPE_CHECKING:
    import peewee
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import (Attachment, ChannelFolder, ClientDevice, CustomProfileField, Draft, Linkifier, NavigationView,
                                       SavedSnippet, Stream, Subscription, UserGroup, UserProfile)


def isoformat(timestamp: int) -> str:
    """A UNIX timestamp as Zulip's datetime strings (UTC, with offset)."""
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).isoformat()


@functools.lru_cache(maxsize=4096)
def gravatar_url(email: str, avatar_version: int) -> str:
    """The third-party avatar URL Zulip computes for users without an uploaded avatar. Kept per
    (email, version): every message event and fetched message asks for its sender's."""
    digest = hashlib.md5(email.strip().lower().encode()).hexdigest()
    return f"https://secure.gravatar.com/avatar/{digest}?d=identicon&version={avatar_version}"


def uploaded_avatar_url(user: UserProfile) -> str:
    """Where an uploaded avatar is served (webclient/views.py); the version busts caches."""
    return f"/user_avatars/{user.realm_id}/{user.id}?version={user.avatar_version}"


def avatar_url(user: UserProfile, *, client_gravatar: bool, email_visible: bool) -> str | None:
    """Null when the client computes gravatars itself and may see the real email (Zulip's rule)."""
    if getattr(user, "avatar_source", "G") == "U":
        return uploaded_avatar_url(user)
    if client_gravatar and email_visible:
        return None
    return gravatar_url(user.delivery_email, user.avatar_version)


def user_dict(target: UserProfile, requester: UserProfile | None, *, client_gravatar: bool = True,
              include_custom_profile_fields: bool = False, email_visible: bool | None = None) -> JSONDict:
    """A user object as GET /users and GET /users/{id} return it. The requester decides whether its
    real email shows (`email_visible` says it instead, for a caller that already knows)."""
    if email_visible is None:
        email_visible = can_see_real_email(cast(Any, requester), target)
    data = {
        "user_id": target.id,
        "email": target.email,
        "delivery_email": target.delivery_email if email_visible else None,
        "full_name": target.full_name,
        "date_joined": isoformat(target.date_joined),
        "is_active": target.is_active,
        "is_owner": target.is_owner,
        "is_admin": target.is_realm_admin,
        "is_guest": target.is_guest,
        "is_bot": target.is_bot,
        "bot_type": target.bot_type if target.is_bot else None,
        "role": target.role,
        "timezone": target.timezone,
        "avatar_url": avatar_url(target, client_gravatar=client_gravatar, email_visible=email_visible),
        "avatar_version": target.avatar_version,
    }
    if target.is_bot:
        data["bot_owner_id"] = target.bot_owner_id
    elif include_custom_profile_fields:
        data["profile_data"] = profile_data_for(target)
    return data


def own_user_dict(user: UserProfile, *, max_message_id: int, profile_data: JSONDict | None) -> JSONDict:
    """The flat profile of GET /users/me: no bot_type/bot_owner_id, adds max_message_id, and
    profile_data only for a human (chat-api.md; the caller reads it, None for a bot)."""
    data = user_dict(user, user, client_gravatar=False)
    data.pop("bot_type", None)
    data.pop("bot_owner_id", None)
    data["delivery_email"] = user.delivery_email
    data["max_message_id"] = max_message_id
    if not user.is_bot:
        data["profile_data"] = profile_data
    return data


# Group-valued permission settings of channels and their defaults (system group names).
STREAM_GROUP_SETTINGS = {
    "can_add_subscribers_group": "role:nobody",
    "can_remove_subscribers_group": "role:administrators",
    "can_administer_channel_group": "role:nobody",
    "can_delete_any_message_group": "role:nobody",
    "can_delete_own_message_group": "role:everyone",
    "can_move_messages_out_of_channel_group": "role:nobody",
    "can_move_messages_within_channel_group": "role:nobody",
    "can_send_message_group": "role:everyone",
    "can_subscribe_group": "role:nobody",
    "can_resolve_topics_group": "role:nobody",
}


def stream_dict(stream: Stream, *, subscriber_count: int) -> JSONDict:
    """A channel as GET /streams and GET /streams/{id} return it."""
    data = {
        "stream_id": stream.id,
        "name": stream.name,
        "description": stream.description,
        "rendered_description": stream.rendered_description,
        "date_created": stream.date_created,
        "creator_id": stream.creator_id,
        "invite_only": stream.invite_only,
        "is_web_public": stream.is_web_public,
        "is_archived": stream.deactivated,
        "history_public_to_subscribers": stream.history_public_to_subscribers,
        "first_message_id": stream.first_message_id,
        "folder_id": stream.folder_id,
        "message_retention_days": stream.message_retention_days,
        # Zulip's legacy posting policy: 1 = anyone may post.
        "stream_post_policy": 1,
        "is_announcement_only": False,
        "topics_policy": "inherit",
        "is_recently_active": True,
        "stream_weekly_traffic": None,
        "subscriber_count": subscriber_count,
    }
    data.update({name: stream.settings[name] for name in STREAM_GROUP_SETTINGS})
    return data


def subscription_dict(subscription: Subscription, stream: Stream, *, subscriber_count: int,
                      subscribers: list[int] | None = None) -> JSONDict:
    """A subscription as GET /users/me/subscriptions and /register return it."""
    return subscription_from_channel(subscription, stream_dict(stream, subscriber_count=subscriber_count),
                                     None if subscribers is None else {"subscribers": subscribers})


def subscription_from_channel(subscription: Subscription, channel: JSONDict, subscriber_fields: JSONDict | None = None,
                              ) -> JSONDict:
    """A subscription from its channel's API object (stream_dict's, left unchanged): the channel's
    fields, the subscriber's own, then `subscriber_fields` (`subscribers` or `partial_subscribers`)."""
    data = dict(channel)
    data.update(
        {
            "color": subscription.color,
            "is_muted": subscription.is_muted,
            # Legacy inverse of is_muted; zulip-terminal 0.7.0 still reads it.
            "in_home_view": not subscription.is_muted,
            "pin_to_top": subscription.pin_to_top,
            "desktop_notifications": subscription.desktop_notifications,
            "audible_notifications": subscription.audible_notifications,
            "push_notifications": subscription.push_notifications,
            "email_notifications": subscription.email_notifications,
            "wildcard_mentions_notify": subscription.wildcard_mentions_notify,
        }
    )
    if subscriber_fields:
        data.update(subscriber_fields)
    return data


def bot_dict(bot: UserProfile, *, services: list[Any]) -> JSONDict:
    """A bot as its administrators see it (/register's realm_bots, realm_bot events)."""
    return {
        "email": bot.email,
        "user_id": bot.id,
        "full_name": bot.full_name,
        "bot_type": bot.bot_type,
        "is_active": bot.is_active,
        "api_key": bot.api_key,
        "default_sending_stream": None,
        "default_events_register_stream": None,
        "default_all_public_streams": False,
        "avatar_url": gravatar_url(bot.delivery_email, bot.avatar_version),
        "services": services,
        "owner_id": bot.bot_owner_id,
    }


def cross_realm_bot_dict(bot: UserProfile, requester: UserProfile | None, *, client_gravatar: bool = True,
                         email_visible: bool | None = None) -> JSONDict:
    """A system bot as /register's cross_realm_bots lists it."""
    return dict(user_dict(bot, requester, client_gravatar=client_gravatar, email_visible=email_visible),
                is_system_bot=True)


# Group-valued settings of user groups and what each defaults to (Zulip 10's defaults): a system
# group, or GROUP_CREATOR, the anonymous group of just the group's creator.
GROUP_CREATOR = "group_creator"
USER_GROUP_SETTINGS = {
    "can_add_members_group": GROUP_CREATOR,
    "can_join_group": "role:nobody",
    "can_leave_group": "role:everyone",
    "can_manage_group": GROUP_CREATOR,
    "can_mention_group": "role:everyone",
    "can_remove_members_group": "role:nobody",
}


def user_group_setting_defaults(realm_id: int) -> JSONDict:
    """{setting: group id} of the system-group defaults above, resolved once per organization
    (None for GROUP_CREATOR, which depends on the group)."""

    return {name: None if default == GROUP_CREATOR else system_group(realm_id, default).id
            for name, default in USER_GROUP_SETTINGS.items()}


def user_group_setting(group: UserGroup, name: str, setting_defaults: JSONDict) -> Any:
    """A group's setting value: stored, else its default (a group id or an anonymous group)."""
    value = (group.settings or {}).get(name)
    if value is None:
        value = setting_defaults[name]
    if value is None:
        value = creator_group_value(group.creator_id)
    return value


def user_group_dict(group: UserGroup, *, members: list[int], direct_subgroup_ids: list[int],
                    setting_defaults: JSONDict) -> Any:
    """A user group as GET /user_groups, /register's realm_user_groups and user_group events
    show it. `setting_defaults` (user_group_setting_defaults) fills settings never set."""
    data = {
        "id": group.id,
        "name": group.name,
        "description": group.description,
        "date_created": group.date_created,
        "creator_id": group.creator_id,
        "members": members,
        "direct_subgroup_ids": direct_subgroup_ids,
        "is_system_group": group.is_system_group,
        "deactivated": group.deactivated,
    }
    data.update({name: user_group_setting(group, name, setting_defaults) for name in USER_GROUP_SETTINGS})
    return data


def linkifier_dict(linkifier: Linkifier) -> JSONDict:
    """A linkifier as GET /realm/linkifiers and realm_linkifiers events return it."""
    return {"id": linkifier.id, "pattern": linkifier.pattern, "url_template": linkifier.url_template}


def folder_dict(folder: ChannelFolder) -> JSONDict:
    """A channel folder as GET /channel_folders and its events return it."""
    return {
        "id": folder.id,
        "name": folder.name,
        "description": folder.description,
        "rendered_description": folder.rendered_description,
        "date_created": folder.date_created,
        "creator_id": folder.creator_id,
        "order": folder.order,
        "is_archived": folder.is_archived,
    }


def view_dict(view: NavigationView) -> JSONDict:
    """A navigation view as GET /navigation_views and its events return it."""
    return {"fragment": view.fragment, "is_pinned": view.is_pinned, "name": view.name}


def field_dict(field: CustomProfileField) -> JSONDict:
    """A custom profile field as GET /realm/profile_fields and its event return it."""
    return {
        "id": field.id,
        "type": field.field_type,
        "order": field.order,
        "name": field.name,
        "hint": field.hint,
        "field_data": field.field_data,
        "display_in_profile_summary": field.display_in_profile_summary,
        "required": field.required,
        "editable_by_user": field.editable_by_user,
    }


def attachment_dict(attachment: Attachment, linking_messages: peewee.ModelSelect) -> JSONDict:
    """Zulip's attachment object: times in milliseconds, with the messages that link it."""
    return {
        "id": attachment.id,
        "name": attachment.file_name,
        "path_id": attachment.path_id,
        "size": attachment.size,
        "create_time": attachment.create_time * 1000,
        "messages": [{"id": m.id, "date_sent": m.date_sent * 1000} for m in linking_messages],
    }


def service_dicts(bot: UserProfile, service: Any) -> list[Any]:
    """`services` as Zulip shows a bot to its administrators: one entry for a service bot (the
    BotService row), none for others."""
    if service is None:
        return []
    if bot.bot_type == BOT_OUTGOING_WEBHOOK:
        return [{"base_url": service.base_url, "interface": service.interface, "token": service.token}]
    return [{"service_name": service.name, "config_data": service.config_data}]


def user_topic_dict(user_topic: Any) -> Any:
    """One entry of /register's user_topics and GET /user_topics."""
    return user_topic_fields(user_topic.stream_id, user_topic.topic, user_topic.visibility_policy,
                             user_topic.last_updated)


def user_topic_fields(stream_id: int, topic: str, policy: int, last_updated: int) -> JSONDict:
    """The user_topic shape."""
    return {"stream_id": stream_id, "topic_name": topic, "last_updated": last_updated,
            "visibility_policy": policy}


def draft_dict(draft: Draft) -> JSONDict:
    """A draft as GET /drafts, /register and drafts events return it."""
    return {"id": draft.id, "type": draft.type, "to": list(draft.to), "topic": draft.topic,
            "content": draft.content, "timestamp": draft.last_edit_time}


def saved_snippet_dict(snippet: SavedSnippet) -> JSONDict:
    """A saved snippet as GET /saved_snippets, /register and saved_snippets events return it."""
    return {"id": snippet.id, "title": snippet.title, "content": snippet.content,
            "date_created": snippet.date_created}


def device_dict(device: ClientDevice) -> JSONDict:
    """A registered app installation's push state, as /register's `devices` values carry it."""
    return {
        "push_key_id": device.push_key_id,
        "push_token_id": device.push_token_id,
        "pending_push_token_id": device.pending_push_token_id,
        "push_token_last_updated_timestamp": device.push_token_last_updated_timestamp,
        "push_registration_error_code": device.push_registration_error_code,
    }
