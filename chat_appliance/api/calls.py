"""Video calls: GET /calls/bigbluebutton/create."""

from flask import Blueprint

from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.validators import check_bool
from chat_appliance.web.params import Param, endpoint

bp = Blueprint("calls", __name__)


@bp.get("/calls/bigbluebutton/create")
@endpoint(meeting_name=Param(), voice_only=Param(check_bool, default=False))
def create_bigbluebutton_call(user, meeting_name, voice_only):
    """No BigBlueButton server is configured here: Zulip's answer for that case."""
    raise JsonableError("BigBlueButton is not configured.")
