"""What people set for themselves: GET|POST /users/{user_id}/status, POST /users/me/status,
POST|DELETE /users/me/muted_users/{muted_user_id}, GET|POST|DELETE /users/me/alert_words,
DELETE /users/me; and GET /user_groups/{user_group_id}/members/{user_id}."""

from flask import Blueprint

from chat_appliance.actions.alert_words import (
    ALERT_WORD_MAX_LENGTH,
    clean_alert_words,
    do_add_alert_words,
    do_remove_alert_words,
)
from chat_appliance.lib.alert_words import user_alert_words
from chat_appliance.actions.muted_users import check_mute_target, do_mute_user, do_unmute_user
from chat_appliance.actions.user_groups import access_group, direct_member_ids
from chat_appliance.actions.user_status import (
    check_status_emoji,
    check_status_text,
    do_update_user_status,
    get_user_status,
)
from chat_appliance.actions.users import do_deactivate_user
from chat_appliance.lib.access import access_user_by_id
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.groups import is_user_in_group
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_bool, list_of, string_max
from chat_appliance.api.users import only_owner

bp = Blueprint("people", __name__)

STATUS_PARAMS = dict(status_text=Param(default=None), emoji_name=Param(default=None),
                     emoji_code=Param(default=None), reaction_type=Param(default=None))


class CannotDeactivateLastUserError(JsonableError):
    """Zulip's refusal to deactivate the organization's only owner."""

    code = "CANNOT_DEACTIVATE_LAST_USER"

    def __init__(self):
        super().__init__("Cannot deactivate the only organization owner", entity="organization owner",
                         is_last_owner=True)


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


ALERT_WORDS = Param(list_of(string_max(ALERT_WORD_MAX_LENGTH)))


@bp.get("/users/me/alert_words")
@endpoint()
def get_alert_words(user):
    """The requester's alert words."""
    return {"alert_words": user_alert_words(user)}


@bp.post("/users/me/alert_words")
@endpoint(alert_words=ALERT_WORDS)
def add_alert_words(user, alert_words):
    """Add alert words; the answer lists them all."""
    return {"alert_words": do_add_alert_words(user, clean_alert_words(alert_words))}


@bp.delete("/users/me/alert_words")
@endpoint(alert_words=ALERT_WORDS)
def remove_alert_words(user, alert_words):
    """Remove alert words; the answer lists those left."""
    return {"alert_words": do_remove_alert_words(user, clean_alert_words(alert_words))}


@bp.get("/user_groups/<int:group_id>/members/<int:user_id>")
@endpoint(direct_member_only=Param(check_bool, default=False))
def get_is_user_group_member(user, group_id, user_id, direct_member_only):
    """Whether a user is in a group (recursively unless direct_member_only); deactivated users are in none."""
    group = access_group(user.realm_id, group_id)
    target = access_user_by_id(user, user_id)
    if not target.is_active:
        return {"is_user_group_member": False}
    member = target.id in direct_member_ids(group) if direct_member_only else is_user_in_group(target, group.id)
    return {"is_user_group_member": member}


@bp.delete("/users/me")
@endpoint()
def deactivate_own_user(user):
    """Deactivate one's own account; the organization's only owner cannot."""
    if user.is_owner and only_owner(user):
        raise CannotDeactivateLastUserError()
    do_deactivate_user(user, acting_user=user)
