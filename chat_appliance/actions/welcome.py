"""The welcome message every new account receives: real clients fail on an empty first view
(zulip-terminal 0.7.0 crashes when its first GET /messages returns nothing to show)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chat_appliance.lib.system_bots import WELCOME_BOT
from chat_appliance.models import UserProfile
from chat_appliance.actions.messages import internal_send_direct_message

if TYPE_CHECKING:
    from chat_appliance.models import Realm

WELCOME_TEXT = (
    "Hello, and welcome to {realm}! This is a direct message from the Welcome Bot.\n\n"
    "Channels hold conversations by topic; the #**general** channel is a good place to start."
)


def welcome_bot(realm: Realm) -> UserProfile | None:
    """The organization's Welcome Bot, if it exists."""
    return UserProfile.get_or_none((UserProfile.realm == realm.id)
                                   & (UserProfile.email == f"{WELCOME_BOT[0]}@{realm.host}"))


def send_welcome_message(user: UserProfile, custom_text: Any = None) -> tuple[int, Any] | None:
    """A direct message from the organization's Welcome Bot to a new human account, then the
    custom welcome text as a second message (Zulip's welcome_message_custom_text): `custom_text`
    None takes the organization's, the empty string sends none."""
    bot = welcome_bot(user.realm)
    if bot is None or user.is_bot:
        return None
    sent = internal_send_direct_message(bot, user, WELCOME_TEXT.format(realm=user.realm.name))
    if custom_text is None:
        custom_text = (user.realm.settings or {}).get("welcome_message_custom_text", "")
    if custom_text:
        internal_send_direct_message(bot, user, custom_text)
    return sent


def do_send_test_welcome_message(admin: UserProfile, text: str) -> int:
    """POST /realm/test_welcome_bot_custom_message: the Welcome Bot sends this text to the acting
    administrator, as a new account would receive it; returns the message id."""

    # Every organization is created with its Welcome Bot, so welcome_bot() finds one here.
    message_id, _policy = internal_send_direct_message(welcome_bot(admin.realm), admin, text)  # type: ignore[arg-type]
    return message_id
