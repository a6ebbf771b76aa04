"""Reads of presence, in both of Zulip's formats (actions/presence.py records it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from chat_appliance.lib.user_settings import setting_in_stored_text
from chat_appliance.models import now
from chat_appliance.models.base import query_rows

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import UserProfile

# Zulip's OFFLINE_THRESHOLD_SECS: a client that has not pinged for this long is offline; clients
# ping every 60 s. A legacy status is "active" when the user was active within it of the last ping.
OFFLINE_THRESHOLD_SECONDS = 140
# How often clients are told to report presence (Zulip's server_presence_ping_interval_seconds).
PING_INTERVAL_SECONDS = 60

# How far back presence data is served unless the client asks otherwise (Zulip: two weeks).
DEFAULT_HISTORY_LIMIT_DAYS = 14


def legacy_status(presence: Any) -> Any:
    """(status, timestamp) of the legacy format."""
    active = presence.last_active_time
    if active is not None and active + OFFLINE_THRESHOLD_SECONDS >= presence.last_connected_time:
        return "active", active
    return "idle", presence.last_connected_time


def legacy_presence(presence: Any) -> JSONDict:
    """{"website": ..., "aggregated": ...}: since Zulip 7.0 both carry the same data, and the
    client is always "website"."""
    status, timestamp = legacy_status(presence)
    return {
        "website": {"client": "website", "status": status, "timestamp": timestamp, "pushable": False},
        "aggregated": {"client": "website", "status": status, "timestamp": timestamp},
    }


def modern_presence(presence: Any) -> JSONDict:
    """{"active_timestamp", "idle_timestamp"}: the last time active, the last time connected."""
    return {"active_timestamp": presence.last_active_time or 0,
            "idle_timestamp": presence.last_connected_time}


class PresenceRow(NamedTuple):
    """What the presence formats read of a user's presence row."""

    last_connected_time: int
    last_active_time: int | None


# The presence of an organization's active people (bots report none), with what the formats and
# the presence_enabled setting need of their accounts, as tuples: an organization has thousands.
REALM_PRESENCES_SQL = (
    'SELECT p."user_profile_id", u."email", u."settings", p."last_connected_time", p."last_active_time",'
    ' p."last_update_id" FROM "user_presence" p JOIN "user_profile" u ON u."id" = p."user_profile_id"'
    ' WHERE u."realm_id" = {p} AND u."is_active" AND NOT u."is_bot" AND ')


def realm_presences(user: UserProfile, *, slim: bool, history_limit_days: int = DEFAULT_HISTORY_LIMIT_DAYS,
                    last_update_id: Any = None) -> tuple[JSONDict, int]:
    """({key: presence}, the largest last_update_id served or -1) for the requester's organization:
    humans sharing their presence, seen within the history limit (or changed after last_update_id)."""
    if last_update_id is not None and last_update_id >= 0:
        rows = query_rows(REALM_PRESENCES_SQL + 'p."last_update_id" > {p} ORDER BY p."user_profile_id"',
                          user.realm_id, last_update_id)
    else:
        rows = query_rows(REALM_PRESENCES_SQL + 'p."last_connected_time" >= {p} ORDER BY p."user_profile_id"',
                          user.realm_id, now() - history_limit_days * 86400)
    presences, newest = {}, -1
    for user_id, email, settings_text, connected, active, update_id in rows:
        if not setting_in_stored_text(settings_text, "presence_enabled"):
            continue
        newest = max(newest, update_id)
        row = PresenceRow(connected, active)
        if slim:
            presences[str(user_id)] = modern_presence(row)
        else:
            presences[email] = legacy_presence(row)
    if last_update_id is not None:
        newest = max(newest, last_update_id)
    return presences, newest
