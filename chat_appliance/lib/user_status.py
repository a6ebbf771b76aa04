"""Reads of users' statuses (actions/user_status.py changes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.lib.user_settings import user_setting
from chat_appliance.models import UserProfile, UserStatus

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict


def user_status_dict(status: UserStatus | None, *, away: bool = False) -> JSONDict:
    """The status as GET /users/{id}/status and /register give it: only what is set."""
    result = {}
    if away:
        result["away"] = True
    if status is not None and status.status_text:
        result["status_text"] = status.status_text
    if status is not None and status.emoji_name:
        result.update(emoji_name=status.emoji_name, emoji_code=status.emoji_code,
                      reaction_type=status.reaction_type)
    return result


def realm_user_statuses(realm_id: int) -> JSONDict:
    """{str(user id): status} for the users of the organization who have one (/register)."""
    users = {u.id: u for u in UserProfile.select().where((UserProfile.realm == realm_id) & UserProfile.is_active)}
    statuses = {s.user_profile_id: s for s in UserStatus.select().where(UserStatus.user_profile.in_(list(users)))}
    result = {}
    for user_id, user in users.items():
        entry = user_status_dict(statuses.get(user_id), away=not user_setting(user, "presence_enabled"))
        if entry:
            result[str(user_id)] = entry
    return result
