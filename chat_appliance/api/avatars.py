"""POST /users/me/avatar and DELETE /users/me/avatar, as Zulip."""

from flask import Blueprint, request

from chat_appliance.actions.account import do_reset_avatar, do_set_avatar
from chat_appliance.lib.errors import JsonableError
from chat_appliance.web.params import endpoint
from chat_appliance.web.context import avatars_root

bp = Blueprint("avatars", __name__)


@bp.post("/users/me/avatar")
@endpoint()
def set_avatar(user):
    """One image file, in any multipart field, becomes the requester's avatar."""
    files = list(request.files.values())
    if len(files) != 1:
        raise JsonableError("You must upload exactly one avatar.")
    return {"avatar_url": do_set_avatar(user, files[0].read(), avatars_root())}


@bp.delete("/users/me/avatar")
@endpoint()
def reset_avatar(user):
    """Back to the default avatar."""
    do_reset_avatar(user, avatars_root())
