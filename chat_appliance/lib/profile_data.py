"""Custom profile field types and a user's profile_data (read by the user serializer)."""

from ..models import CustomProfileField, CustomProfileFieldValue

# Zulip's field types.
SHORT_TEXT, LONG_TEXT, SELECT, DATE, URL, USER, EXTERNAL_ACCOUNT, PRONOUNS = 1, 2, 3, 4, 5, 6, 7, 8
FIELD_TYPES = (SHORT_TEXT, LONG_TEXT, SELECT, DATE, URL, USER, EXTERNAL_ACCOUNT, PRONOUNS)
# Types whose values are Markdown and so carry a rendered_value.
RENDERED_TYPES = (SHORT_TEXT, LONG_TEXT)


def profile_data_for(user):
    """{field id as string: {value, rendered_value?}}, as the user object's profile_data."""
    rows = (CustomProfileFieldValue.select(CustomProfileFieldValue, CustomProfileField)
            .join(CustomProfileField).where(CustomProfileFieldValue.user_profile == user))
    data = {}
    for row in rows:
        entry = {"value": row.value}
        if row.field.field_type in RENDERED_TYPES:
            entry["rendered_value"] = row.rendered_value
        data[str(row.field_id)] = entry
    return data
