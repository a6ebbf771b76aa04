"""The organization's system bots: who they are and how to find them."""

from chat_appliance.models import UserProfile

# (short name, full name); the email is SHORTNAME@REALMHOST.
WELCOME_BOT = ("welcome-bot", "Welcome Bot")
NOTIFICATION_BOT = ("notification-bot", "Notification Bot")


def system_bot(realm, short_name):
    """The system bot with this short name."""
    return UserProfile.get((UserProfile.realm == realm) & (UserProfile.email == f"{short_name}@{realm.host}"))
