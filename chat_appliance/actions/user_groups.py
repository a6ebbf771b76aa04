"""User groups: creation, names, direct members and subgroups, deactivation.

Membership is recursive through subgroups (lib/groups.py); every permission that names a
group (realm.can_mention_many_users_group_id, channel and group settings) uses it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.audiences import active_user_ids
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.groups import creator_group_value, is_user_in_setting, setting_names_group, subgroup_closure
from chat_appliance.lib.serializers import (
    GROUP_CREATOR,
    USER_GROUP_SETTINGS,
    user_group_dict,
    user_group_setting,
    user_group_setting_defaults,
)
from chat_appliance.lib import event_catalogue
from chat_appliance.models import GroupGroupMembership, Realm, Stream, UserGroup, UserGroupMembership, UserProfile

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict

MAX_GROUP_NAME_LENGTH = 100
# Group-valued settings of a user group and the system group each defaults to. Administrators
# may always manage any non-system group.
# Defaults of the group-valued settings live with the group shape, in lib/serializers.py.
GROUP_SETTINGS = USER_GROUP_SETTINGS


def direct_member_ids(group: UserGroup) -> list[int]:
    """Ids of the group's direct members."""
    return sorted(row.user_profile_id for row in
                  UserGroupMembership.select(UserGroupMembership.user_profile)
                  .where(UserGroupMembership.user_group == group))


def direct_subgroup_ids(group: UserGroup) -> list[int]:
    """Ids of the group's direct subgroups."""
    return sorted(row.subgroup_id for row in
                  GroupGroupMembership.select(GroupGroupMembership.subgroup)
                  .where(GroupGroupMembership.supergroup == group))


def group_dict(group: UserGroup) -> Any:
    """A user group as GET /user_groups and user_group add events return it."""
    return user_group_dict(group, members=direct_member_ids(group), direct_subgroup_ids=direct_subgroup_ids(group),
                           setting_defaults=user_group_setting_defaults(group.realm_id))


def access_group(realm_id: int, group_id: int) -> UserGroup:
    """A group of the organization, or BAD_REQUEST 'Invalid user group'."""
    group = UserGroup.get_or_none((UserGroup.id == group_id) & (UserGroup.realm == realm_id))
    if group is None:
        raise JsonableError("Invalid user group")
    return group


def user_has_group_permission(user: UserProfile, group: UserGroup, setting: str) -> bool:
    """Whether the user holds one of a group's permission settings (recursively)."""
    value = user_group_setting(group, setting, user_group_setting_defaults(group.realm_id))
    return is_user_in_setting(user, value)


def may_manage_group(user: UserProfile, group: UserGroup) -> bool:
    """Administrators manage every group; others need can_manage_group."""
    return user.is_realm_admin or user_has_group_permission(user, group, "can_manage_group")


def access_group_for_update(user: UserProfile, group_id: int) -> UserGroup:
    """A non-system group the user may manage (rename, settings, subgroups, deactivation)."""
    group = access_group(user.realm_id, group_id)
    if group.is_system_group or not may_manage_group(user, group):
        raise JsonableError("Insufficient permission")
    return group


def check_member_change_permission(user: UserProfile, group: UserGroup, add: list[int], delete: list[int]) -> None:
    """Zulip's rules: managers change any membership; otherwise adding others needs
    can_add_members_group, joining needs can_join_group or can_add_members_group, removing others
    needs can_remove_members_group, and leaving needs can_leave_group or can_remove_members_group."""
    if group.is_system_group:
        raise JsonableError("Insufficient permission")
    if may_manage_group(user, group):
        return
    others_added = [uid for uid in add if uid != user.id]
    others_removed = [uid for uid in delete if uid != user.id]
    allowed = (
        (not others_added or user_has_group_permission(user, group, "can_add_members_group"))
        and (user.id not in add or user_has_group_permission(user, group, "can_join_group")
             or user_has_group_permission(user, group, "can_add_members_group"))
        and (not others_removed or user_has_group_permission(user, group, "can_remove_members_group"))
        and (user.id not in delete or user_has_group_permission(user, group, "can_leave_group")
             or user_has_group_permission(user, group, "can_remove_members_group"))
    )
    if not allowed:
        raise JsonableError("Insufficient permission")


