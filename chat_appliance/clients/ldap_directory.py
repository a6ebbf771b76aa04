"""The LDAP directory: find a person's entry, check their password by binding as it, and list
everyone for `chat-appliance sync-ldap-users`.

ldap3 (pure Python, maintained, no C library to build) speaks the protocol. Nothing is cached:
every sign-in searches and binds again, so an entry deleted or a password changed in the
directory counts at the next sign-in.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import ldap3
from ldap3.core.exceptions import LDAPException, LDAPSizeLimitExceededResult
from ldap3.utils.conv import escape_filter_chars

from chat_appliance.lib.auth_backends import LdapSettings

log = logging.getLogger(__name__)

SCOPES = {"SCOPE_BASE": ldap3.BASE, "SCOPE_ONELEVEL": ldap3.LEVEL, "SCOPE_SUBTREE": ldap3.SUBTREE}
TIMEOUT_SECONDS = 10


class DirectoryUnavailable(Exception):
    """The directory could not be asked (down, refused the service bind)."""


@dataclass(frozen=True)
class LdapPerson:
    """What the server takes from one entry: its DN, the email it signs in as, and its name."""

    dn: str
    email: str | None
    full_name: str | None
    username: str | None


def connect(settings: LdapSettings, user: str | None = None, password: str | None = None) -> ldap3.Connection:
    """A bound connection (as `user`, else the service DN, else anonymous); raises LDAPException."""
    server = ldap3.Server(settings.server_uri, connect_timeout=TIMEOUT_SECONDS, get_info=ldap3.NONE)
    if user is None:
        user, password = settings.bind_dn, settings.bind_password
    connection = ldap3.Connection(server, user=user, password=password, receive_timeout=TIMEOUT_SECONDS,
                                  raise_exceptions=True, read_only=True)
    connection.bind()
    return connection


def attribute(entry: dict, name: str | None) -> str | None:
    """The first value of an attribute of a search result, as a string, or None."""
    if not name:
        return None
    values = entry["attributes"].get(name)
    if isinstance(values, list):
        values = values[0] if values else None
    if isinstance(values, bytes):
        values = values.decode("utf-8", "replace")
    return str(values).strip() if values not in (None, "") else None


def wanted_attributes(settings: LdapSettings) -> list[str]:
    """The attributes a person is made of: the mapped ones, the email's, the user name's."""
    names = set(settings.attr_map.values())
    names.update(name for name in (settings.email_attr, settings.username_attr,
                                   filter_attribute(settings.search_filter)) if name)
    return sorted(names) or [ldap3.NO_ATTRIBUTES]


def person_of(settings: LdapSettings, entry: dict, username: str | None) -> LdapPerson:
    """An entry as a person: the email by LDAP_EMAIL_ATTR or LDAP_APPEND_DOMAIN (else the user
    name is the email), the name by the attribute map (full_name, or first_name + last_name)."""
    name_map = settings.attr_map
    username = attribute(entry, settings.username_attr) or username
    if settings.email_attr:
        email = attribute(entry, settings.email_attr)
    elif settings.append_domain:
        email = f"{username}@{settings.append_domain}" if username else None
    else:
        email = username
    full_name = attribute(entry, name_map.get("full_name"))
    if full_name is None and ("first_name" in name_map or "last_name" in name_map):
        parts = [attribute(entry, name_map.get("first_name")), attribute(entry, name_map.get("last_name"))]
        full_name = " ".join(part for part in parts if part) or None
    return LdapPerson(dn=entry["dn"], email=email, full_name=full_name, username=username)


def search_filter(settings: LdapSettings, login: str) -> tuple[str, str | None]:
    """(filter, user name) for a sign-in name: the uid through AUTH_LDAP_USER_SEARCH's filter, an
    email of LDAP_APPEND_DOMAIN through it without its domain, any other email through
    LDAP_EMAIL_ATTR. Values are escaped (RFC 4515): `*)(uid=*` is a name, not a filter."""
    login = login.strip()
    if "@" in login and settings.append_domain:
        local, _, domain = login.rpartition("@")
        if domain.lower() == settings.append_domain:
            login = local
    if "@" in login and settings.email_attr:
        escaped = escape_filter_chars(login)
        return f"({settings.email_attr}={escaped})", None
    return settings.search_filter % {"user": escape_filter_chars(login)}, login


def find_person(settings: LdapSettings, login: str) -> LdapPerson | None:
    """The one entry a sign-in name matches, searched as the service DN; None when no entry or
    several match. Raises DirectoryUnavailable when the directory cannot be asked."""
    query, username = search_filter(settings, login)
    try:
        with connect(settings) as connection:
            connection.search(settings.search_base, query, search_scope=SCOPES[settings.search_scope],
                              attributes=wanted_attributes(settings), size_limit=2)
            entries = [entry for entry in connection.response if entry.get("type") == "searchResEntry"]
    except LDAPSizeLimitExceededResult:  # more than one entry: no one in particular
        return None
    except LDAPException as error:
        log.warning("LDAP search for %r failed: %s", login, error)
        raise DirectoryUnavailable(str(error)) from None
    if len(entries) != 1:
        return None
    # The directory's spelling of the user name (HAMLET typed, hamlet stored) makes the email.
    return person_of(settings, entries[0], first_username(settings, entries[0]) or username)


def check_password(settings: LdapSettings, person: LdapPerson, password: str) -> bool:
    """Whether the directory accepts `password` for the entry (a bind as its DN). An empty
    password is refused before asking: to LDAP it is an unauthenticated bind, which succeeds."""
    if not password:
        return False
    try:
        connect(settings, person.dn, password).unbind()
    except LDAPException:
        return False
    return True


def all_people(settings: LdapSettings) -> list[LdapPerson]:
    """Every entry the user search can reach (its filter with a wildcard user), for the sync."""
    query = settings.search_filter % {"user": "*"}
    try:
        with connect(settings) as connection:
            entries = connection.extend.standard.paged_search(
                settings.search_base, query, search_scope=SCOPES[settings.search_scope],
                attributes=wanted_attributes(settings),
                paged_size=500, generator=False)
    except LDAPException as error:
        raise DirectoryUnavailable(str(error)) from None
    people = []
    for entry in entries:
        if entry.get("type") != "searchResEntry":
            continue
        username = first_username(settings, entry)
        people.append(person_of(settings, entry, username))
    return people


def filter_attribute(search_filter: str) -> str | None:
    """`uid` for "(uid=%(user)s)" (the attribute the user name is compared with), else None."""
    before = search_filter.split("=%(user)s", 1)[0]
    if before == search_filter:
        return None
    name = before.rsplit("(", 1)[-1]
    return name or None


def first_username(settings: LdapSettings, entry: dict) -> str | None:
    return attribute(entry, settings.username_attr) or attribute(entry, filter_attribute(settings.search_filter))
