"""User-group permission settings: anonymous-group values, defaults, and who may change membership
or mention a group (recursive membership through subgroups)."""

from ..support.helpers import err, ok


def create(client, name="actors", members=(), **settings):
    return ok(client.post("user_groups/create", name=name, description="d", members=list(members),
                          **settings))["group_id"]


def group(org, group_id):
    return next(g for g in ok(org.client(org.hamlet).get("user_groups"))["user_groups"] if g["id"] == group_id)


def test_creator_manages_and_adds_by_default(org):
    """Do can_manage_group and can_add_members_group default to an anonymous group of the creator,
    so the creator (not another member) may add people?"""
    group_id = create(org.client(org.hamlet), members=[org.hamlet.id])
    data = group(org, group_id)
    creator_only = {"direct_members": [org.hamlet.id], "direct_subgroups": []}
    assert data["can_manage_group"] == creator_only and data["can_add_members_group"] == creator_only
    ok(org.client(org.hamlet).post(f"user_groups/{group_id}/members", add=[org.othello.id]))
    err(org.client(org.othello).post(f"user_groups/{group_id}/members", add=[org.cordelia.id]), 400,
        "BAD_REQUEST", "Insufficient permission")
    # Administrators manage every group.
    ok(org.client(org.admin).post(f"user_groups/{group_id}/members", add=[org.cordelia.id]))


def test_join_needs_can_join_group(org):
    """May a user add themselves only when can_join_group includes them?"""
    group_id = create(org.client(org.hamlet))
    err(org.client(org.othello).post(f"user_groups/{group_id}/members", add=[org.othello.id]), 400, "BAD_REQUEST")
    members_group = next(g["id"] for g in ok(org.client(org.hamlet).get("user_groups"))["user_groups"]
                         if g["name"] == "role:members")
    ok(org.client(org.hamlet).patch(f"user_groups/{group_id}", can_join_group={"new": members_group}))
    ok(org.client(org.othello).post(f"user_groups/{group_id}/members", add=[org.othello.id]))
    # Joining is not adding others.
    err(org.client(org.othello).post(f"user_groups/{group_id}/members", add=[org.cordelia.id]), 400, "BAD_REQUEST")


def test_leave_follows_can_leave_group(org):
    """May members leave by default (everyone), and not once can_leave_group is nobody?"""
    group_id = create(org.client(org.hamlet), members=[org.othello.id, org.cordelia.id])
    ok(org.client(org.othello).post(f"user_groups/{group_id}/members", delete=[org.othello.id]))
    nobody = next(g["id"] for g in ok(org.client(org.hamlet).get("user_groups"))["user_groups"]
                  if g["name"] == "role:nobody")
    ok(org.client(org.hamlet).patch(f"user_groups/{group_id}", can_leave_group=nobody))
    err(org.client(org.cordelia).post(f"user_groups/{group_id}/members", delete=[org.cordelia.id]), 400,
        "BAD_REQUEST")
    # Removing others needs can_remove_members_group, or managing the group.
    err(org.client(org.othello).post(f"user_groups/{group_id}/members", delete=[org.cordelia.id]), 400,
        "BAD_REQUEST")


def test_anonymous_setting_with_recursive_subgroup(org):
    """Does an anonymous can_remove_members_group holding a subgroup grant the permission to that
    subgroup's members, recursively?"""
    inner = create(org.client(org.admin), name="inner", members=[org.othello.id])
    outer = create(org.client(org.admin), name="outer", subgroups=[inner])
    group_id = create(org.client(org.hamlet), members=[org.cordelia.id],
                      can_remove_members_group={"direct_members": [], "direct_subgroups": [outer, inner]})
    assert group(org, group_id)["can_remove_members_group"] == {"direct_members": [],
                                                                "direct_subgroups": sorted([outer, inner])}
    ok(org.client(org.othello).post(f"user_groups/{group_id}/members", delete=[org.cordelia.id]))


def test_one_subgroup_anonymous_value_is_stored_as_the_group(org):
    """Is {"direct_members": [], "direct_subgroups": [id]} stored as plain id, as Zulip does?"""
    inner = create(org.client(org.admin), name="inner")
    group_id = create(org.client(org.hamlet), can_join_group={"direct_members": [], "direct_subgroups": [inner]})
    assert group(org, group_id)["can_join_group"] == inner


def test_bad_setting_values(org):
    """Are malformed values, unknown users and unknown groups in settings refused?"""
    client = org.client(org.hamlet)
    err(client.post("user_groups/create", name="x", description="d", members=[],
                    can_join_group={"direct_members": [1]}), 400, "BAD_REQUEST")
    err(client.post("user_groups/create", name="x", description="d", members=[],
                    can_join_group={"direct_members": [99999], "direct_subgroups": []}), 400, "BAD_REQUEST")
    err(client.post("user_groups/create", name="x", description="d", members=[], can_join_group=99999), 400,
        "BAD_REQUEST")


def test_system_group_membership_cannot_change(org):
    """Can anyone, even an administrator, edit a system group's members? (No: roles decide them.)"""
    members_group = next(g["id"] for g in ok(org.client(org.hamlet).get("user_groups"))["user_groups"]
                         if g["name"] == "role:members")
    err(org.client(org.owner).post(f"user_groups/{members_group}/members", add=[org.guest.id]), 400, "BAD_REQUEST")


def test_group_mention_needs_can_mention_group(org):
    """Is a non-silent mention of a group refused to users outside can_mention_group, while a
    silent mention is allowed?"""
    admins = next(g["id"] for g in ok(org.client(org.hamlet).get("user_groups"))["user_groups"]
                  if g["name"] == "role:administrators")
    create(org.client(org.admin), name="crew", members=[org.othello.id], can_mention_group=admins)
    send = lambda user, text: org.client(user).post("messages", type="stream", to="Denmark", topic="t",  # noqa: E731
                                                    content=text)
    err(send(org.hamlet, "@*crew* hi"), 400, "BAD_REQUEST", "You are not allowed to mention user group 'crew'.")
    ok(send(org.hamlet, "@_*crew* hi"))
    ok(send(org.admin, "@*crew* hi"))
