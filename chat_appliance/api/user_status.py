"""Statuses: GET|POST /users/{user_id}/status, POST /users/me/status."""

from flask import Blueprint

from chat_appliance.actions.user_status import (
    check_status_emoji,
    check_status_text,
    do_update_user_status,
    get_user_status,
)
from chat_appliance.lib.access import access_user_by_id
from chat_appliance.lib.errors import JsonableError
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_bool

bp = Blueprint("user_status", __name__)

STATUS_PARAMS = dict(status_text=Param(default=None), emoji_name=Param(default=None),
                     emoji_code=Param(default=None), reaction_type=Param(default=None))


def update_status_of(target, away, status_text, emoji_name, emoji_code, reaction_type):
    """Check every part, then store the status."""
    if away is None and status_text is None and emoji_name is None and emoji_code is None \
            and reaction_type is None:
        raise JsonableError("Client did not pass any new values.")
    status_text = check_status_text(status_text)
    emoji = check_status_emoji(target.realm_id, emoji_name, emoji_code, reaction_type)
    do_update_user_status(target, away=away, status_text=status_text, emoji=emoji)


@bp.get("/users/<int:user_id>/status")
@endpoint()
def get_status(user, user_id):
    """A user's status (empty when none is set)."""
    return {"status": get_user_status(access_user_by_id(user, user_id))}


@bp.post("/users/me/status")
@endpoint(away=Param(check_bool, default=None), **STATUS_PARAMS)
def update_own_status(user, away, **status):
    """Change one's own status: only the parts sent change."""
    update_status_of(user, away, **status)


@bp.post("/users/<int:user_id>/status")
@endpoint(**STATUS_PARAMS)
def update_status_for_user(user, user_id, **status):
    """Administrators change another user's status."""
    if not user.is_realm_admin:
        raise JsonableError("Insufficient permission")
    target = access_user_by_id(user, user_id, allow_deactivated=False)
    update_status_of(target, None, **status)
