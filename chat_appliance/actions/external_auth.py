"""Accounts of people whom another system vouches for (an LDAP directory, an OpenID Connect
provider): found by email whatever its case, created as members on first sign-in, their
name kept as the directory has it, and deactivated by `sync-ldap-users` when it drops them.
"""

from __future__ import annotations

from dataclasses import dataclass

from chat_appliance.lib.errors import JsonableError
from chat_appliance.models import ROLE_MEMBER, Realm, UserProfile
from chat_appliance.actions.users import check_full_name, do_change_full_name, do_create_user, do_deactivate_user


def account_for_email(realm: Realm, email: str) -> UserProfile | None:
    """The human account with this real address (or API email), whatever the case."""
    user = UserProfile.get_by_login_email(email)
    if user is None or user.realm_id != realm.id or user.is_bot:
        return None
    return user


def name_or_fallback(full_name: str | None, email: str) -> str:
    """The name the other system gave, if Zulip's rules take it, else the address's local part."""
    for candidate in (full_name, email.split("@", 1)[0]):
        if candidate:
            try:
                return check_full_name(candidate[:60])
            except JsonableError:
                continue
    return "New user"


def do_create_external_user(realm: Realm, email: str, full_name: str | None, password_method: str) -> UserProfile:
    """A new member without a password of their own: the other system signs them in."""
    return do_create_user(realm, email, None, name_or_fallback(full_name, email),  # type: ignore[arg-type]
                          role=ROLE_MEMBER, password_method=password_method)


def do_sync_full_name(user: UserProfile, full_name: str | None) -> bool:
    """Take the directory's name when it differs (and is a valid name); whether it changed."""
    if not full_name:
        return False
    try:
        name = check_full_name(full_name)
    except JsonableError:
        return False
    if name == user.full_name:
        return False
    do_change_full_name(user, name)
    return True


@dataclass
class SyncSummary:
    """What one `sync-ldap-users` run did."""

    checked: int = 0
    renamed: int = 0
    deactivated: int = 0
    missing: int = 0


def do_sync_directory_users(realm: Realm, people: dict[str, str | None], *, deactivate_missing: bool,
                            keep: frozenset[int] = frozenset()) -> SyncSummary:
    """Bring the active human accounts in line with the directory: `people` maps each lower-cased
    email the directory has to its name. Accounts it lacks are deactivated when
    `deactivate_missing` says so (the ids in `keep` never are: the organization's last owner)."""
    summary = SyncSummary()
    accounts = UserProfile.select().where((UserProfile.realm == realm) & UserProfile.is_active
                                          & ~UserProfile.is_bot).order_by(UserProfile.id)
    for user in accounts:
        summary.checked += 1
        email = user.delivery_email.lower()
        if email in people:
            summary.renamed += do_sync_full_name(user, people[email])
            continue
        summary.missing += 1
        if deactivate_missing and user.id not in keep:
            do_deactivate_user(user)
            summary.deactivated += 1
    return summary
