"""Signing in against a real LDAP directory (Debian's slapd, tests/ldap_server.py): POST
/fetch_api_key and the web client's POST /accounts/login, by uid and by email."""

import pytest

from ..support.helpers import PASSWORD, err, ok, register
from ..support.ldap_server import LdapServer

DOMAIN = "zulip.example"


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    """One slapd for the module: King Hamlet (hamlet, already an account), Ada (ada, not yet
    one), Eve (eve, whose password is tested empty) and Cordelia
    (whose account gets deactivated)."""
    server = LdapServer(tmp_path_factory.mktemp("slapd"))
    server.add_person("hamlet", "ldap hamlet pw", "Hamlet of LDAP")
    server.add_person("ada", "ada's secret", "Ada Lovelace")
    server.add_person("eve", "eve pw", "Eve")
    server.add_person("cordelia", "cordelia pw", "Cordelia")
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def ldap_config(request, directory):
    """Every test's app has LDAP as its second backend: user names are uids, emails
    <uid>@zulip.example (LDAP_APPEND_DOMAIN); a test's own config marker adds to that."""
    own = request.node.get_closest_marker("config")
    settings = directory.config(**{"LDAP_APPEND_DOMAIN": DOMAIN, **(own.kwargs if own else {})})
    request.node.add_marker(pytest.mark.config(**settings), append=False)


def fetch(anon, username, password):
    return anon.post("fetch_api_key", username=username, password=password)


def test_server_settings_announce_ldap(org, anon):
    """Does /server_settings say LDAP is on, and that user names need not be emails?"""
    body = ok(anon.get("server_settings"))
    assert body["authentication_methods"]["ldap"] is True
    assert body["authentication_methods"]["password"] is True
    assert body["require_email_format_usernames"] is False
    assert body["external_authentication_methods"] == []


def test_uid_and_email_sign_in(org, anon):
    """Does the directory's password, given with the uid or with the email, give King Hamlet's
    existing account its key, while his old local password no longer counts for him?"""
    by_uid = ok(fetch(anon, "hamlet", "ldap hamlet pw"))
    assert (by_uid["user_id"], by_uid["api_key"]) == (org.hamlet.id, org.hamlet.api_key)
    by_email = ok(fetch(anon, "Hamlet@Zulip.Example", "ldap hamlet pw"))
    assert by_email["user_id"] == org.hamlet.id
    err(fetch(anon, "hamlet@zulip.example", PASSWORD), 401, "AUTHENTICATION_FAILED")


def test_refusals(org, anon):
    """Are a wrong password, an empty one, an unknown uid and a filter injection all refused with
    401 AUTHENTICATION_FAILED?"""
    for username, password in [("hamlet", "wrong"), ("eve", ""), ("nobody", "x"), ("*", "eve pw"),
                               ("e*", "eve pw"), ("eve)(uid=*", "eve pw"), ("*)(|(uid=*", "x")]:
        err(fetch(anon, username, password), 401, "AUTHENTICATION_FAILED")


def test_first_login_creates_a_member(org, anon):
    """Does Ada, in the directory but not in the organization, get a member account named as in
    LDAP on her first sign-in, and the same account the second time?"""
    first = ok(fetch(anon, "ada", "ada's secret"))
    assert first["email"] == "ada@zulip.example"
    client = org.client(type("U", (), {"email": first["email"], "api_key": first["api_key"]}))
    me = ok(client.get("users/me"))
    assert (me["full_name"], me["role"], me["is_bot"]) == ("Ada Lovelace", 400, False)
    again = ok(fetch(anon, "ada@zulip.example", "ada's secret"))
    assert again["user_id"] == first["user_id"]


def test_accounts_outside_the_directory_keep_their_password(org, anon):
    """Does Othello, whom the directory does not know, still sign in with his local password?"""
    assert ok(fetch(anon, "othello@zulip.example", PASSWORD))["user_id"] == org.othello.id


def test_deactivated_account_refused(org, anon, directory):
    """Is a deactivated account refused even with the directory's right password?"""
    owner = org.client(org.owner)
    ok(owner.delete(f"users/{org.cordelia.id}"))
    err(fetch(anon, "cordelia", "cordelia pw"), 401, "AUTHENTICATION_FAILED")


