"""Reads of users' statuses (actions/user_status.py changes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.lib.user_settings import setting_in_stored_text
from chat_appliance.models import UserStatus
from chat_appliance.models.base import query_rows

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict


def user_status_dict(status: UserStatus | None, *, away: bool = False) -> JSONDict:
    """The status as GET /users/{id}/status and /register give it: only what is set."""
    if status is None:
        return user_status_fields("", "", "", "", away=away)
    return user_status_fields(status.status_text, status.emoji_name, status.emoji_code, status.reaction_type,
                              away=away)


def user_status_fields(status_text: str | None, emoji_name: str | None, emoji_code: str | None,
                       reaction_type: str | None, *, away: bool) -> JSONDict:
    """user_status_dict's shape from the status's columns (empty or None where unset)."""
    result: JSONDict = {}
    if away:
        result["away"] = True
    if status_text:
        result["status_text"] = status_text
    if emoji_name:
        result.update(emoji_name=emoji_name, emoji_code=emoji_code, reaction_type=reaction_type)
    return result


# The active accounts of an organization that have a status or whose stored settings name
# presence_enabled (whether they share their presence decides `away`; most keep the default),
# with their status, if any, and those settings as text. Reading every account and testing its
# settings in Python cost 2 ms of /register at 2,000 people, nearly all of them without either.
REALM_STATUSES_SQL = (
    'SELECT u."id", u."settings", s."status_text", s."emoji_name", s."emoji_code", s."reaction_type"'
    ' FROM "user_profile" u LEFT JOIN "user_status" s ON s."user_profile_id" = u."id"'
    ' WHERE u."realm_id" = {p} AND u."is_active" AND (s."user_profile_id" IS NOT NULL OR u."settings" LIKE {p})'
    ' ORDER BY u."id"')


def realm_user_statuses(realm_id: int) -> JSONDict:
    """{str(user id): status} for the users of the organization who have one (/register): one
    statement, rows as tuples (an organization has thousands of people, few with a status)."""
    result = {}
    for user_id, settings_text, text, emoji_name, emoji_code, reaction_type in query_rows(
            REALM_STATUSES_SQL, realm_id, '%"presence_enabled"%'):
        away = not setting_in_stored_text(settings_text, "presence_enabled")
        if away or text or emoji_name:
            result[str(user_id)] = user_status_fields(text, emoji_name, emoji_code, reaction_type, away=away)
    return result
