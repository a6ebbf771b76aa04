"""The organization's icon: the bundled default, or one an administrator uploaded.

An uploaded icon is a file under the avatars folder; the realm's settings remember that there is
one and its version (the URL changes with each upload, so browsers refetch it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chat_appliance.models import Realm

# Served by webclient/views.py without credentials, like Zulip's default icon.
DEFAULT_REALM_ICON_PATH = "/static/webclient/realm-icon.png"


def realm_icon_source(realm: Realm) -> str:
    """Zulip's realm_icon_source: "U" for an uploaded icon, "G" for the default."""
    return "U" if (realm.settings or {}).get("icon_source") == "U" else "G"


def realm_icon_url_path(realm: Realm) -> str:
    """The icon's URL path on this server (without the base URL)."""
    if realm_icon_source(realm) == "U":
        return f"/user_avatars/{realm.id}/realm/icon.png?version={(realm.settings or {}).get('icon_version', 1)}"
    return DEFAULT_REALM_ICON_PATH


def realm_icon_file(root: Any, realm_id: int) -> Path:
    """Where an uploaded icon lives under the avatars folder `root`."""
    return Path(root) / f"realm-{realm_id}-icon"


def uploaded_realm_icon(root: Any, realm_id: int) -> Path | None:
    """The file of the icon this organization uploaded, or None (no such realm, or no upload)."""
    realm = Realm.get_or_none(Realm.id == realm_id)
    path = realm_icon_file(root, realm_id)
    if realm is None or realm_icon_source(realm) != "U" or not path.is_file():
        return None
    return path
