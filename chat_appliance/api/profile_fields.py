"""Custom profile fields: GET|POST|PATCH (reorder) /realm/profile_fields,
PATCH|DELETE /realm/profile_fields/{id}, and one's own values: PATCH|DELETE /users/me/profile_data."""

from flask import Blueprint

from chat_appliance.actions.profile_fields import (
    access_field,
    check_field_attributes,
    check_profile_data,
    do_create_field,
    do_delete_field,
    do_reorder_fields,
    do_update_field,
    do_update_profile_data,
    realm_fields,
)
from chat_appliance.lib.access import require_realm_admin
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.validators import check_any_json, check_bool, check_dict, check_int, list_of
from chat_appliance.lib.serializers import field_dict

bp = Blueprint("profile_fields", __name__)


@bp.get("/realm/profile_fields")
@endpoint()
def get_fields(user):
    """Every field of the organization, in display order."""
    return {"custom_fields": [field_dict(f) for f in realm_fields(user.realm_id)]}


@bp.post("/realm/profile_fields")
@endpoint(name=Param(default=""), hint=Param(default=""), field_type=Param(check_int),
          field_data=Param(check_any_json, default=None),
          display_in_profile_summary=Param(check_bool, default=False),
          required=Param(check_bool, default=False), editable_by_user=Param(check_bool, default=True))
def create_field(user, name, hint, field_type, field_data, display_in_profile_summary, required,
                 editable_by_user):
    """Administrators add fields."""
    require_realm_admin(user)
    field = do_create_field(user.realm_id, name=name, hint=hint, field_type=field_type, field_data=field_data,
                            display_in_profile_summary=display_in_profile_summary, required=required,
                            editable_by_user=editable_by_user)
    return {"id": field.id}


@bp.patch("/realm/profile_fields")
@endpoint(order=Param(list_of(check_int)))
def reorder_fields(user, order):
    """Administrators set the display order of every field."""
    require_realm_admin(user)
    do_reorder_fields(user.realm_id, order)


@bp.patch("/realm/profile_fields/<int:field_id>")
@endpoint(name=Param(default=None), hint=Param(default=None), field_data=Param(check_any_json, default=None),
          display_in_profile_summary=Param(check_bool, default=None),
          required=Param(check_bool, default=None), editable_by_user=Param(check_bool, default=None))
def update_field(user, field_id, name, hint, field_data, **flags):
    """Administrators change a field's label, hint, choices and flags."""
    require_realm_admin(user)
    field = access_field(user.realm_id, field_id)
    data_text = check_field_attributes(
        name if name is not None else field.name, hint if hint is not None else field.hint,
        field.field_type, field_data if field_data is not None else (field.field_data or None))
    changes = {key: value for key, value in flags.items() if value is not None}
    if name is not None:
        changes["name"] = name.strip()
    if hint is not None:
        changes["hint"] = hint
    if field_data is not None:
        changes["field_data"] = data_text
    do_update_field(field, changes)


@bp.delete("/realm/profile_fields/<int:field_id>")
@endpoint()
def delete_field(user, field_id):
    """Administrators delete a field with every value of it."""
    require_realm_admin(user)
    do_delete_field(access_field(user.realm_id, field_id))


def check_own_fields(user, checked):
    """People change only the fields marked editable by users; administrators change any."""
    for field, _value in checked:
        if not field.editable_by_user and not user.is_realm_admin:
            raise JsonableError("You are not allowed to change this field. Contact an administrator to update it.")


@bp.patch("/users/me/profile_data")
@endpoint(data=Param(list_of(check_dict)))
def update_own_profile_data(user, data):
    """Set one's own custom profile field values: data=[{id, value}] (an empty value clears)."""
    if user.is_bot:
        raise JsonableError("This endpoint does not accept bot requests.")
    checked = check_profile_data(user.realm_id, data)
    check_own_fields(user, checked)
    do_update_profile_data(user, checked)


@bp.delete("/users/me/profile_data")
@endpoint(data=Param(list_of(check_int)))
def clear_own_profile_data(user, data):
    """Clear one's own values of the fields data=[id, ...]."""
    if user.is_bot:
        raise JsonableError("This endpoint does not accept bot requests.")
    checked = [(access_field(user.realm_id, field_id), None) for field_id in data]
    check_own_fields(user, checked)
    do_update_profile_data(user, checked)