def check_group_name(realm_id: int, name: str, *, exclude_id: int | None = None) -> str:
    """Not empty, not too long, not a system name, unique."""
    name = name.strip()
    if not name:
        raise JsonableError("User group name cannot be empty.")
    if len(name) > MAX_GROUP_NAME_LENGTH:
        raise JsonableError(f"User group name cannot exceed {MAX_GROUP_NAME_LENGTH} characters.")
    if name.startswith("role:"):
        raise JsonableError("User group name cannot start with 'role:'.")
    clash = UserGroup.select().where((UserGroup.realm == realm_id) & (UserGroup.name == name))
    if exclude_id is not None:
        clash = clash.where(UserGroup.id != exclude_id)
    if clash.exists():
        raise JsonableError(f"User group '{name}' already exists.")
    return name


def check_member_ids(realm_id: int, user_ids: list[int]) -> list[int]:
    """Active users of the organization (bots allowed), else BAD_REQUEST."""
    users = {u.id for u in UserProfile.select(UserProfile.id).where(
        (UserProfile.realm == realm_id) & UserProfile.id.in_(list(user_ids)) & UserProfile.is_active
        & ~UserProfile.is_system_bot)}
    for user_id in user_ids:
        if user_id not in users:
            raise JsonableError(f"Invalid user ID: {user_id}")
    return list(dict.fromkeys(user_ids))


def check_subgroup_ids(realm_id: int, group_ids: list[int]) -> list[int]:
    """Existing groups of the organization, else BAD_REQUEST."""
    found = {g.id for g in UserGroup.select(UserGroup.id).where(
        (UserGroup.realm == realm_id) & UserGroup.id.in_(list(group_ids)))}
    for group_id in group_ids:
        if group_id not in found:
            raise JsonableError(f"Invalid user group ID: {group_id}")
    return list(dict.fromkeys(group_ids))


def check_no_cycle(group: UserGroup, subgroup_ids: list[int]) -> None:
    """Adding these subgroups must not make the group contain itself."""
    for subgroup_id in subgroup_ids:
        if group.id in subgroup_closure({subgroup_id}):
            raise JsonableError(f"User group {subgroup_id} is already a subgroup of one of the passed subgroups.")


# Clients that declared it list deactivated groups themselves (Zulip feature level 294); the others
# never see one: /register leaves them out, and events about them go only to the former.
INCLUDE_DEACTIVATED_GROUPS = "include_deactivated_groups"


def notify_group(realm_id: int, event: JSONDict, *, deactivated: bool = False, declared: bool | None = None) -> None:
    """Every user_group event goes to everyone in the organization (groups are public); one about
    a deactivated group only to clients that declared include_deactivated_groups. `declared`:
    only to the clients that declared it (True) or did not (False)."""
    if deactivated:
        declared = True
    if declared is not None:
        event = dict(event, _capability=(INCLUDE_DEACTIVATED_GROUPS, declared))
    publish(event, active_user_ids(realm_id))


def do_create_group(creator: UserProfile, name: str, description: str, member_ids: list[int], subgroup_ids: list[int],
                    settings: JSONDict) -> UserGroup:
    """A new group with its direct members and subgroups."""
    # Settings defaulting to the creator are stored as that anonymous group, so they keep
    # meaning the creator whatever happens to the account later.
    settings = dict(settings)
    for setting, default in GROUP_SETTINGS.items():
        if default == GROUP_CREATOR and setting not in settings:
            settings[setting] = creator_group_value(creator.id)
    with write_transaction():
        group = UserGroup.create(realm=creator.realm_id, name=name, description=description, creator=creator.id,
                                 settings=settings)
        for user_id in member_ids:
            UserGroupMembership.create(user_group=group, user_profile=user_id)
        for subgroup_id in subgroup_ids:
            GroupGroupMembership.create(supergroup=group, subgroup=subgroup_id)
    notify_group(creator.realm_id, event_catalogue.user_group_add(group_dict(group)))
    return group


