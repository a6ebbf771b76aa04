"""Custom profile fields: values checked by field type, and the display order."""

import pytest

from ..support.helpers import err, ok


def make_field(org, field_type, name, field_data=None):
    params = {"name": name, "hint": "", "field_type": field_type}
    if field_data is not None:
        params["field_data"] = field_data
    return ok(org.client(org.admin).post("realm/profile_fields", **params))["id"]


def set_value(org, field_id, value):
    return org.client(org.admin).patch(f"users/{org.hamlet.id}", profile_data=[{"id": field_id, "value": value}])


def stored(org, field_id):
    user = ok(org.client(org.othello).get(f"users/{org.hamlet.id}", include_custom_profile_fields=True))["user"]
    return user["profile_data"].get(str(field_id), {}).get("value")


@pytest.mark.parametrize("field_type, good, bad, message", [
    (1, "Short", "x" * 51, "Phone is too long (limit: 50 characters)"),
    (4, "1990-12-31", "31/12/1990", "Phone is not a date"),
    (5, "https://example.com/me", "javascript:alert(1)", "Phone is not a URL"),
])
def test_values_checked_by_type(org, field_type, good, bad, message):
    """Are text length, dates and URLs checked by field type, and valid values stored?"""
    field_id = make_field(org, field_type, "Phone")
    ok(set_value(org, field_id, good))
    assert stored(org, field_id) == good
    err(set_value(org, field_id, bad), 400, "BAD_REQUEST", message)
    assert stored(org, field_id) == good


def test_select_value_must_be_a_choice(org):
    """Is a select field's value limited to its choices?"""
    field_id = make_field(org, 3, "Team", {"a": {"text": "Alpha", "order": "1"}, "b": {"text": "Beta", "order": "2"}})
    ok(set_value(org, field_id, "b"))
    err(set_value(org, field_id, "z"), 400, "BAD_REQUEST", "'z' is not a valid choice for 'Team'.")


def test_user_field_takes_existing_user_ids(org):
    """Does a user field take a list of existing user ids and refuse unknown ones?"""
    field_id = make_field(org, 6, "Mentor")
    ok(set_value(org, field_id, [org.othello.id]))
    assert stored(org, field_id) == f"[{org.othello.id}]"
    err(set_value(org, field_id, [99999]), 400, "BAD_REQUEST", "Invalid user ID: 99999")
    err(set_value(org, field_id, "not a list"), 400, "BAD_REQUEST")


def test_empty_value_clears(org):
    """Does an empty value clear the field?"""
    field_id = make_field(org, 1, "Phone")
    ok(set_value(org, field_id, "555"))
    ok(set_value(org, field_id, ""))
    assert stored(org, field_id) is None


def test_reorder_fields(org):
    """Does PATCH /realm/profile_fields reorder fields, refusing an order that is not a permutation,
    and only for administrators?"""
    first, second = make_field(org, 1, "First"), make_field(org, 1, "Second")
    ok(org.client(org.admin).patch("realm/profile_fields", order=[second, first]))
    fields = ok(org.client(org.hamlet).get("realm/profile_fields"))["custom_fields"]
    assert [f["id"] for f in fields] == [second, first]
    err(org.client(org.admin).patch("realm/profile_fields", order=[first]), 400, "BAD_REQUEST",
        "Invalid order mapping.")
    err(org.client(org.hamlet).patch("realm/profile_fields", order=[first, second]), 400, "UNAUTHORIZED_PRINCIPAL")
