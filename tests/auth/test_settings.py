"""The sign-in settings, read with Zulip's names (lib/auth_backends.py): what is accepted, what
stops the start, and the defaults Zulip has."""

import json
import subprocess
import sys

import pytest

from chat_appliance.config import ConfigError
from chat_appliance.lib.auth_backends import auth_settings

EMAIL = "zproject.backends.EmailAuthBackend"
LDAP = "zproject.backends.ZulipLDAPAuthBackend"
OIDC = "zproject.backends.GenericOpenIdConnectBackend"
LDAP_KEYS = {"AUTH_LDAP_SERVER_URI": "ldap://127.0.0.1:389",
             "AUTH_LDAP_USER_SEARCH": ["ou=People,dc=x", "SCOPE_SUBTREE", "(uid=%(user)s)"],
             "AUTH_LDAP_USER_ATTR_MAP": {"full_name": "cn"}}
IDP = {"SOCIAL_AUTH_OIDC_ENABLED_IDPS": {"kc": {"oidc_url": "http://127.0.0.1:8080/realms/x", "client_id": "c",
                                                "secret": "s", "display_name": "Keycloak"}}}


def test_default_is_email_only():
    """Is the default today's behaviour: email and password, nothing else?"""
    settings = auth_settings({"AUTHENTICATION_BACKENDS": [EMAIL]})
    assert (settings.email, settings.ldap, settings.oidc) == (True, None, None)
    assert settings.require_email_format_usernames is True


@pytest.mark.parametrize("config, message", [
    ({"AUTHENTICATION_BACKENDS": ["zproject.backends.GitHubAuthBackend"]}, "unknown backend"),
    ({"AUTHENTICATION_BACKENDS": EMAIL}, "JSON list"),
    ({"AUTHENTICATION_BACKENDS": [LDAP]}, "AUTH_LDAP_SERVER_URI"),
    ({"AUTHENTICATION_BACKENDS": [LDAP], **LDAP_KEYS, "AUTH_LDAP_USER_SEARCH": ["ou=x", "SUBTREE", "(uid=%(user)s)"]},
     "AUTH_LDAP_USER_SEARCH"),
    ({"AUTHENTICATION_BACKENDS": [LDAP], **LDAP_KEYS, "AUTH_LDAP_USER_SEARCH": ["ou=x", "SCOPE_SUBTREE", "(uid=bob)"]},
     "%(user)s"),
    ({"AUTHENTICATION_BACKENDS": [LDAP], **LDAP_KEYS, "LDAP_APPEND_DOMAIN": "x.com", "LDAP_EMAIL_ATTR": "mail"},
     "not both"),
    ({"AUTHENTICATION_BACKENDS": [OIDC]}, "exactly one provider"),
    ({"AUTHENTICATION_BACKENDS": [OIDC], "SOCIAL_AUTH_OIDC_ENABLED_IDPS": {"kc": {"oidc_url": "http://x"}}},
     "client_id"),
])
def test_unusable_settings_stop_the_start(config, message):
    """Is each unusable setting refused with a ConfigError that names it?"""
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        auth_settings(config)


def test_deactivation_default_follows_zulip():
    """Does LDAP_DEACTIVATE_NON_MATCHING_USERS=null mean on only when LDAP is the only backend,
    and does an explicit value win?"""
    assert auth_settings({"AUTHENTICATION_BACKENDS": [LDAP], **LDAP_KEYS}).deactivate_non_matching is True
    assert auth_settings({"AUTHENTICATION_BACKENDS": [EMAIL, LDAP], **LDAP_KEYS}).deactivate_non_matching is False
    assert auth_settings({"AUTHENTICATION_BACKENDS": [LDAP], **LDAP_KEYS,
                          "LDAP_DEACTIVATE_NON_MATCHING_USERS": False}).deactivate_non_matching is False


def test_plain_http_issuer_and_usernames():
    """Is a plain-HTTP loopback issuer accepted, and do LDAP user names that are not emails turn
    require_email_format_usernames off?"""
    settings = auth_settings({"AUTHENTICATION_BACKENDS": [EMAIL, LDAP, OIDC], **LDAP_KEYS, **IDP,
                              "LDAP_APPEND_DOMAIN": "Example.COM"})
    assert settings.oidc.issuer == "http://127.0.0.1:8080/realms/x" and settings.oidc.auto_signup is False
    assert settings.ldap.append_domain == "example.com" and settings.require_email_format_usernames is False
    assert settings.authentication_methods()["openid connect"] is True


def test_serve_refuses_a_wrong_backend(tmp_path):
    """Does `chat-appliance serve` stop at start with the setting's name, not a traceback?"""
    instance = tmp_path / "instance"
    instance.mkdir()
    (instance / "config.json").write_text(json.dumps({"AUTHENTICATION_BACKENDS": ["zproject.backends.Nope"]}))
    done = subprocess.run([sys.executable, "-m", "chat_appliance", "serve", "--instance", str(instance), "--create",
                           "--port", "1"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "AUTHENTICATION_BACKENDS: unknown backend" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
