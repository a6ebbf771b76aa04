"""Organization export: POST|GET /export/realm, GET /export/realm/consents; and, outside /api/v1,
the finished export at /user_avatars/exports/{realm_id}/{token}/{name}.tar.gz."""

from flask import Blueprint, current_app, send_file

from chat_appliance.actions.realm_export import access_export_file, do_export_realm, export_consents, realm_exports
from chat_appliance.lib.access import require_realm_admin
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import int_range, one_of

bp = Blueprint("export", __name__)
files_bp = Blueprint("export_files", __name__)


@bp.post("/export/realm")
@endpoint(export_type=Param(one_of(1, 2, parser=int_range()), default=1))
def export_realm(user, export_type):
    """Administrators export the organization: 1 public data, 2 with the private data of consenting users."""
    require_realm_admin(user)
    return {"id": do_export_realm(current_app.config["INSTANCE_PATH"], user, export_type).id}


@bp.get("/export/realm")
@endpoint()
def get_exports(user):
    """The organization's exports."""
    require_realm_admin(user)
    return {"exports": realm_exports(user.realm)}


@bp.get("/export/realm/consents")
@endpoint()
def get_export_consents(user):
    """Who allows administrators to export their private data."""
    require_realm_admin(user)
    return {"export_consents": export_consents(user.realm_id)}


@files_bp.get("/user_avatars/exports/<int:realm_id>/<token>/<name>")
def download_export(realm_id, token, name):
    """A finished export. As in Zulip, the URL's random part is the credential."""
    return send_file(access_export_file(current_app.config["INSTANCE_PATH"], realm_id, token, name), mimetype="application/gzip", as_attachment=True,
                     download_name=name)
