"""Incoming webhooks: a message formatted by an integration, sent as the bot whose key called."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from chat_appliance.lib.errors import (
    InvalidAPIKeyError,
    JsonableError,
    StreamDoesNotExistError,
    StreamIdDoesNotExistError,
    UserDeactivatedError,
)
from chat_appliance.lib.system_bots import NOTIFICATION_BOT, system_bot
from chat_appliance.models import UserProfile
from chat_appliance.actions.messages import check_send_message, internal_send_direct_message

if TYPE_CHECKING:
    from chat_appliance.config import Limits

# Zulip tells a bot's owner about a misconfigured integration at most once a minute
# (UserProfile.BOT_OWNER_STREAM_ALERT_WAITPERIOD), so a service retrying a bad URL does not flood
# them. Kept in memory: the appliance is one process, and a restart forgetting it costs one notice.
OWNER_NOTICE_SECONDS = 60
_last_owner_notice: dict[int, float] = {}

# What Zulip appends to content cut at the message length limit (normalize_body).
TRUNCATED_SUFFIX = "\n[message truncated]"


def user_for_webhook_key(api_key: Any) -> Any:
    """The active account whose API key this is (incoming webhooks carry the key in the URL)."""
    user = UserProfile.get_or_none(UserProfile.api_key == api_key) if isinstance(api_key, str) and api_key else None
    if user is None:
        raise InvalidAPIKeyError()
    if not user.is_active:
        raise UserDeactivatedError()
    return user


def full_name_for_email(realm_id: int, email: str) -> str | None:
    """The full name of the active member of this organization with this email, else None: a
    payload naming someone by email (a Jira assignee) shows who they are here."""
    if not isinstance(email, str) or not email.strip():
        return None
    user = UserProfile.get_by_login_email(email.strip())
    if user is None or user.realm_id != realm_id or not user.is_active:
        return None
    return user.full_name


def guess_user(realm_id: int, name: str) -> int | None:
    """The first active member of the organization whose full name is `name` (in any case) or
    whose email starts with it, as Zulip guesses who a service's user name means."""
    if not isinstance(name, str) or not name:
        return None
    lowered = name.lower()
    candidates = (UserProfile.select(UserProfile.id, UserProfile.full_name, UserProfile.email)
                  .where((UserProfile.realm == realm_id) & (UserProfile.is_active == True))  # noqa: E712
                  .order_by(UserProfile.id))
    for user in candidates:
        if user.full_name.lower() == lowered or user.email.lower().startswith(lowered):
            return user.id
    return None


def do_send_webhook_direct_message(bot: UserProfile, *, user_id: int, content: str, client_name: str,
                                   limits: Limits) -> Any:
    """A direct message from the bot to one member (a personal build's result to whoever ran it)."""
    content = content.rstrip().lstrip("\n")
    return check_send_message(bot, message_type="private", to=[user_id], topic=None, content=content,
                              client_name=client_name, limits=limits)[0]


def notify_bot_owner(bot: UserProfile, content: str) -> None:
    """A direct message from Notification Bot to the bot's owner, at most once a minute per bot."""
    if not bot.is_bot or bot.bot_owner_id is None:
        return
    now = time.monotonic()
    last = _last_owner_notice.get(bot.id)
    if last is not None and now - last <= OWNER_NOTICE_SECONDS:
        return
    _last_owner_notice[bot.id] = now
    owner = UserProfile.get_by_id(bot.bot_owner_id)
    internal_send_direct_message(system_bot(bot.realm, NOTIFICATION_BOT[0]), owner, content)


def missing_channel_notice(bot: UserProfile, stream: Any) -> str:
    """Zulip's note to the owner of a bot that posted to a channel that does not exist."""
    identity = f"`{bot.delivery_email}`"
    if isinstance(stream, int):
        return (f"Your bot {identity} tried to send a message to channel ID {stream}, "
                "but there is no channel with that ID.")
    return (f"Your bot {identity} tried to send a message to channel #**{stream}**, but that "
            "channel does not exist. Click [here](#channels/new) to create it.")


def do_send_webhook_message(bot: UserProfile, *, stream: Any, topic: str, content: str, client_name: str,
                            limits: Limits) -> Any:
    """Post to `stream` (a name or id) and `topic`; with no channel, a direct message to the bot's
    owner, as Zulip does (an account that is not a bot gets it itself). A channel name that does
    not exist sends nothing and tells the bot's owner, and the service gets success, as in Zulip
    (an id that does not exist is still an error). Returns the message id, or None."""
    # Zulip's normalize_body: templates that start or end with newlines read the same.
    content = content.rstrip().lstrip("\n")
    if len(content) > limits.max_message_length:
        content = content[: limits.max_message_length - len(TRUNCATED_SUFFIX)] + TRUNCATED_SUFFIX
    if stream is None:
        recipient = bot.bot_owner_id or (None if bot.is_bot else bot.id)
        if recipient is None:
            raise JsonableError("Missing 'stream' argument")
        return check_send_message(bot, message_type="private", to=[recipient], topic=None, content=content,
                                  client_name=client_name, limits=limits)[0]
    to = int(stream) if isinstance(stream, str) and stream.isdecimal() else stream
    try:
        return check_send_message(bot, message_type="stream", to=to, topic=topic, content=content,
                                  client_name=client_name, limits=limits)[0]
    except StreamIdDoesNotExistError:
        notify_bot_owner(bot, missing_channel_notice(bot, to))
        raise
    except StreamDoesNotExistError:
        notify_bot_owner(bot, missing_channel_notice(bot, to))
        return None
