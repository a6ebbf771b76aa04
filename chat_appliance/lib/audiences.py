"""Who hears about organization-wide changes: the audiences of realm-wide events."""

from ..models import UserProfile


def active_user_ids(realm_id):
    """Every active account of the organization (the audience of realm_user events)."""
    return [u.id for u in UserProfile.select(UserProfile.id).where((UserProfile.realm == realm_id) & UserProfile.is_active)]


def admin_ids(realm_id):
    """Active owners and administrators (the audience of realm_export events)."""
    return [u.id for u in UserProfile.select(UserProfile.id).where(
        (UserProfile.realm == realm_id) & UserProfile.is_active & UserProfile.role.in_([100, 200]))]
