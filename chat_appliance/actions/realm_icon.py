"""Upload and remove the organization's icon; everyone hears of the new icon URL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chat_appliance.actions.account import MAX_AVATAR_FILE_SIZE_MIB, image_type
from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.audiences import active_user_ids
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.realm_icon import realm_icon_file, realm_icon_source, realm_icon_url_path
from chat_appliance.lib import event_catalogue
from chat_appliance.models import Realm


def _announce(realm: Realm, base_url: str) -> str:
    url = base_url + realm_icon_url_path(realm)
    publish(event_catalogue.realm_update_dict("icon", {"icon_url": url, "icon_source": realm_icon_source(realm)}),
            active_user_ids(realm.id))
    return url


def do_set_realm_icon(realm: Realm, data: bytes, root: Any, base_url: str) -> str:
    """Store an uploaded picture as the organization's icon; returns its URL."""
    if len(data) > MAX_AVATAR_FILE_SIZE_MIB * 1024 * 1024:
        raise JsonableError(f"Uploaded file is larger than the allowed limit of {MAX_AVATAR_FILE_SIZE_MIB} MiB")
    if image_type(data) is None:
        raise JsonableError("Invalid image format")
    Path(root).mkdir(parents=True, exist_ok=True)
    target = realm_icon_file(root, realm.id)
    staged = target.with_suffix(".new")
    staged.write_bytes(data)
    with write_transaction():
        fresh = Realm.get_by_id(realm.id)
        settings = dict(fresh.settings or {})
        settings["icon_source"] = "U"
        settings["icon_version"] = int(settings.get("icon_version", 0)) + 1
        Realm.update(settings=settings).where(Realm.id == realm.id).execute()
        staged.replace(target)
    realm.settings = settings
    return _announce(realm, base_url)


def do_reset_realm_icon(realm: Realm, root: Any, base_url: str) -> str:
    """Back to the default icon; returns its URL."""
    with write_transaction():
        fresh = Realm.get_by_id(realm.id)
        settings = dict(fresh.settings or {})
        settings["icon_source"] = "G"
        settings["icon_version"] = int(settings.get("icon_version", 0)) + 1
        Realm.update(settings=settings).where(Realm.id == realm.id).execute()
    realm.settings = settings
    realm_icon_file(root, realm.id).unlink(missing_ok=True)
    return _announce(realm, base_url)
