"""Muted users: POST|DELETE /users/me/muted_users/{muted_user_id}."""

from flask import Blueprint

from chat_appliance.actions.muted_users import check_mute_target, do_mute_user, do_unmute_user
from chat_appliance.lib.access import access_user_by_id
from chat_appliance.web.params import endpoint

bp = Blueprint("muted_users", __name__)


@bp.post("/users/me/muted_users/<int:muted_user_id>")
@endpoint()
def mute_user(user, muted_user_id):
    """Mute a user."""
    target = access_user_by_id(user, muted_user_id)
    check_mute_target(user, target)
    do_mute_user(user, target)


@bp.delete("/users/me/muted_users/<int:muted_user_id>")
@endpoint()
def unmute_user(user, muted_user_id):
    """Unmute a user."""
    do_unmute_user(user, access_user_by_id(user, muted_user_id))
