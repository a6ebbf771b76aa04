"""User groups: create, list, update, members, subgroups, deactivate; recursive membership."""

from chat_appliance.lib.groups import is_user_in_group, system_group
from chat_appliance.models import Realm, UserProfile, database

from ..support.helpers import active_ids, err, ok


def create(org, name="Poets", members=None, subgroups=None, user=None):
    params = {"name": name, "description": "They write", "members": members or [org.hamlet.id]}
    if subgroups is not None:
        params["subgroups"] = subgroups
    return ok(org.client(user or org.admin).post("user_groups/create", **params))["group_id"]


def groups(org, **params):
    return {g["id"]: g for g in ok(org.client(org.hamlet).get("user_groups", **params))["user_groups"]}


def test_create_and_list(org, events):
    """Is a created group listed with members and subgroups, and announced to everyone?"""
    inner = create(org, "Inner", [org.othello.id])
    group_id = create(org, members=[org.hamlet.id], subgroups=[inner])
    group = groups(org)[group_id]
    assert group["members"] == [org.hamlet.id] and group["direct_subgroup_ids"] == [inner]
    assert group["name"] == "Poets" and not group["is_system_group"] and not group["deactivated"]
    event, ids = events.of("user_group", op="add")[-1]
    assert event["group"]["id"] == group_id and ids == active_ids(org)


def test_guest_cannot_create(org):
    """Is creating a group refused to a guest?"""
    err(org.client(org.guest).post("user_groups/create", name="X", description="", members=[]), 400, "BAD_REQUEST")


def test_create_rules(org):
    """Are a duplicate name, a role: name, an unknown member and an unknown subgroup refused?"""
    create(org)
    client = org.client(org.admin)
    err(client.post("user_groups/create", name="Poets", description="", members=[]), 400, "BAD_REQUEST")
    err(client.post("user_groups/create", name="role:x", description="", members=[]), 400, "BAD_REQUEST")
    err(client.post("user_groups/create", name="A", description="", members=[999]), 400, "BAD_REQUEST",
        "Invalid user ID: 999")
    err(client.post("user_groups/create", name="B", description="", members=[], subgroups=[999]), 400,
        "BAD_REQUEST", "Invalid user group ID: 999")


def test_update(org, events):
    """Does PATCH rename a group, announced to everyone, and refuse a member and a system group?"""
    group_id = create(org)
    ok(org.client(org.admin).patch(f"user_groups/{group_id}", name="Bards", description="Sing"))
    assert groups(org)[group_id]["name"] == "Bards"
    event, ids = events.one("user_group", op="update")
    assert event["data"] == {"name": "Bards", "description": "Sing"} and ids == active_ids(org)
    err(org.client(org.hamlet).patch(f"user_groups/{group_id}", name="X"), 400, "BAD_REQUEST",
        "Insufficient permission")
    with database.connection_context():
        admins = system_group(org.realm.id, "role:administrators").id
    err(org.client(org.admin).patch(f"user_groups/{admins}", name="X"), 400, "BAD_REQUEST", "Insufficient permission")
    err(org.client(org.admin).patch("user_groups/9999", name="X"), 400, "BAD_REQUEST", "Invalid user group")


def test_members(org, events):
    """Do add and delete change direct members, with add_members/remove_members to everyone?"""
    group_id = create(org)
    client = org.client(org.admin)
    ok(client.post(f"user_groups/{group_id}/members", add=[org.othello.id], delete=[org.hamlet.id]))
    assert ok(client.get(f"user_groups/{group_id}/members"))["members"] == [org.othello.id]
    event, ids = events.one("user_group", op="add_members")
    assert event["user_ids"] == [org.othello.id] and ids == active_ids(org)
    event, ids = events.one("user_group", op="remove_members")
    assert event["user_ids"] == [org.hamlet.id] and ids == active_ids(org)
    err(client.post(f"user_groups/{group_id}/members", add=[org.othello.id]), 400, "BAD_REQUEST")
    err(client.post(f"user_groups/{group_id}/members", delete=[org.cordelia.id]), 400, "BAD_REQUEST")


def test_recursive_members_and_subgroups(org):
    """Are members and subgroups recursive by default and direct on request?"""
    inner = create(org, "Inner", [org.othello.id])
    middle = create(org, "Middle", [org.cordelia.id], subgroups=[inner])
    outer = create(org, "Outer", [org.hamlet.id], subgroups=[middle])
    client = org.client(org.hamlet)
    assert ok(client.get(f"user_groups/{outer}/members"))["members"] == sorted(
        [org.hamlet.id, org.cordelia.id, org.othello.id])
    assert ok(client.get(f"user_groups/{outer}/members", direct_member_only=True))["members"] == [org.hamlet.id]
    assert ok(client.get(f"user_groups/{outer}/subgroups"))["subgroups"] == sorted([middle, inner])
    assert ok(client.get(f"user_groups/{outer}/subgroups", direct_subgroup_only=True))["subgroups"] == [middle]


