"""Organization exports requested through the API (POST /export/realm): written synchronously to
the instance folder in Zulip's layout, as a folder and a .tar.gz served at an unguessable URL
like Zulip's (/user_avatars/exports/{realm_id}/{token}/{name}.tar.gz)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import logging
import secrets
import time
from pathlib import Path

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.audiences import admin_ids
from chat_appliance.lib.errors import ResourceNotFoundError
from chat_appliance.lib.user_settings import user_setting
from chat_appliance.lib import event_catalogue
from chat_appliance.models import RealmExport, UserProfile

if TYPE_CHECKING:
    import pathlib
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import Realm

EXPORT_URL_PREFIX = "/user_avatars/exports/"

log = logging.getLogger(__name__)


def export_dict(export: RealmExport, realm_url: str) -> JSONDict:
    """Zulip's RealmExport object."""
    url = None
    if export.date_succeeded is not None and export.date_deleted is None and export.path:
        url = realm_url.rstrip("/") + EXPORT_URL_PREFIX + export.path[len("exports/"):] + ".tar.gz"
    return {"id": export.id, "acting_user_id": export.acting_user_id, "export_time": export.date_requested,
            "deleted_timestamp": export.date_deleted, "failed_timestamp": export.date_failed, "export_url": url,
            "pending": export.date_succeeded is None and export.date_failed is None,
            "export_type": export.export_type}


def realm_exports(realm: Realm) -> list[JSONDict]:
    return [export_dict(e, realm.url) for e in RealmExport.select().where(RealmExport.realm == realm.id)
            .order_by(RealmExport.id)]



def notify_exports(realm: Realm) -> None:
    publish(event_catalogue.realm_export(realm_exports(realm)), admin_ids(realm.id))


def do_export_realm(instance_path: str, user: UserProfile, export_type: int) -> RealmExport:
    """Record the request, write the export into the instance folder, record the outcome; events
    at each step."""

    realm = user.realm
    token = secrets.token_urlsafe(18)
    relative = f"exports/{realm.id}/{token}/zulip-export-{secrets.token_hex(4)}"
    with write_transaction():
        export = RealmExport.create(realm=realm.id, acting_user=user, export_type=export_type,
                                    date_requested=time.time(), path=relative)
    notify_exports(realm)
    from chat_appliance.ops.transfer.exporter import export_realm, make_tarball  # loaded for an export only

    instance = Path(instance_path)
    try:
        make_tarball(export_realm(realm, instance, instance / relative, export_type=export_type))
        export.date_succeeded = time.time()
    except Exception:
        log.exception("export %s failed", export.id)
        export.date_failed = time.time()
    with write_transaction():
        export.save()
    notify_exports(realm)
    return export


def export_consents(realm_id: int) -> list[JSONDict]:
    """[{user_id, consented}] for the organization's active people (Zulip lists humans only)."""
    users = UserProfile.select().where((UserProfile.realm == realm_id) & UserProfile.is_active
                                       & ~UserProfile.is_bot).order_by(UserProfile.id)
    return [{"user_id": u.id, "consented": bool(user_setting(u, "allow_private_data_export"))} for u in users]


def access_export_file(instance_path: str, realm_id: int, token: str, name: str) -> pathlib.Path:
    """The tarball of a finished export named by its URL, or 404."""
    if not name.endswith(".tar.gz") or "/" in token or token.startswith("."):
        raise ResourceNotFoundError("File not found")
    relative = f"exports/{realm_id}/{token}/{name[:-len('.tar.gz')]}"
    export = RealmExport.get_or_none((RealmExport.realm == realm_id) & (RealmExport.path == relative))
    path = Path(instance_path) / (relative + ".tar.gz")
    if export is None or export.date_deleted is not None or not path.is_file():
        raise ResourceNotFoundError("File not found")
    return path
