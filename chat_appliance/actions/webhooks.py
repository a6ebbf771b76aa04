"""Incoming webhooks: a message formatted by an integration, sent as the bot whose key called."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chat_appliance.lib.errors import InvalidAPIKeyError, JsonableError, UserDeactivatedError
from chat_appliance.models import UserProfile
from chat_appliance.actions.messages import check_send_message

if TYPE_CHECKING:
    from chat_appliance.config import Limits


def user_for_webhook_key(api_key: Any) -> Any:
    """The active account whose API key this is (incoming webhooks carry the key in the URL)."""
    user = UserProfile.get_or_none(UserProfile.api_key == api_key) if api_key else None
    if user is None:
        raise InvalidAPIKeyError()
    if not user.is_active:
        raise UserDeactivatedError()
    return user


def do_send_webhook_message(bot: UserProfile, *, stream: Any, topic: str, content: str, client_name: str,
                            limits: Limits) -> Any:
    """Post to `stream` (a name or id) and `topic`; with no channel, a direct message to the
    bot's owner, as Zulip does (a bot without an owner needs a channel)."""
    if stream is None:
        recipient = bot.bot_owner_id or (None if bot.is_bot else bot.id)
        if recipient is None:
            raise JsonableError("Missing 'stream' argument")
        return check_send_message(bot, message_type="private", to=[recipient], topic=None, content=content,
                                  client_name=client_name, limits=limits)[0]
    to = int(stream) if isinstance(stream, str) and stream.isdigit() else stream
    return check_send_message(bot, message_type="stream", to=to, topic=topic, content=content,
                              client_name=client_name, limits=limits)[0]
