"""The organization's system bots: who they are and how to find them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from chat_appliance.models import UserProfile

if TYPE_CHECKING:
    from chat_appliance.models import Realm

# (short name, full name); the email is SHORTNAME@REALMHOST.
WELCOME_BOT = ("welcome-bot", "Welcome Bot")
NOTIFICATION_BOT = ("notification-bot", "Notification Bot")


def without_external_notifications(message: Mapping[str, Any]) -> bool:
    """Whether a message (an event's message dict) is the Welcome Bot's: as in Zulip, its
    greeting notifies nobody outside the app (no missed-message mail, no push), or every account
    created and never used would get mail about it. A system bot's address is its short name at
    the organization's host, which no other account can hold."""
    local, _, domain = str(message.get("sender_email") or "").partition("@")
    return local == WELCOME_BOT[0] and domain.split(".")[0] == message.get("sender_realm_str")


def system_bot(realm: Realm, short_name: str) -> UserProfile:
    """The system bot with this short name."""
    return UserProfile.get((UserProfile.realm == realm) & (UserProfile.email == f"{short_name}@{realm.host}"))
