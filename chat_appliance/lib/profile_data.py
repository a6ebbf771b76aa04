"""Custom profile field types and a user's profile_data (read by the user serializer)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.models.base import query_rows

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import UserProfile

# Zulip's field types.
SHORT_TEXT, LONG_TEXT, SELECT, DATE, URL, USER, EXTERNAL_ACCOUNT, PRONOUNS = 1, 2, 3, 4, 5, 6, 7, 8
FIELD_TYPES = (SHORT_TEXT, LONG_TEXT, SELECT, DATE, URL, USER, EXTERNAL_ACCOUNT, PRONOUNS)
# Types whose values are Markdown and so carry a rendered_value.
RENDERED_TYPES = (SHORT_TEXT, LONG_TEXT)


def profile_data_for(user: UserProfile) -> JSONDict:
    """{field id as string: {value, rendered_value?}}, as the user object's profile_data."""
    rows = query_rows('SELECT v."field_id", v."value", v."rendered_value", f."field_type"'
                      ' FROM "custom_profile_field_value" v JOIN "custom_profile_field" f ON f."id" = v."field_id"'
                      ' WHERE v."user_profile_id" = {p}', user.id)
    data = {}
    for field_id, value, rendered_value, field_type in rows:
        entry = {"value": value}
        if field_type in RENDERED_TYPES:
            entry["rendered_value"] = rendered_value
        data[str(field_id)] = entry
    return data
