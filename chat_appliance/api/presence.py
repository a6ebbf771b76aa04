"""POST /users/me/presence, GET /realm/presence, GET /users/{user_id_or_email}/presence."""

import time

from flask import Blueprint

from chat_appliance.actions.presence import do_update_user_presence, user_presence
from chat_appliance.lib.presence import DEFAULT_HISTORY_LIMIT_DAYS, legacy_presence, realm_presences
from chat_appliance.lib.access import access_user_by_email, access_user_by_id
from chat_appliance.lib.errors import JsonableError
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_bool, check_int, int_range, is_id_string, one_of
from chat_appliance.lib.user_settings import user_setting

bp = Blueprint("presence", __name__)


@bp.post("/users/me/presence")
@endpoint(
    status=Param(one_of("active", "idle")),
    new_user_input=Param(check_bool, default=False),
    ping_only=Param(check_bool, default=False),
    slim_presence=Param(check_bool, default=False),
    last_update_id=Param(check_int, default=None),
    history_limit_days=Param(int_range(low=0), default=None),
)
def update_presence(user, status, new_user_input, ping_only, slim_presence, last_update_id, history_limit_days):
    """Record the requester's presence; return everyone's unless ping_only. Passing
    last_update_id (Zulip 9.0) selects the modern format and only the changes since."""
    do_update_user_presence(user, status, new_user_input=new_user_input)
    if ping_only:
        return {}
    presences, newest = realm_presences(
        user, slim=slim_presence or last_update_id is not None, last_update_id=last_update_id,
        history_limit_days=DEFAULT_HISTORY_LIMIT_DAYS if history_limit_days is None else history_limit_days)
    return {"presences": presences, "presence_last_update_id": newest, "server_timestamp": time.time(),
            "zephyr_mirror_active": False}


@bp.get("/realm/presence")
@endpoint()
def get_realm_presence(user):
    """Everyone's presence, in the legacy format keyed by email."""
    presences, _newest = realm_presences(user, slim=False)
    return {"presences": presences, "server_timestamp": time.time()}


@bp.get("/users/<user_id_or_email>/presence")
@endpoint()
def get_user_presence(user, user_id_or_email):
    """One user's presence, by id or email."""
    if is_id_string(user_id_or_email):
        target = access_user_by_id(user, int(user_id_or_email))
    else:
        target = access_user_by_email(user, user_id_or_email)
    presence = user_presence(target)
    if presence is None or target.is_bot or not user_setting(target, "presence_enabled"):
        raise JsonableError(f"No presence data for {user_id_or_email}")
    return {"presence": {key: {"status": value["status"], "timestamp": value["timestamp"]}
                         for key, value in legacy_presence(presence).items()}}
