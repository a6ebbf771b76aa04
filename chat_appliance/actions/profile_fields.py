"""Custom profile fields: the organization's fields and each user's values."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import json

from peewee import fn

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.audiences import active_user_ids
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.json_input import JsonInputError, parse_json
from chat_appliance.lib.profile_data import (  # noqa: F401 - the field types are also imported from here
    DATE,
    EXTERNAL_ACCOUNT,
    FIELD_TYPES,
    LONG_TEXT,
    PRONOUNS,
    RENDERED_TYPES,
    SELECT,
    SHORT_TEXT,
    URL,
    USER,
)
from chat_appliance.lib.serializers import field_dict
from chat_appliance.models import CustomProfileField, CustomProfileFieldValue, UserProfile
from chat_appliance.lib.rendering import render_plain
from chat_appliance.lib import event_catalogue
from chat_appliance.actions.users import notify_user_updated

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict

MAX_NAME_LENGTH = 40
MAX_HINT_LENGTH = 80


def realm_fields(realm_id: int) -> list[CustomProfileField]:
    """The organization's fields, in display order."""
    return list(CustomProfileField.select().where(CustomProfileField.realm == realm_id)
                .order_by(CustomProfileField.order, CustomProfileField.id))


def notify_fields_changed(realm_id: int) -> None:
    """custom_profile_fields with the whole list, to everyone."""
    publish(event_catalogue.custom_profile_fields([field_dict(f) for f in realm_fields(realm_id)]),
            active_user_ids(realm_id))


def check_field_attributes(name: str, hint: str, field_type: int, field_data: Any) -> str:
    """Zulip's limits on a field's name, hint, type and data; returns field_data as text."""
    if field_type not in FIELD_TYPES:
        raise JsonableError("Invalid field type.")
    if not name.strip():
        raise JsonableError("Label cannot be blank.")
    if len(name) > MAX_NAME_LENGTH:
        raise JsonableError(f"name is too long (limit: {MAX_NAME_LENGTH} characters)")
    if len(hint) > MAX_HINT_LENGTH:
        raise JsonableError(f"hint is too long (limit: {MAX_HINT_LENGTH} characters)")
    if field_type == SELECT and not field_data:
        raise JsonableError("Field must have at least one choice.")
    return json.dumps(field_data) if field_data else ""


def do_create_field(realm_id: int, *, name: str, hint: str, field_type: int, field_data: Any,
                    display_in_profile_summary: bool, required: bool, editable_by_user: bool) -> CustomProfileField:
    """Add a field at the end of the display order."""
    data_text = check_field_attributes(name, hint, field_type, field_data)
    with write_transaction():
        if CustomProfileField.select().where((CustomProfileField.realm == realm_id)
                                             & (CustomProfileField.name == name.strip())).exists():
            raise JsonableError("A field with that label already exists.")
        order = (CustomProfileField.select(fn.MAX(CustomProfileField.order))
                 .where(CustomProfileField.realm == realm_id).scalar() or 0) + 1
        field = CustomProfileField.create(realm=realm_id, name=name.strip(), hint=hint, field_type=field_type,
                                          field_data=data_text, order=order,
                                          display_in_profile_summary=display_in_profile_summary,
                                          required=required, editable_by_user=editable_by_user)
    notify_fields_changed(realm_id)
    return field


def do_update_field(field: CustomProfileField, changes: JSONDict) -> None:
    """Apply validated attribute changes to a field."""
    with write_transaction():
        for key, value in changes.items():
            setattr(field, key, value)
        field.save()
    notify_fields_changed(field.realm_id)


def do_delete_field(field: CustomProfileField) -> None:
    """Delete a field and every user's value for it."""
    with write_transaction():
        field.delete_instance(recursive=True)
    notify_fields_changed(field.realm_id)


def access_field(realm_id: int, field_id: int) -> CustomProfileField:
    """A field of the organization, or BAD_REQUEST."""
    field = CustomProfileField.get_or_none((CustomProfileField.id == field_id)
                                           & (CustomProfileField.realm == realm_id))
    if field is None:
        raise JsonableError(f"Field id {field_id} not found.")
    return field