def do_update_group(group: UserGroup, changes: JSONDict) -> None:
    """Apply validated name/description/settings changes."""
    with write_transaction():
        for key, value in changes.items():
            if key in GROUP_SETTINGS:
                group.settings = {**(group.settings or {}), key: value}
            else:
                setattr(group, key, value)
        group.save()
    notify_group(group.realm_id, event_catalogue.user_group_update(group.id, changes), deactivated=group.deactivated)


def do_update_members(group: UserGroup, add: list[int], delete: list[int]) -> None:
    """Add and remove direct members (already checked)."""
    with write_transaction():
        for user_id in add:
            UserGroupMembership.create(user_group=group, user_profile=user_id)
        if delete:
            UserGroupMembership.delete().where((UserGroupMembership.user_group == group)
                                               & UserGroupMembership.user_profile.in_(delete)).execute()
    if add:
        notify_group(group.realm_id, event_catalogue.user_group_add_members(group.id, add),
                     deactivated=group.deactivated)
    if delete:
        notify_group(group.realm_id, event_catalogue.user_group_remove_members(group.id, delete),
                     deactivated=group.deactivated)


def do_update_subgroups(group: UserGroup, add: list[int], delete: list[int]) -> None:
    """Add and remove direct subgroups (already checked)."""
    with write_transaction():
        for subgroup_id in add:
            GroupGroupMembership.create(supergroup=group, subgroup=subgroup_id)
        if delete:
            GroupGroupMembership.delete().where((GroupGroupMembership.supergroup == group)
                                                & GroupGroupMembership.subgroup.in_(delete)).execute()
    if add:
        notify_group(group.realm_id, event_catalogue.user_group_add_subgroups(group.id, add),
                     deactivated=group.deactivated)
    if delete:
        notify_group(group.realm_id, event_catalogue.user_group_remove_subgroups(group.id, delete),
                     deactivated=group.deactivated)


def group_in_use(group: UserGroup) -> bool:
    """Whether a setting of the organization, a channel or another active group names the group."""
    realm = Realm.get_by_id(group.realm_id)
    if realm.can_mention_many_users_group_id == group.id:
        return True
    for stream in Stream.select(Stream.settings).where(Stream.realm == group.realm_id):
        if any(setting_names_group(value, group.id) for value in (stream.settings or {}).values()):
            return True
    others = UserGroup.select(UserGroup.settings).where((UserGroup.realm == group.realm_id)
                                                        & (UserGroup.id != group.id) & ~UserGroup.deactivated)
    return any(setting_names_group(value, group.id) for other in others for value in (other.settings or {}).values())


def do_deactivate_group(group: UserGroup) -> None:
    """Deactivate a group no setting uses. Clients that list deactivated groups see it change
    (user_group update with deactivated true); the others see it go (user_group remove)."""
    if group_in_use(group):
        raise JsonableError("Cannot deactivate user group in use.")
    with write_transaction():
        UserGroup.update(deactivated=True).where(UserGroup.id == group.id).execute()
    notify_group(group.realm_id, event_catalogue.user_group_update(group.id, {"deactivated": True}),
                 deactivated=True)
    notify_group(group.realm_id, event_catalogue.user_group_remove(group.id), declared=False)


def realm_groups(realm_id: int, include_deactivated: bool) -> list[UserGroup]:
    """Every group of the organization (system groups included), oldest first."""
    query = UserGroup.select().where(UserGroup.realm == realm_id).order_by(UserGroup.id)
    if not include_deactivated:
        query = query.where(~UserGroup.deactivated)
    return list(query)
