"""POST /messages/{message_id}/report."""

from flask import Blueprint

from ..actions.message_report import check_report, do_report_message
from ..events.state import REPORT_MESSAGE_TYPES
from ..lib.params import Param, endpoint, one_of
from .messages import access_message, limits

bp = Blueprint("message_reports", __name__)

REPORT_NAMES = dict(REPORT_MESSAGE_TYPES)


@bp.post("/messages/<int:message_id>/report")
@endpoint(report_type=Param(one_of(*REPORT_NAMES)), description=Param(default=None))
def report_message(user, message_id, report_type, description):
    """Tell the organization's moderators about a message."""
    message, _flags = access_message(user, message_id)
    stream = check_report(user, report_type, description)
    do_report_message(user, message, REPORT_NAMES[report_type], description, stream, limits())
