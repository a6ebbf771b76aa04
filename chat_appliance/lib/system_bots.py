"""The organization's system bots: who they are and how to find them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.models import UserProfile

if TYPE_CHECKING:
    from chat_appliance.models import Realm

# (short name, full name); the email is SHORTNAME@REALMHOST.
WELCOME_BOT = ("welcome-bot", "Welcome Bot")
NOTIFICATION_BOT = ("notification-bot", "Notification Bot")


def system_bot(realm: Realm, short_name: str) -> UserProfile:
    """The system bot with this short name."""
    return UserProfile.get((UserProfile.realm == realm) & (UserProfile.email == f"{short_name}@{realm.host}"))
