"""GET /health: for monitors and load balancers, outside /api/v1, without credentials."""

from flask import Blueprint, jsonify

from chat_appliance.db.connection import check_database

bp = Blueprint("health", __name__)


@bp.get("/health")
def health():
    """200 when the server answers and its database does; 503 otherwise. Not rate limited and
    never authenticated, so a monitor can poll it."""
    try:
        check_database()
    except Exception as error:  # noqa: BLE001 - any database failure means unhealthy
        response = jsonify({"result": "error", "msg": f"Database unavailable: {type(error).__name__}",
                            "code": "DATABASE_UNAVAILABLE", "status": "unhealthy"})
        response.status_code = 503
        return response
    return jsonify({"result": "success", "msg": "", "status": "ok", "database": "ok"})