# Zulip's length limits for text values.
MAX_SHORT_TEXT_LENGTH = 50
MAX_LONG_TEXT_LENGTH = 500


def check_field_value(realm_id: int, field: CustomProfileField, value: Any) -> str | None:
    """A value valid for the field's type, as stored text; None or "" clears the field."""
    from datetime import date
    from urllib.parse import urlparse


    if value is None or value == "" or value == []:
        return None
    name = field.name
    if field.field_type == USER:
        if isinstance(value, str):
            try:
                value = parse_json(value)
            except JsonInputError:
                raise JsonableError(f"{name} is not a list of user ids") from None
        if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise JsonableError(f"{name} is not a list of user ids")
        known = {u.id for u in UserProfile.select(UserProfile.id).where(
            (UserProfile.realm == realm_id) & UserProfile.id.in_(value) & UserProfile.is_active)}
        for user_id in value:
            if user_id not in known:
                raise JsonableError(f"Invalid user ID: {user_id}")
        return json.dumps(sorted(set(value)))
    if not isinstance(value, str):
        raise JsonableError(f"{name} is not a string")
    limit = MAX_LONG_TEXT_LENGTH if field.field_type == LONG_TEXT else MAX_SHORT_TEXT_LENGTH
    if field.field_type in (SHORT_TEXT, LONG_TEXT, PRONOUNS, EXTERNAL_ACCOUNT) and len(value) > limit:
        raise JsonableError(f"{name} is too long (limit: {limit} characters)")
    if field.field_type == SELECT and value not in json.loads(field.field_data or "{}"):
        raise JsonableError(f"'{value}' is not a valid choice for '{name}'.")
    if field.field_type == DATE:
        try:
            date.fromisoformat(value)
        except ValueError:
            raise JsonableError(f"{name} is not a date") from None
    if field.field_type == URL:
        parsed = urlparse(value)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise JsonableError(f"{name} is not a URL")
    return value


def check_profile_data(realm_id: int, profile_data: list[JSONDict]) -> list[tuple[CustomProfileField, str | None]]:
    """[{id, value}] with existing field ids and values valid for each field's type."""
    checked = []
    for item in profile_data:
        if not isinstance(item, dict) or "id" not in item:
            raise JsonableError("profile_data is not a list of {id, value} objects")
        field = access_field(realm_id, item["id"])
        checked.append((field, check_field_value(realm_id, field, item.get("value"))))
    return checked


def do_reorder_fields(realm_id: int, order: list[int]) -> None:
    """Set the display order: `order` must list every field of the organization exactly once."""
    fields = {f.id: f for f in realm_fields(realm_id)}
    if sorted(order) != sorted(fields) or len(set(order)) != len(order):
        raise JsonableError("Invalid order mapping.")
    with write_transaction():
        for position, field_id in enumerate(order, 1):
            CustomProfileField.update(order=position).where(CustomProfileField.id == field_id).execute()
    notify_fields_changed(realm_id)


def do_update_profile_data(user: UserProfile, checked: list[tuple[CustomProfileField, str]]) -> None:
    """Store (field, value) pairs; an empty or null value clears the field."""
    with write_transaction():
        for field, value in checked:
            CustomProfileFieldValue.delete().where((CustomProfileFieldValue.user_profile == user)
                                                   & (CustomProfileFieldValue.field == field)).execute()
            if value:
                rendered = render_plain(value) if field.field_type in RENDERED_TYPES else None
                CustomProfileFieldValue.create(user_profile=user, field=field, value=value,
                                               rendered_value=rendered)
    for field, value in checked:
        entry = {"id": field.id, "value": value or None}
        if field.field_type in RENDERED_TYPES and value:
            entry["rendered_value"] = render_plain(value)
        notify_user_updated(user, custom_profile_field=entry)
