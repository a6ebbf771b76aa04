"""Reads of the users someone muted (actions/muted_users.py changes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.models import MutedUser

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import UserProfile


def muted_users_list(user: UserProfile) -> list[JSONDict]:
    """[{id, timestamp}] in the order the users were muted."""
    rows = MutedUser.select().where(MutedUser.user_profile == user).order_by(MutedUser.date_muted, MutedUser.id)
    return [{"id": row.muted_user_id, "timestamp": row.date_muted} for row in rows]
