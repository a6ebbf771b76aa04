"""Who hears about organization-wide changes: the audiences of realm-wide events."""

from __future__ import annotations

from chat_appliance.models import ROLE_ADMINISTRATOR, ROLE_GUEST, ROLE_OWNER, UserProfile


def active_user_ids(realm_id: int) -> list[int]:
    """Every active account of the organization (the audience of realm_user events)."""
    return [u.id for u in UserProfile.select(UserProfile.id).where((UserProfile.realm == realm_id) & UserProfile.is_active)]


def admin_ids(realm_id: int) -> list[int]:
    """Active owners and administrators (the audience of realm_export events)."""
    return [u.id for u in UserProfile.select(UserProfile.id).where(
        (UserProfile.realm == realm_id) & UserProfile.is_active & UserProfile.role.in_([100, 200]))]


def non_guest_user_ids(realm_id: int) -> list[int]:
    """Who hears of default channels: every active user but guests (Zulip's audience)."""
    return [u.id for u in UserProfile.select(UserProfile.id).where(
        (UserProfile.realm == realm_id) & UserProfile.is_active & (UserProfile.role != ROLE_GUEST))]


def invites_changed_audience(realm_id: int, referrer_id: int | None) -> list[int]:
    """Administrators and the invitation's referrer (Zulip feature level 209)."""
    ids = {u.id for u in UserProfile.select(UserProfile.id).where(
        (UserProfile.realm == realm_id) & UserProfile.is_active
        & UserProfile.role.in_([ROLE_OWNER, ROLE_ADMINISTRATOR]))}
    if referrer_id is not None:
        ids.add(referrer_id)
    return sorted(ids)
