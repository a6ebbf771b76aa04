"""Which ways to sign in are on, read from the configuration with Zulip's setting names.

Zulip lists its backends by dotted class name in AUTHENTICATION_BACKENDS; operators copy those
lines from Zulip's documentation, so the same names are accepted here (and nothing else, so that
a typo fails at start instead of silently leaving a backend off).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from chat_appliance.config import ConfigError

EMAIL_BACKEND = "zproject.backends.EmailAuthBackend"
LDAP_BACKEND = "zproject.backends.ZulipLDAPAuthBackend"
OIDC_BACKEND = "zproject.backends.GenericOpenIdConnectBackend"
KNOWN_BACKENDS = (EMAIL_BACKEND, LDAP_BACKEND, OIDC_BACKEND)

# Zulip's LDAPSearch scopes, by the ldap module's constant names operators write.
LDAP_SCOPES = ("SCOPE_BASE", "SCOPE_ONELEVEL", "SCOPE_SUBTREE")

# The one OpenID Connect backend's URLs (Zulip: reverse("login-social", args=("oidc",)) and
# reverse("signup-social", ...)); clients read them from /server_settings.
OIDC_LOGIN_URL = "/accounts/login/social/oidc"
OIDC_SIGNUP_URL = "/accounts/register/social/oidc"
OIDC_COMPLETE_PATH = "/complete/oidc/"


class AuthConfigError(ConfigError):
    """An authentication setting that cannot be used; the message names the key."""


@dataclass(frozen=True)
class LdapSettings:
    """Where the directory is and how a sign-in name becomes an entry and an email."""

    server_uri: str
    bind_dn: str | None
    bind_password: str | None
    search_base: str
    search_scope: str
    search_filter: str
    attr_map: dict[str, str]
    append_domain: str | None
    email_attr: str | None
    username_attr: str | None

    @property
    def usernames_are_emails(self) -> bool:
        """Zulip's require_email_format_usernames: false once LDAP user names are not addresses."""
        return not (self.append_domain or self.email_attr)

    @property
    def manages_name(self) -> bool:
        """Whether the directory, not the person, decides their name (Zulip: name_changes_disabled)."""
        return bool({"full_name", "first_name", "last_name"} & set(self.attr_map))


@dataclass(frozen=True)
class OidcIdp:
    """One OpenID Connect provider of SOCIAL_AUTH_OIDC_ENABLED_IDPS."""

    name: str
    issuer: str
    client_id: str
    secret: str
    display_name: str
    display_icon: str | None
    auto_signup: bool


@dataclass(frozen=True)
class AuthSettings:
    email: bool
    ldap: LdapSettings | None
    oidc: OidcIdp | None
    oidc_full_name_validated: bool = False
    deactivate_non_matching: bool = False
    backends: tuple[str, ...] = field(default=())

    @property
    def password(self) -> bool:
        """A password form is shown (Zulip's password_auth_enabled: email or LDAP)."""
        return self.email or self.ldap is not None

    @property
    def require_email_format_usernames(self) -> bool:
        return self.ldap is None or self.ldap.usernames_are_emails

    def authentication_methods(self) -> dict[str, bool]:
        """/server_settings' authentication_methods, with Zulip's keys."""
        return {"password": self.password, "dev": False, "email": self.email, "ldap": self.ldap is not None,
                "remoteuser": False, "github": False, "azuread": False, "gitlab": False, "apple": False,
                "google": False, "saml": False, "openid connect": self.oidc is not None}

    def external_authentication_methods(self) -> list[dict[str, Any]]:
        """/server_settings' external_authentication_methods, as Zulip lists an OIDC provider."""
        if self.oidc is None:
            return []
        return [{"name": f"oidc:{self.oidc.name}", "display_name": self.oidc.display_name,
                 "display_icon": self.oidc.display_icon, "login_url": OIDC_LOGIN_URL,
                 "signup_url": OIDC_SIGNUP_URL}]


