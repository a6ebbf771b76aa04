"""POST /messages/{message_id}/report."""

from flask import Blueprint

from chat_appliance.actions.message_reports import check_report, do_report_message
from chat_appliance.events.state import REPORT_MESSAGE_TYPES
from chat_appliance.lib.access import access_message
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import one_of, string_max
from chat_appliance.web.context import limits

bp = Blueprint("message_reports", __name__)

REPORT_NAMES = dict(REPORT_MESSAGE_TYPES)
# Zulip's limit on a report's explanation; clients keep within it.
MAX_REPORT_DESCRIPTION_LENGTH = 1000


@bp.post("/messages/<int:message_id>/report")
@endpoint(report_type=Param(one_of(*REPORT_NAMES)),
          description=Param(string_max(MAX_REPORT_DESCRIPTION_LENGTH), default=None))
def report_message(user, message_id, report_type, description):
    """Tell the organization's moderators about a message."""
    stream = check_report(user, report_type, description)
    message, _flags = access_message(user, message_id)
    do_report_message(user, message, REPORT_NAMES[report_type], description, stream, limits())
