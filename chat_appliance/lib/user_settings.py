"""Personal settings: their defaults (Zulip's) and validation. Stored values override defaults."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import json

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import UserProfile

# Settings a user may change through PATCH /settings that need no column of their own.
# Values are Zulip's defaults for a new account.
USER_SETTING_DEFAULTS = {
    "twenty_four_hour_time": False,
    "translate_emoticons": False,
    "display_emoji_reaction_users": True,
    "send_private_typing_notifications": True,
    "send_stream_typing_notifications": True,
    "send_read_receipts": True,
    "enable_drafts_synchronization": True,
    "pm_content_in_desktop_notifications": True,
    "enable_desktop_notifications": True,
    "enable_sounds": True,
    "enable_offline_email_notifications": True,
    "enable_followed_topic_email_notifications": True,
    "enable_offline_push_notifications": True,
    "enable_online_push_notifications": True,
    "enable_stream_push_notifications": False,
    "enable_followed_topic_push_notifications": True,
    "wildcard_mentions_notify": True,
    "presence_enabled": True,
    "starred_message_counts": True,
    "fluid_layout_width": False,
    "high_contrast_mode": False,
    "color_scheme": 1,
    "default_language": "en",
    "emojiset": "google",
    "demote_inactive_streams": 1,
    "web_mark_read_on_scroll_policy": 1,
    "user_list_style": 2,
    "web_channel_default_view": 1,
    "web_home_view": "inbox",
    "automatically_follow_topics_policy": 3,
    "automatically_unmute_topics_in_muted_streams_policy": 2,
    "automatically_follow_topics_where_mentioned": True,
    "allow_private_data_export": False,
    "receives_typing_notifications": True,
}


def user_setting(user: UserProfile, name: str) -> int:
    """A personal setting's value: stored, else the default."""
    return (user.settings or {}).get(name, USER_SETTING_DEFAULTS[name])


def setting_in_stored_text(settings_text: str | None, name: str) -> Any:
    """A personal setting from the account's settings column as stored (JSON text, read raw by
    queries over a whole organization): parsed only when it names the setting, since most people
    keep most settings at their defaults."""
    if settings_text and f'"{name}"' in settings_text:
        return json.loads(settings_text).get(name, USER_SETTING_DEFAULTS[name])
    return USER_SETTING_DEFAULTS[name]


def all_user_settings(user: UserProfile) -> JSONDict:
    """Every personal setting, for /register's user_settings object."""
    values = dict(USER_SETTING_DEFAULTS)
    values.update(user.settings or {})
    values["timezone"] = user.timezone
    values["email_address_visibility"] = user.email_address_visibility
    return values