def test_subgroups_add_remove(org, events):
    """Do add/delete change subgroups, with add_subgroups/remove_subgroups to everyone?"""
    a, b = create(org, "A"), create(org, "B")
    client = org.client(org.admin)
    ok(client.post(f"user_groups/{a}/subgroups", add=[b]))
    assert groups(org)[a]["direct_subgroup_ids"] == [b]
    ok(client.post(f"user_groups/{a}/subgroups", delete=[b]))
    assert groups(org)[a]["direct_subgroup_ids"] == []
    for op in ("add_subgroups", "remove_subgroups"):
        event, ids = events.one("user_group", op=op)
        assert event["direct_subgroup_ids"] == [b] and ids == active_ids(org)


def test_subgroup_refusals(org):
    """Are a cycle, a system group, a missing id, a duplicate and a non-subgroup refused?"""
    a = create(org, "A")
    b = create(org, "B", subgroups=[a])
    c = create(org, "C", subgroups=[b])
    client = org.client(org.admin)
    err(client.post(f"user_groups/{a}/subgroups", add=[c]), 400, "BAD_REQUEST",
        f"User group {c} is already a subgroup of one of the passed subgroups.")
    err(client.post(f"user_groups/{a}/subgroups", add=[a]), 400, "BAD_REQUEST")
    with database.connection_context():
        members = system_group(org.realm.id, "role:members").id
    err(client.post(f"user_groups/{members}/subgroups", add=[a]), 400, "BAD_REQUEST", "Insufficient permission")
    err(client.post(f"user_groups/{a}/subgroups", add=[999]), 400, "BAD_REQUEST", "Invalid user group ID: 999")
    err(client.post(f"user_groups/{b}/subgroups", add=[a]), 400, "BAD_REQUEST",
        f"User group {a} is already a subgroup of this group.")
    err(client.post(f"user_groups/{c}/subgroups", delete=[a]), 400, "BAD_REQUEST",
        f"User group {a} is not a subgroup of this group.")
    err(client.post("user_groups/999/subgroups", add=[a]), 400, "BAD_REQUEST", "Invalid user group")


def test_deactivate(org, events):
    """Does deactivation hide the group, announce remove to everyone, and still allow subgroup changes?"""
    a, b = create(org, "A"), create(org, "B")
    client = org.client(org.admin)
    ok(client.post(f"user_groups/{a}/deactivate"))
    assert a not in groups(org) and groups(org, include_deactivated_groups=True)[a]["deactivated"]
    _event, ids = events.one("user_group", op="remove", group_id=a)
    assert ids == active_ids(org)
    ok(client.post(f"user_groups/{a}/subgroups", add=[b]))
    err(client.post(f"user_groups/{a}/members", add=[org.othello.id]), 400, "BAD_REQUEST")


def test_cannot_deactivate_group_in_use(org):
    """Is deactivating a group that the organization's settings name refused?"""
    group_id = create(org)
    with database.connection_context():
        Realm.update(can_mention_many_users_group_id=group_id).where(Realm.id == org.realm.id).execute()
    err(org.client(org.admin).post(f"user_groups/{group_id}/deactivate"), 400, "BAD_REQUEST",
        "Cannot deactivate user group in use.")


def test_permission_group_is_recursive(org):
    """Does a permission naming a group include members of its subgroups?"""
    inner = create(org, "Inner", [org.othello.id])
    outer = create(org, "Outer", [org.hamlet.id], subgroups=[inner])
    with database.connection_context():
        othello = UserProfile.get_by_id(org.othello.id)
        assert is_user_in_group(othello, outer)
        assert not is_user_in_group(UserProfile.get_by_id(org.cordelia.id), outer)


def test_manager_group_may_update(org):
    """May a member of the group's can_manage_group update it?"""
    managers = create(org, "Managers", [org.cordelia.id])
    group_id = ok(org.client(org.admin).post("user_groups/create", name="Team", description="", members=[],
                                             can_manage_group=managers))["group_id"]
    ok(org.client(org.cordelia).patch(f"user_groups/{group_id}", description="Managed"))
    assert groups(org)[group_id]["description"] == "Managed"
