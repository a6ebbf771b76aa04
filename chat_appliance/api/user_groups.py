"""User groups: POST /user_groups/create, GET /user_groups, PATCH /user_groups/{id},
GET|POST /user_groups/{id}/members, GET|POST /user_groups/{id}/subgroups,
POST /user_groups/{id}/deactivate, GET /user_groups/{id}/members/{user_id}."""

from flask import Blueprint

from chat_appliance.actions.user_groups import (
    GROUP_SETTINGS,
    access_group,
    access_group_for_update,
    check_group_name,
    check_member_change_permission,
    check_member_ids,
    check_no_cycle,
    check_subgroup_ids,
    direct_member_ids,
    direct_subgroup_ids,
    do_create_group,
    do_deactivate_group,
    do_update_group,
    do_update_members,
    do_update_subgroups,
    group_dict,
    realm_groups,
)
from chat_appliance.lib.access import access_user_by_id
from chat_appliance.lib.errors import JsonableError, ParamError
from chat_appliance.lib.groups import is_user_in_group, recursive_member_ids, subgroup_closure
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_any_json, check_bool, check_int, list_of, string_max

# Every /register carries every group's description, so one member's must not weigh megabytes.
MAX_GROUP_DESCRIPTION_LENGTH = 1024

bp = Blueprint("user_groups", __name__)


def check_group_setting_value(var_name, value):
    """A group-setting value: a group id or an anonymous group {"direct_members": [...],
    "direct_subgroups": [...]}; on update also wrapped as {"new": value, "old": value}."""
    value = check_any_json(var_name, value)
    if isinstance(value, dict) and "new" in value:
        value = value["new"]
    if isinstance(value, dict):
        if set(value) != {"direct_members", "direct_subgroups"} or not all(
                isinstance(value[k], list) and all(isinstance(i, int) and not isinstance(i, bool) for i in value[k])
                for k in value):
            raise ParamError(f"{var_name} is not a valid group-setting value")
        return {"direct_members": sorted(set(value["direct_members"])),
                "direct_subgroups": sorted(set(value["direct_subgroups"]))}
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParamError(f"{var_name} is not a valid group-setting value")
    return value


SETTING_PARAMS = {name: Param(check_group_setting_value, default=None) for name in GROUP_SETTINGS}


def checked_settings(user, values):
    """The settings sent, each naming existing groups and users of the organization. A
    one-subgroup anonymous group is stored as that group's id, as Zulip does."""
    settings = {}
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, dict):
            check_member_ids(user.realm_id, value["direct_members"])
            check_subgroup_ids(user.realm_id, value["direct_subgroups"])
            if not value["direct_members"] and len(value["direct_subgroups"]) == 1:
                value = value["direct_subgroups"][0]
        else:
            access_group(user.realm_id, value)
        settings[name] = value
    return settings


@bp.post("/user_groups/create")
@endpoint(name=Param(), description=Param(string_max(MAX_GROUP_DESCRIPTION_LENGTH)), members=Param(list_of(check_int)),
          subgroups=Param(list_of(check_int), default=[]), **SETTING_PARAMS)
def create_group(user, name, description, members, subgroups, **settings):
    """Members (not guests) create groups."""
    if user.is_guest:
        raise JsonableError("Not allowed for guest users")
    name = check_group_name(user.realm_id, name)
    members = check_member_ids(user.realm_id, members)
    subgroups = check_subgroup_ids(user.realm_id, subgroups)
    group = do_create_group(user, name, description, members, subgroups, checked_settings(user, settings))
    return {"group_id": group.id}


@bp.get("/user_groups")
@endpoint(include_deactivated_groups=Param(check_bool, default=False))
def get_groups(user, include_deactivated_groups):
    """Every group of the organization, system groups included."""
    return {"user_groups": [group_dict(g) for g in realm_groups(user.realm_id, include_deactivated_groups)]}


@bp.patch("/user_groups/<int:group_id>")
@endpoint(name=Param(default=None), description=Param(string_max(MAX_GROUP_DESCRIPTION_LENGTH), default=None),
          **SETTING_PARAMS)
