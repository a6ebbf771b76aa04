"""Emoji reactions: POST and DELETE /messages/{message_id}/reactions."""

from flask import Blueprint

from chat_appliance.actions.reactions import REACTION_TYPES, check_emoji, do_add_reaction, do_remove_reaction
from chat_appliance.lib.access import access_message
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import one_of

bp = Blueprint("reactions", __name__)

REACTION_PARAMS = dict(emoji_name=Param(), emoji_code=Param(default=None),
                       reaction_type=Param(one_of(*REACTION_TYPES), default="unicode_emoji"))


@bp.post("/messages/<int:message_id>/reactions")
@endpoint(**REACTION_PARAMS)
def add_reaction(user, message_id, emoji_name, emoji_code, reaction_type):
    """React to a message with an emoji."""
    message, _flags = access_message(user, message_id)
    do_add_reaction(user, message, *check_emoji(emoji_name, emoji_code, reaction_type, user.realm_id))


@bp.delete("/messages/<int:message_id>/reactions")
@endpoint(**REACTION_PARAMS)
def remove_reaction(user, message_id, emoji_name, emoji_code, reaction_type):
    """Take back one's emoji reaction."""
    message, _flags = access_message(user, message_id)
    if reaction_type == "realm_emoji" and emoji_code is not None:
        # A deactivated custom emoji's reactions can still be taken back.
        code = emoji_code
    else:
        _name, code, reaction_type = check_emoji(emoji_name, emoji_code, reaction_type, user.realm_id)
    do_remove_reaction(user, message, code, reaction_type)
