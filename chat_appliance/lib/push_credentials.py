"""Whether this server may use Zulip's push notification service, and the credentials that
`chat-appliance register-push-service` stores for it in the instance folder.

Kept apart from clients/push_service.py (the protocol): GET /server_settings and POST /register say
whether push is enabled, and need none of the protocol for it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

# Where `register-push-service` keeps the credentials in the instance folder (mode 600).
CREDENTIALS_FILE = "push_service_credentials.json"


def configured(config: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(service URL, org id, org key) when push is configured, else None: a URL, and this
    server's org id and key from the configuration, else from the instance's credentials file."""
    url = config.get("PUSH_NOTIFICATION_BOUNCER_URL") or config.get("ZULIP_SERVICES_URL")
    org_id, org_key = config.get("ZULIP_ORG_ID"), config.get("ZULIP_ORG_KEY")
    if not (org_id and org_key) and config.get("INSTANCE_PATH"):
        stored = read_credentials(config["INSTANCE_PATH"])
        if stored:
            org_id, org_key = stored["zulip_org_id"], stored["zulip_org_key"]
    if not (url and org_id and org_key):
        return None
    return str(url), str(org_id), str(org_key)


_read_cache: dict[str, tuple[Any, Any]] = {}


def read_credentials(instance_path: str | os.PathLike[str]) -> dict[str, str] | None:
    """The credentials `register-push-service` stored, or None. Read again only when the file
    changes (a stat per call: the server asks at every message, so the path is a plain string,
    not a Path, whose construction cost a send more than the stat itself)."""
    path = os.path.join(os.fspath(instance_path), CREDENTIALS_FILE)
    try:
        stat = os.stat(path)
    except OSError:
        return None
    key = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
    cached = _read_cache.get(path)
    if cached is not None and cached[0] == key:
        return cached[1]
    try:
        with open(path, encoding="utf-8") as stored_file:
            stored = json.load(stored_file)
    except (OSError, ValueError):
        return None
    credentials = _valid_credentials(stored)
    _read_cache[path] = (key, credentials)
    return credentials


def _valid_credentials(stored: Any) -> dict[str, str] | None:
    if not isinstance(stored, dict) or not stored.get("zulip_org_id") or not stored.get("zulip_org_key"):
        return None
    return {"zulip_org_id": str(stored["zulip_org_id"]), "zulip_org_key": str(stored["zulip_org_key"])}


def write_credentials(instance_path: str | os.PathLike[str], org_id: str, org_key: str) -> Path:
    """Store the credentials in the instance folder, readable by its owner only."""
    path = Path(instance_path) / CREDENTIALS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as out:
        json.dump({"zulip_org_id": org_id, "zulip_org_key": org_key}, out)
    os.replace(temporary, path)
    return path