def update_group(user, group_id, name, description, **settings):
    """Managers rename and describe groups and change their settings."""
    group = access_group_for_update(user, group_id)
    changes = checked_settings(user, settings)
    if name is not None and name.strip() != group.name:
        changes["name"] = check_group_name(user.realm_id, name, exclude_id=group.id)
    if description is not None and description != group.description:
        changes["description"] = description
    if changes:
        do_update_group(group, changes)


@bp.post("/user_groups/<int:group_id>/members")
@endpoint(add=Param(list_of(check_int), default=[]), delete=Param(list_of(check_int), default=[]))
def update_members(user, group_id, add, delete):
    """Add and remove direct members as the group's permission settings allow (not of
    deactivated groups)."""
    group = access_group(user.realm_id, group_id)
    check_member_change_permission(user, group, add, delete)
    if group.deactivated:
        raise JsonableError("User group is deactivated.")
    current = set(direct_member_ids(group))
    add = check_member_ids(user.realm_id, add)
    for user_id in add:
        if user_id in current:
            raise JsonableError(f"User {user_id} is already a member of this group.")
    for user_id in delete:
        if user_id not in current:
            raise JsonableError(f"There is no member '{user_id}' in this user group")
    do_update_members(group, add, list(dict.fromkeys(delete)))


@bp.get("/user_groups/<int:group_id>/members")
@endpoint(direct_member_only=Param(check_bool, default=False))
def get_members(user, group_id, direct_member_only):
    """Members, recursive unless direct_member_only."""
    group = access_group(user.realm_id, group_id)
    members = direct_member_ids(group) if direct_member_only else sorted(recursive_member_ids(group.id))
    return {"members": members}


@bp.post("/user_groups/<int:group_id>/subgroups")
@endpoint(add=Param(list_of(check_int), default=[]), delete=Param(list_of(check_int), default=[]))
def update_subgroups(user, group_id, add, delete):
    """Managers add and remove subgroups; allowed on deactivated groups (Zulip feature level 391).
    A system group cannot gain or lose subgroups, nor can a cycle be made."""
    group = access_group_for_update(user, group_id)
    current = set(direct_subgroup_ids(group))
    add = check_subgroup_ids(user.realm_id, add)
    delete = check_subgroup_ids(user.realm_id, delete)
    for subgroup_id in add:
        if subgroup_id in current:
            raise JsonableError(f"User group {subgroup_id} is already a subgroup of this group.")
    for subgroup_id in delete:
        if subgroup_id not in current:
            raise JsonableError(f"User group {subgroup_id} is not a subgroup of this group.")
    check_no_cycle(group, add)
    do_update_subgroups(group, add, delete)


@bp.get("/user_groups/<int:group_id>/subgroups")
@endpoint(direct_subgroup_only=Param(check_bool, default=False))
def get_subgroups(user, group_id, direct_subgroup_only):
    """Subgroups, recursive unless direct_subgroup_only."""
    group = access_group(user.realm_id, group_id)
    if direct_subgroup_only:
        return {"subgroups": direct_subgroup_ids(group)}
    return {"subgroups": sorted(subgroup_closure({group.id}) - {group.id})}


@bp.post("/user_groups/<int:group_id>/deactivate")
@endpoint()
def deactivate_group(user, group_id):
    """Managers deactivate groups that no setting uses."""
    group = access_group_for_update(user, group_id)
    if group.deactivated:
        raise JsonableError("User group is already deactivated.")
    do_deactivate_group(group)


@bp.get("/user_groups/<int:group_id>/members/<int:user_id>")
@endpoint(direct_member_only=Param(check_bool, default=False))
def get_is_user_group_member(user, group_id, user_id, direct_member_only):
    """Whether a user is in a group (recursively unless direct_member_only); deactivated users are in none."""
    group = access_group(user.realm_id, group_id)
    target = access_user_by_id(user, user_id)
    if not target.is_active:
        return {"is_user_group_member": False}
    member = target.id in direct_member_ids(group) if direct_member_only else is_user_in_group(target, group.id)
    return {"is_user_group_member": member}
