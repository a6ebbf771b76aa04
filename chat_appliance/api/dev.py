"""POST /dev_fetch_api_key: any account's API key without a password, on a `chat-appliance dev`
server only (Zulip's development-server login). Everywhere else it does not exist."""

from flask import Blueprint, current_app

from chat_appliance.lib.errors import JsonableError, UserDeactivatedError
from chat_appliance.web.params import Param, endpoint
from chat_appliance.models import UserProfile

bp = Blueprint("dev", __name__)


@bp.post("/dev_fetch_api_key")
@endpoint(auth=False, username=Param())
def dev_fetch_api_key(username):
    """The account's key, as /fetch_api_key answers, when the server runs in dev mode."""
    if not current_app.config.get("DEV_MODE"):
        raise JsonableError("Not Found", code="NOT_FOUND", http_status=404)
    user = UserProfile.get_by_login_email(username)
    if user is None or user.is_system_bot:
        raise JsonableError("This user is not registered.", code="USER_NOT_FOUND", http_status=403)
    if not user.is_active:
        raise UserDeactivatedError()
    return {"api_key": user.api_key, "email": user.email, "user_id": user.id}
