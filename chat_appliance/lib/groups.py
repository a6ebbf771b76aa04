"""User-group membership, recursive through subgroups; the role-based system groups."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chat_appliance.models import (
    ROLE_ADMINISTRATOR,
    ROLE_GUEST,
    ROLE_MEMBER,
    ROLE_MODERATOR,
    ROLE_OWNER,
    GroupGroupMembership,
    UserGroup,
    UserGroupMembership,
    UserProfile,
)
from chat_appliance.lib.snapshots import read_through, snapshot_versions

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict

# System groups, from the widest to the narrowest. Each contains the next one as a subgroup,
# and has as direct members the users whose role it names.
SYSTEM_GROUPS = [
    ("role:internet", "Everyone on the internet", None),
    ("role:everyone", "Everyone including guests", ROLE_GUEST),
    ("role:members", "Everyone except guests", None),
    ("role:fullmembers", "Members of this organization, not including new accounts and guests", ROLE_MEMBER),
    ("role:moderators", "Moderators of this organization, including administrators", ROLE_MODERATOR),
    ("role:administrators", "Administrators of this organization, including owners", ROLE_ADMINISTRATOR),
    ("role:owners", "Owners of this organization", ROLE_OWNER),
]
NOBODY_GROUP = ("role:nobody", "Nobody")

ROLE_GROUP_NAME = {role: name for name, _doc, role in SYSTEM_GROUPS if role is not None}


def system_group_ids(realm_id: int) -> dict[str, int]:
    """{name: id} of the organization's system groups, which the organization's group settings
    name. Kept while the configuration is unchanged (lib/snapshots.py); never change it in place."""
    _data, generation = snapshot_versions()
    return read_through("system_group_ids", realm_id, generation, lambda: dict(
        UserGroup.select(UserGroup.name, UserGroup.id)
        .where((UserGroup.realm == realm_id) & UserGroup.is_system_group).tuples()))


def system_group(realm: Any, name: str) -> UserGroup:
    """A system group by its name, e.g. 'role:administrators'."""
    return UserGroup.get((UserGroup.realm == realm) & (UserGroup.name == name) & UserGroup.is_system_group)


def subgroup_closure(group_ids: set[int]) -> set[int]:
    """The given groups and every group they contain, at any depth."""
    seen = set(group_ids)
    frontier = set(group_ids)
    while frontier:
        rows = (GroupGroupMembership.select(GroupGroupMembership.subgroup)
                .where(GroupGroupMembership.supergroup.in_(list(frontier))).tuples())
        frontier = {row[0] for row in rows} - seen
        seen |= frontier
    return seen


def is_user_in_group(user: UserProfile, group_id: int | None, at: int | None = None) -> bool:
    """Whether the user belongs to the group, recursively. Deactivated users belong to none.
    `at`: the configuration generation to keep the answer with (lib/snapshots.py), for a caller
    that read it before anything it read or wrote; None asks the database.

    One recursive query (standard SQL, SQLite and PostgreSQL alike): every send asks."""
    if not user.is_active or group_id is None:
        return False
    return read_through("in_group", (user.id, group_id), at, lambda: _member_of(user.id, group_id))


def _member_of(user_id: int, group_id: int) -> bool:
    database = UserGroup._meta.database
    p = database.param  # the driver's placeholder: ? on SQLite, %s on PostgreSQL
    cursor = database.execute_sql(
        f"WITH RECURSIVE sub(id) AS (SELECT CAST({p} AS INTEGER) UNION SELECT g.subgroup_id"
        " FROM group_group_membership g JOIN sub ON g.supergroup_id = sub.id)"
        f" SELECT 1 FROM user_group_membership WHERE user_profile_id = {p}"
        " AND user_group_id IN (SELECT id FROM sub) LIMIT 1",
        (group_id, user_id),
    )
    return cursor.fetchone() is not None


def recursive_member_ids(group_id: int) -> set[int]:
    """Ids of the active users in the group, recursively."""
    groups = subgroup_closure({group_id})
    rows = (
        UserGroupMembership.select(UserGroupMembership.user_profile)
        .join(UserProfile)
        .where(UserGroupMembership.user_group.in_(list(groups)) & UserProfile.is_active)
    )
    return {row.user_profile_id for row in rows}


def set_role_group_membership(user: UserProfile, role: int) -> None:
    """Move the user's direct system-group membership to the group of `role`."""
    system_ids = [
        g.id
        for g in UserGroup.select(UserGroup.id).where(
            (UserGroup.realm == user.realm_id) & UserGroup.is_system_group
        )
    ]
    UserGroupMembership.delete().where(
        (UserGroupMembership.user_profile == user) & UserGroupMembership.user_group.in_(system_ids)
    ).execute()
    UserGroupMembership.create(user_profile=user, user_group=system_group(user.realm_id, ROLE_GROUP_NAME[role]))


# A group-setting value is a group id, or an anonymous group: {"direct_members": [user ids],
# "direct_subgroups": [group ids]} (Zulip's group-setting values).


def creator_group_value(user_id: int | None) -> JSONDict:
    """The anonymous group holding just a group's creator (Zulip's default for managing it)."""
    return {"direct_members": [user_id] if user_id else [], "direct_subgroups": []}


def is_user_in_setting(user: UserProfile, value: Any) -> bool:
    """Whether the user is in a group-setting value (group id or anonymous group), recursively."""
    if isinstance(value, dict):
        if not user.is_active:
            return False
        return user.id in value.get("direct_members", ()) or any(
            is_user_in_group(user, group_id) for group_id in value.get("direct_subgroups", ()))
    return is_user_in_group(user, value)


def setting_names_group(value: Any, group_id: int) -> bool:
    """Whether a group-setting value refers to the group (directly or as an anonymous subgroup)."""
    if isinstance(value, dict):
        return group_id in value.get("direct_subgroups", ())
    return value == group_id
