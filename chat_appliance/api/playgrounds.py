"""Code playgrounds: POST /realm/playgrounds, DELETE /realm/playgrounds/{playground_id}."""

from flask import Blueprint

from chat_appliance.actions.playgrounds import access_playground, check_playground, do_add_playground, do_remove_playground
from chat_appliance.lib.access import require_realm_admin
from chat_appliance.web.params import Param, endpoint

bp = Blueprint("playgrounds", __name__)


@bp.post("/realm/playgrounds")
@endpoint(name=Param(), pygments_language=Param(), url_template=Param())
def add_playground(user, name, pygments_language, url_template):
    """Administrators add a code playground."""
    require_realm_admin(user)
    checked = check_playground(name, pygments_language, url_template)
    return {"id": do_add_playground(user.realm_id, *checked)}


@bp.delete("/realm/playgrounds/<int:playground_id>")
@endpoint()
def remove_playground(user, playground_id):
    """Administrators remove a code playground."""
    require_realm_admin(user)
    do_remove_playground(access_playground(user.realm_id, playground_id))
