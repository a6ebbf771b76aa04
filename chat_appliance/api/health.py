"""GET /health: for monitors and load balancers, outside /api/v1, without credentials."""

from flask import Blueprint, current_app, jsonify

from chat_appliance.db.connection import check_database
from chat_appliance.lib.database_outage import note_available, note_unavailable
from chat_appliance.lib.disk import DISK_FULL_MESSAGE, disk_state

bp = Blueprint("health", __name__)


@bp.get("/health")
def health():
    """200 when the server answers, its database does and its disk has room; 503 otherwise. Not
    rate limited and never authenticated, so a monitor can poll it."""
    try:
        check_database()
    except Exception as error:  # noqa: BLE001 - any database failure means unhealthy
        note_unavailable(error)
        response = jsonify({"result": "error", "msg": f"Database unavailable: {type(error).__name__}",
                            "code": "DATABASE_UNAVAILABLE", "status": "unhealthy"})
        response.status_code = 503
        return response
    note_available()
    if disk_state(current_app.config["INSTANCE_PATH"]) == "full":
        # The database answers reads while every write fails: a monitor must see it.
        response = jsonify({"result": "error", "msg": DISK_FULL_MESSAGE, "code": "DISK_FULL", "status": "unhealthy",
                            "database": "ok", "disk": "full"})
        response.status_code = 503
        return response
    return jsonify({"result": "success", "msg": "", "status": "ok", "database": "ok", "disk": "ok"})