def auth_settings(config: Any) -> AuthSettings:
    """The AuthSettings of a configuration mapping; AuthConfigError when a key cannot be used."""
    backends = config.get("AUTHENTICATION_BACKENDS") or []
    if isinstance(backends, str) or not isinstance(backends, list) or not backends:
        raise AuthConfigError("AUTHENTICATION_BACKENDS must be a non-empty JSON list of backend names")
    unknown = [name for name in backends if name not in KNOWN_BACKENDS]
    if unknown:
        raise AuthConfigError(f"AUTHENTICATION_BACKENDS: unknown backend {unknown[0]!r} "
                              f"(known: {', '.join(KNOWN_BACKENDS)})")
    ldap = ldap_settings(config) if LDAP_BACKEND in backends else None
    oidc = oidc_idp(config) if OIDC_BACKEND in backends else None
    deactivate = config.get("LDAP_DEACTIVATE_NON_MATCHING_USERS")
    if deactivate is None:
        # Zulip: on by default only when the directory is the only way in, since otherwise people
        # missing from it may well be meant to sign in some other way.
        deactivate = list(backends) == [LDAP_BACKEND]
    return AuthSettings(email=EMAIL_BACKEND in backends, ldap=ldap, oidc=oidc,
                        oidc_full_name_validated=bool(config.get("SOCIAL_AUTH_OIDC_FULL_NAME_VALIDATED")),
                        deactivate_non_matching=bool(deactivate), backends=tuple(backends))


def ldap_settings(config: Any) -> LdapSettings:
    uri = config.get("AUTH_LDAP_SERVER_URI")
    if not uri or not isinstance(uri, str):
        raise AuthConfigError("AUTH_LDAP_SERVER_URI must be set when ZulipLDAPAuthBackend is on")
    search = config.get("AUTH_LDAP_USER_SEARCH")
    if (not isinstance(search, list) or len(search) != 3 or not all(isinstance(part, str) for part in search)
            or search[1] not in LDAP_SCOPES or "%(user)s" not in search[2]):
        raise AuthConfigError('AUTH_LDAP_USER_SEARCH must be [base DN, "SCOPE_SUBTREE", "(uid=%(user)s)"]: '
                              "three strings, a scope of " + ", ".join(LDAP_SCOPES) + " and a filter with %(user)s")
    attr_map = config.get("AUTH_LDAP_USER_ATTR_MAP") or {}
    if not isinstance(attr_map, dict) or not all(isinstance(v, str) for v in attr_map.values()):
        raise AuthConfigError('AUTH_LDAP_USER_ATTR_MAP must map fields to attribute names, e.g. {"full_name": "cn"}')
    append_domain, email_attr = config.get("LDAP_APPEND_DOMAIN"), config.get("LDAP_EMAIL_ATTR")
    if append_domain and email_attr:
        raise AuthConfigError("Set LDAP_APPEND_DOMAIN or LDAP_EMAIL_ATTR, not both")
    return LdapSettings(server_uri=uri, bind_dn=config.get("AUTH_LDAP_BIND_DN") or None,
                        bind_password=config.get("AUTH_LDAP_BIND_PASSWORD") or None, search_base=search[0],
                        search_scope=search[1], search_filter=search[2], attr_map=dict(attr_map),
                        append_domain=(append_domain or "").lower() or None, email_attr=email_attr or None,
                        username_attr=config.get("AUTH_LDAP_USERNAME_ATTR") or None)


def oidc_idp(config: Any) -> OidcIdp:
    idps = config.get("SOCIAL_AUTH_OIDC_ENABLED_IDPS") or {}
    if not isinstance(idps, dict) or len(idps) != 1:
        raise AuthConfigError("SOCIAL_AUTH_OIDC_ENABLED_IDPS must name exactly one provider when "
                              "GenericOpenIdConnectBackend is on (Zulip supports one)")
    (name, idp), = idps.items()
    if not isinstance(idp, dict):
        raise AuthConfigError(f"SOCIAL_AUTH_OIDC_ENABLED_IDPS[{name!r}] must be an object")
    for key in ("oidc_url", "client_id", "secret"):
        if not isinstance(idp.get(key), str) or not idp[key]:
            raise AuthConfigError(f"SOCIAL_AUTH_OIDC_ENABLED_IDPS[{name!r}] needs {key!r}")
    if not idp["oidc_url"].startswith(("https://", "http://")):
        raise AuthConfigError(f"SOCIAL_AUTH_OIDC_ENABLED_IDPS[{name!r}]: oidc_url must be an http(s) URL")
    return OidcIdp(name=name, issuer=idp["oidc_url"], client_id=idp["client_id"], secret=idp["secret"],
                   display_name=str(idp.get("display_name") or name), display_icon=idp.get("display_icon") or None,
                   auto_signup=bool(idp.get("auto_signup", False)))
