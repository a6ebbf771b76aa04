"""PATCH and DELETE /users/me/profile_data: people fill in and clear their own custom profile
fields (those an administrator left editable by users)."""

from ..support.helpers import err, ok


def make_field(org, name="Team", editable=True):
    return ok(org.client(org.admin).post("realm/profile_fields", name=name, field_type=1,
                                         editable_by_user=editable))["id"]


def profile_value(org, user, field_id):
    person = ok(org.client(org.othello).get(f"users/{user.id}", include_custom_profile_fields=True))["user"]
    return person["profile_data"].get(str(field_id), {}).get("value")


def test_member_sets_and_clears_own_field(org, events):
    """Does a member's PATCH store the value, seen by others and announced in a realm_user event,
    and does DELETE clear it?"""
    field_id = make_field(org)
    ok(org.client(org.hamlet).patch("users/me/profile_data", data=[{"id": field_id, "value": "Blue team"}]))
    assert profile_value(org, org.hamlet, field_id) == "Blue team"
    event, _ids = events.one("realm_user", op="update")
    assert event["person"]["user_id"] == org.hamlet.id
    assert event["person"]["custom_profile_field"] == {"id": field_id, "value": "Blue team",
                                                       "rendered_value": "<p>Blue team</p>"}
    ok(org.client(org.hamlet).delete("users/me/profile_data", data=[field_id]))
    assert profile_value(org, org.hamlet, field_id) is None


def test_refusals_change_nothing(org):
    """Are a field not editable by users, an unknown field and a malformed list refused for a
    member, leaving the values as they were, while an administrator may set a locked field?"""
    open_id, locked_id = make_field(org, "Team"), make_field(org, "Employee number", editable=False)
    ok(org.client(org.hamlet).patch("users/me/profile_data", data=[{"id": open_id, "value": "Red"}]))
    err(org.client(org.hamlet).patch("users/me/profile_data",
                                     data=[{"id": open_id, "value": "Green"}, {"id": locked_id, "value": "7"}]),
        400, "BAD_REQUEST", "You are not allowed to change this field. Contact an administrator to update it.")
    err(org.client(org.hamlet).delete("users/me/profile_data", data=[locked_id]), 400, "BAD_REQUEST",
        "You are not allowed to change this field. Contact an administrator to update it.")
    err(org.client(org.hamlet).patch("users/me/profile_data", data=[{"id": 999, "value": "x"}]), 400,
        "BAD_REQUEST", "Field id 999 not found.")
    err(org.client(org.hamlet).patch("users/me/profile_data", data="not json"), 400, "BAD_REQUEST")
    assert profile_value(org, org.hamlet, open_id) == "Red"
    assert profile_value(org, org.hamlet, locked_id) is None
    ok(org.client(org.admin).patch("users/me/profile_data", data=[{"id": locked_id, "value": "42"}]))
    assert profile_value(org, org.admin, locked_id) == "42"
