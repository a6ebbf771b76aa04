"""Emoji reactions: add and remove, with reaction events."""

from __future__ import annotations

from typing import TYPE_CHECKING

from peewee import IntegrityError

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.custom_emoji import active_realm_emoji, realm_emoji_by_code
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.messages import message_audience_ids
from chat_appliance.lib import event_catalogue
from chat_appliance.models import FLAG_BITS, Reaction, Stream, UserMessage

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import Message, UserProfile

REACTION_TYPES = ("unicode_emoji", "realm_emoji", "service_extra_emoji")


def check_emoji(emoji_name: str, emoji_code: str | None, reaction_type: str,
                realm_id: int | None = None) -> tuple[str, str, str]:
    """(name, code, type) of a valid emoji; the code is looked up from the name when omitted
    (bots send only emoji_name=wave), an active custom emoji winning over a Unicode one of the
    same name, as in Zulip. A custom emoji is named by its id as emoji_code."""
    from chat_appliance.markdown.emoji import NAME_TO_CODE, ZULIP_EXTRA_EMOJI  # the emoji table loads at first use

    if reaction_type == "realm_emoji" or (reaction_type == "unicode_emoji" and emoji_code is None
                                          and realm_id is not None):
        custom = check_custom_emoji(realm_id, emoji_name, emoji_code, reaction_type)
        if custom is not None:
            return custom
    if reaction_type == "unicode_emoji":
        code = NAME_TO_CODE.get(emoji_name)
        if code is None:
            raise JsonableError("Invalid emoji name.")
        if emoji_code is not None and emoji_code != code:
            raise JsonableError("Invalid emoji code.")
        return emoji_name, code, reaction_type
    if reaction_type == "service_extra_emoji" and emoji_name in ZULIP_EXTRA_EMOJI:
        if emoji_code not in (None, emoji_name):
            raise JsonableError("Invalid emoji code.")
        return emoji_name, emoji_name, reaction_type
    raise JsonableError("Invalid emoji name.")


def check_custom_emoji(realm_id: int | None, emoji_name: str, emoji_code: str | None,
                       reaction_type: str) -> tuple[str, str, str] | None:
    """(name, id, "realm_emoji") for a custom emoji, Zulip's errors for a wrong id, name or a
    deactivated emoji; None when a unicode_emoji request without a code names no custom emoji."""

    if reaction_type == "unicode_emoji":
        emoji = active_realm_emoji(realm_id, emoji_name)
        return (emoji_name, str(emoji.id), "realm_emoji") if emoji is not None else None
    if emoji_code is None:
        emoji = active_realm_emoji(realm_id, emoji_name)
    else:
        emoji = realm_emoji_by_code(realm_id, emoji_code)
    if emoji is None:
        raise JsonableError("Invalid custom emoji.")
    if emoji.name != emoji_name:
        raise JsonableError("Invalid custom emoji name.")
    if emoji.deactivated:
        raise JsonableError("This custom emoji has been deactivated.")
    return emoji_name, str(emoji.id), "realm_emoji"


def reaction_event(op: str, user: UserProfile, message_id: int, emoji_name: str, emoji_code: str,
                   reaction_type: str) -> JSONDict:
    """A reaction event; `user` is the deprecated object zulip-terminal 0.7.0 still reads."""
    return event_catalogue.reaction(op, message_id, emoji_name, emoji_code, reaction_type, user.id,
                                    {"user_id": user.id, "email": user.email, "full_name": user.full_name})


def _audience(message):
    stream = Stream.get_by_id(message.stream_id) if message.stream_id is not None else None
    return message_audience_ids([message.id], stream)


def do_add_reaction(user: UserProfile, message: Message, emoji_name: str, emoji_code: str, reaction_type: str) -> None:
    """Store a reaction; BAD_REQUEST 'Reaction already exists.' for a repeat."""
    with write_transaction():
        # Reacting to a channel message from before one joined keeps a historical copy, as starring does.
        UserMessage.insert(user_profile=user, message=message.id,
                           flags=FLAG_BITS["read"] | FLAG_BITS["historical"]).on_conflict_ignore().execute()
        try:
            with Reaction._meta.database.atomic():
                Reaction.create(message=message, user_profile=user, emoji_name=emoji_name, emoji_code=emoji_code,
                                reaction_type=reaction_type)
        except IntegrityError:
            raise JsonableError("Reaction already exists.") from None
    publish(reaction_event("add", user, message.id, emoji_name, emoji_code, reaction_type), _audience(message))


def do_remove_reaction(user: UserProfile, message: Message, emoji_code: str, reaction_type: str) -> None:
    """Remove the user's reaction; BAD_REQUEST "Reaction doesn't exist." when there is none."""
    with write_transaction():
        row = Reaction.get_or_none((Reaction.message == message.id) & (Reaction.user_profile == user)
                                   & (Reaction.emoji_code == emoji_code) & (Reaction.reaction_type == reaction_type))
        if row is None:
            raise JsonableError("Reaction doesn't exist.")
        row.delete_instance()
    publish(reaction_event("remove", user, message.id, row.emoji_name, emoji_code, reaction_type),
            _audience(message))
