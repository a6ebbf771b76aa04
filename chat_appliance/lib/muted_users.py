"""Reads of the users someone muted (actions/muted_users.py changes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.models.base import query_rows

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import UserProfile


def muted_users_list(user: UserProfile) -> list[JSONDict]:
    """[{id, timestamp}] in the order the users were muted."""
    return [{"id": muted, "timestamp": when} for muted, when in query_rows(
        'SELECT "muted_user_id", "date_muted" FROM "muted_user" WHERE "user_profile_id" = {p}'
        ' ORDER BY "date_muted", "id"', user.id)]