def test_deleted_entry_fails_at_next_login(org, anon, directory):
    """Is nothing cached: once the entry is deleted from LDAP, its next sign-in fails?"""
    directory.add_person("temp", "temp pw", "Temporary")
    ok(fetch(anon, "temp", "temp pw"))
    directory.delete_person("temp")
    err(fetch(anon, "temp", "temp pw"), 401, "AUTHENTICATION_FAILED")


def test_web_form_takes_the_uid(org, flask_client):
    """Does the web client's sign-in form accept the bare uid with the directory's password, and
    refuse a wrong one with the same 401?"""
    headers = {"X-Requested-With": "XMLHttpRequest"}
    signed = flask_client.post("/accounts/login", data={"username": "hamlet", "password": "ldap hamlet pw"},
                               headers=headers)
    assert signed.status_code == 200 and signed.get_json()["user_id"] == org.hamlet.id
    refused = flask_client.post("/accounts/login", data={"username": "hamlet", "password": "nope"}, headers=headers)
    assert refused.status_code == 401 and refused.get_json()["code"] == "AUTHENTICATION_FAILED"


@pytest.mark.config(AUTHENTICATION_BACKENDS=["zproject.backends.ZulipLDAPAuthBackend"])
def test_ldap_only_refuses_local_passwords(org, anon):
    """With LDAP the only backend, is a local password refused, and /server_settings without
    email auth?"""
    err(fetch(anon, "othello@zulip.example", PASSWORD), 401, "AUTHENTICATION_FAILED")
    methods = ok(anon.get("server_settings"))
    assert methods["email_auth_enabled"] is False and methods["authentication_methods"]["email"] is False


@pytest.mark.config(LDAP_APPEND_DOMAIN=None, LDAP_EMAIL_ATTR="mail")
def test_email_attribute_lookup(org, anon, directory):
    """With LDAP_EMAIL_ATTR, does the email held in `mail` sign in, as does the uid?"""
    directory.add_person("mira", "mira pw", "Mira Mail", mail="mira@elsewhere.example")
    by_mail = ok(fetch(anon, "mira@elsewhere.example", "mira pw"))
    assert by_mail["email"] == "mira@elsewhere.example"
    assert ok(fetch(anon, "mira", "mira pw"))["user_id"] == by_mail["user_id"]



def test_names_managed_by_ldap(org):
    """With the name in the attribute map, does /register say names are locked and which methods
    are on, does a member's name change leave the name as it is, and may an administrator still
    change theirs?"""
    hamlet, iago = org.client(org.hamlet), org.client(org.admin)
    state = register(hamlet, fetch_event_types=["realm"])
    assert state["server_name_changes_disabled"] is True and state["realm_name_changes_disabled"] is False
    assert state["realm_authentication_methods"] == {"Email": {"enabled": True, "available": True},
                                                     "LDAP": {"enabled": True, "available": True},
                                                     "OpenID Connect": {"enabled": False, "available": False}}
    ok(hamlet.patch("settings", full_name="Prince Hamlet"))
    assert ok(hamlet.get("users/me"))["full_name"] == "King Hamlet"
    ok(iago.patch("settings", full_name="Iago the Admin"))
    assert ok(iago.get("users/me"))["full_name"] == "Iago the Admin"


def test_two_matching_entries_refused(org, anon, directory):
    """Is a user name that two entries answer to refused, whichever password is given?"""
    directory.add_person("twin", "twin pw", "Twin One")
    with directory.admin() as connection:
        connection.add("cn=Twin Two,ou=People,dc=example,dc=com", ["inetOrgPerson"],
                       {"uid": "twin", "cn": "Twin Two", "sn": "Two", "userPassword": "twin pw"})
    err(fetch(anon, "twin", "twin pw"), 401, "AUTHENTICATION_FAILED")


def test_uid_case_follows_the_directory(org, anon, directory):
    """Does a first sign-in typed in capitals make the account with the directory's spelling?"""
    directory.add_person("grace", "grace pw", "Grace Hopper")
    assert ok(fetch(anon, "GRACE", "grace pw"))["email"] == "grace@zulip.example"
