"""User status: a short text and an emoji per user, announced to everyone in the organization.

The deprecated `away` is Zulip's legacy view of the presence_enabled setting (away = not
presence_enabled): setting it changes that setting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.audiences import active_user_ids
from chat_appliance.lib.custom_emoji import active_realm_emoji
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.user_settings import user_setting
from chat_appliance.models import UserStatus, now
from chat_appliance.actions.reactions import check_custom_emoji
from chat_appliance.actions.users import do_change_settings
from chat_appliance.lib.user_status import user_status_dict
from chat_appliance.lib import event_catalogue

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import UserProfile

STATUS_TEXT_MAX_LENGTH = 60


def check_status_emoji(realm_id: int, emoji_name: str | None, emoji_code: str | None,
                       reaction_type: str | None) -> tuple[str, str, str] | None:
    """(name, code, type) for a status emoji; ("", "", "") clears it; None leaves it unchanged."""
    from chat_appliance.markdown.emoji import CODE_TO_NAME, NAME_TO_CODE, ZULIP_EXTRA_EMOJI  # the emoji table loads at first use

    if emoji_name is None:
        if emoji_code is not None or reaction_type is not None:
            raise JsonableError("Client must pass emoji_name if they pass either emoji_code or reaction_type.")
        return None
    if emoji_name == "":
        return "", "", ""
    if emoji_code is None or reaction_type is None:
        # Zulip looks the name up: active custom emoji first, then Unicode, then Zulip's own.
        custom = active_realm_emoji(realm_id, emoji_name)
        if custom is not None:
            looked_up = (str(custom.id), "realm_emoji")
        elif emoji_name in NAME_TO_CODE:
            looked_up = (NAME_TO_CODE[emoji_name], "unicode_emoji")
        elif emoji_name in ZULIP_EXTRA_EMOJI:
            looked_up = (emoji_name, "zulip_extra_emoji")
        else:
            raise JsonableError(f"Emoji '{emoji_name}' does not exist")
        emoji_code = emoji_code if emoji_code is not None else looked_up[0]
        reaction_type = reaction_type if reaction_type is not None else looked_up[1]
    if reaction_type == "realm_emoji":
        check_custom_emoji(realm_id, emoji_name, emoji_code, reaction_type)
    elif reaction_type == "zulip_extra_emoji":
        if emoji_name not in ZULIP_EXTRA_EMOJI or emoji_code != emoji_name:
            raise JsonableError("Invalid emoji name.")
    elif reaction_type == "unicode_emoji":
        if emoji_code not in CODE_TO_NAME or NAME_TO_CODE.get(emoji_name) != emoji_code:
            raise JsonableError("Invalid emoji name.")
    else:
        raise JsonableError("Invalid emoji type.")
    return emoji_name, emoji_code, reaction_type


def check_status_text(status_text: str | None) -> str | None:
    """Stripped, at most 60 characters (Zulip's limit and text)."""
    if status_text is None:
        return None
    status_text = status_text.strip()
    if len(status_text) > STATUS_TEXT_MAX_LENGTH:
        raise JsonableError(f"status_text is too long (limit: {STATUS_TEXT_MAX_LENGTH} characters)")
    return status_text


def get_user_status(user: UserProfile) -> JSONDict:
    """The user's status dict (empty when none is set)."""
    status = UserStatus.get_or_none(UserStatus.user_profile == user)
    return user_status_dict(status, away=not user_setting(user, "presence_enabled"))


def do_update_user_status(user: UserProfile, *, away: bool | None, status_text: str | None,
                          emoji: tuple[str, str, str] | None) -> None:
    """Store the changed parts of a validated status; tell the organization what changed."""
    if away is not None:
        do_change_settings(user, {"presence_enabled": not away})
    if status_text is not None or emoji is not None:
        with write_transaction():
            status = UserStatus.get_or_none(UserStatus.user_profile == user) or UserStatus(user_profile=user)
            if status_text is not None:
                status.status_text = status_text
            if emoji is not None:
                status.emoji_name, status.emoji_code, status.reaction_type = emoji
            status.timestamp = now()
            status.save()
    publish(event_catalogue.user_status(user.id, away, status_text, emoji), active_user_ids(user.realm_id))
