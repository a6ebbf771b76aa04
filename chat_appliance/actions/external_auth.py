"""Accounts of people whom another system vouches for (an LDAP directory, an OpenID Connect
provider): found by email whatever its case, created as members on first sign-in, their
name kept as the directory has it, and deactivated by `sync-ldap-users` when it drops them.
"""

from __future__ import annotations

from dataclasses import dataclass

from chat_appliance.lib.errors import JsonableError
from chat_appliance.models import ROLE_ADMINISTRATOR, ROLE_MEMBER, Realm, UserProfile
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
                            force: bool = False) -> SyncSummary:
    """Bring the active human accounts in line with the directory: `people` maps each lower-cased
    email the directory has to its name. Accounts it lacks are deactivated when
    `deactivate_missing` says so, unless that would leave the organization without an active
    person or administrator (most likely a wrong search setting, as Zulip's sync assumes):
    then nothing is deactivated and JsonableError says why, unless `force`."""
    summary = SyncSummary()
    accounts = list(UserProfile.select().where((UserProfile.realm == realm) & UserProfile.is_active
                                               & ~UserProfile.is_bot).order_by(UserProfile.id))
    missing = [user for user in accounts if user.delivery_email.lower() not in people]
    summary.checked, summary.missing = len(accounts), len(missing)
    if deactivate_missing and missing and not force:
        staying = [user for user in accounts if user not in missing]
        if not staying or not any(user.role <= ROLE_ADMINISTRATOR for user in staying):
            who = "every active person" if not staying else "every administrator"
            raise JsonableError(f"The LDAP sync would deactivate {who} of the organization; nothing was changed. "
                                "Check AUTH_LDAP_USER_SEARCH, or use --force if that is meant.")
    for user in accounts:
        if user in missing:
            if deactivate_missing:
                do_deactivate_user(user)
                summary.deactivated += 1
            continue
        summary.renamed += do_sync_full_name(user, people[user.delivery_email.lower()])
    return summary
