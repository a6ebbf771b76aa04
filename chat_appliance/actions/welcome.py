"""The welcome message every new account receives: real clients fail on an empty first view
(zulip-terminal 0.7.0 crashes when its first GET /messages returns nothing to show)."""

from ..lib.system_bots import WELCOME_BOT
from ..models import UserProfile
from .messages import internal_send_direct_message

WELCOME_TEXT = (
    "Hello, and welcome to {realm}! This is a direct message from the Welcome Bot.\n\n"
    "Channels hold conversations by topic; the #**general** channel is a good place to start."
)


def send_welcome_message(user):
    """A direct message from the organization's Welcome Bot to a new human account."""
    bot = UserProfile.get_or_none((UserProfile.realm == user.realm_id)
                                  & (UserProfile.email == f"{WELCOME_BOT[0]}@{user.realm.host}"))
    if bot is None or user.is_bot:
        return None
    return internal_send_direct_message(bot, user, WELCOME_TEXT.format(realm=user.realm.name))
