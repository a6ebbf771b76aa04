"""End to end in Chromium: signing in to a real `serve` through a real OpenID Connect provider
(oidc-provider, tests/oidc_provider.py) and a real LDAP directory (slapd, tests/ldap_server.py),
from the sign-in page a person sees. Sign-up refusal without auto_signup and the sync are
covered through HTTP (tests/test_auth_oidc.py, tests/test_e2e_ldap_sync.py)."""

import json
import os
import re
import secrets
import subprocess
import sys
from urllib.parse import parse_qs, urlparse

import pytest
import requests

pytest.importorskip("playwright", reason="the browser tests need the test extra's playwright")

from playwright.sync_api import expect  # noqa: E402

from ..support import pg  # noqa: E402
from ..support.browser import DESKTOP, PASSWORD, Site, Watched, browser  # noqa: E402,F401 (fixtures)
from ..support.ldap_server import LdapServer  # noqa: E402
from ..support.oidc_provider import OidcProvider  # noqa: E402
from ..support.serve_process import free_port  # noqa: E402

expect.set_options(timeout=15_000)

ACCOUNTS = {
    "alice": {"email": "Alice@Example.com", "name": "Alice Liddell"},
    "newbie": {"email": "newbie@example.com", "name": "Nova Newcomer"},
    "carol": {"email": "carol@example.com", "name": "Carol"},
}


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    """Everyone active in the organization is in the directory (emails in `mail`), so that the
    sync leaves them be; Lena and Walt have no account yet."""
    server = LdapServer(tmp_path_factory.mktemp("slapd"))
    server.add_person("owner", "owner ldap pw", "Owner", mail="owner@localhost")
    # Alice's directory password is the one the site gives the people it creates.
    server.add_person("alice", PASSWORD, "Alice Liddell", mail="alice@example.com")
    for uid, name in [("newbie", "Nova Newcomer"), ("lena", "Lena from LDAP"), ("walt", "Walt from LDAP")]:
        server.add_person(uid, f"{uid} ldap pw", name, mail=f"{uid}@example.com")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def site(tmp_path_factory, directory):
    """serve with all three backends on: local passwords, LDAP (emails in `mail`) and the
    provider, with auto_signup; Alice and Carol have accounts, Carol's deactivated."""
    port = free_port()
    folder = tmp_path_factory.mktemp("webclient-sso")
    provider = OidcProvider(folder, [f"http://127.0.0.1:{port}/complete/oidc/"], ACCOUNTS)
    instance = folder / "instance"
    instance.mkdir()
    config = directory.config(LDAP_EMAIL_ATTR="mail", LDAP_DEACTIVATE_NON_MATCHING_USERS=True,
                              SOCIAL_AUTH_OIDC_ENABLED_IDPS=provider.idp_settings())
    config["AUTHENTICATION_BACKENDS"].append("zproject.backends.GenericOpenIdConnectBackend")
    (instance / "config.json").write_text(json.dumps(config))
    try:
        running = Site(instance, port=port)
        try:
            running.instance = instance
            running.provider = provider
            running.alice = running.person("alice@example.com", "Alice Liddell")
            running.carol = running.person("carol@example.com", "Carol")
            running.api("DELETE", f"users/{running.carol[2]}")
            yield running
        finally:
            running.stop()
    finally:
        provider.stop()


@pytest.fixture
def page(browser):
    """A fresh browser (no session here or at the provider); no console error may occur, except
    the refusals the test itself provokes, which it lists in `page.expected`."""
    context = browser.new_context(viewport=DESKTOP)
    watched = Watched(context.new_page())
    watched.page.expected = []
    yield watched.page
    errors = [e for e in watched.errors if not any(x in e for x in watched.page.expected)]
    context.close()
    assert errors == [] and watched.dialogs == [], (errors, watched.dialogs)


def provider_link(page, site):
    page.goto(site.url + "/")
    link = page.get_by_role("link", name="Log in with Test IdP", exact=True)
    expect(link).to_be_visible()
    return link


def in_the_app(page):
    page.get_by_role("textbox", name="Message").wait_for()


def test_sign_in_page_offers_the_provider_and_usernames(page, site):
    """Does the sign-in page show a "Log in with Test IdP" link (a link, to the login URL) and a
    text field whose name starts with "Email", taking a bare user name?"""
    link = provider_link(page, site)
    assert link.get_attribute("href") == "/accounts/login/social/oidc"
    field = page.get_by_label(re.compile("^Email"))
    assert field.get_attribute("type") == "text"
    expect(page.get_by_label("Email or username")).to_be_visible()


def test_existing_user_through_the_provider(page, site):
    """Does Alice, whose provider email differs in case, land in the app as herself?"""
    site.provider.sign_in_as("alice")
    provider_link(page, site).click()
    in_the_app(page)
    me = page.evaluate("async () => (await (await fetch('/json/users/me', {headers: {'X-CSRFToken': "
                       "document.querySelector('meta[name=csrf-token]').content}})).json())")
    assert me["user_id"] == site.alice[2]


def test_new_user_signs_up_through_the_provider(page, site):
    """With auto_signup, does a newcomer get an account named by the provider and land in the app?"""
    site.provider.sign_in_as("newbie")
    provider_link(page, site).click()
    in_the_app(page)
    users = site.api("GET", "users")["members"]
    assert [u["full_name"] for u in users if u["email"] == "newbie@example.com"] == ["Nova Newcomer"]


def test_deactivated_user_is_told(page, site):
    """Is Carol, deactivated, shown that her account is deactivated, and not signed in?"""
    site.provider.sign_in_as("carol")
    page.expected = ["403"]
    provider_link(page, site).click()
    expect(page.get_by_text("Your account carol@example.com has been deactivated.")).to_be_visible()
    page.goto(site.url + "/")
    expect(page.get_by_role("link", name="Log in with Test IdP")).to_be_visible()


def test_tampered_callback_is_refused(page, site):
    """Does a callback with a forged state (this browser never started a flow) end on a refusal
    page, still signed out?"""
    page.expected = ["400"]
    page.goto(f"{site.url}/complete/oidc/?state=forged&code=stolen")
    expect(page.get_by_role("heading", name="Authentication failed")).to_be_visible()
    page.goto(site.url + "/")
    expect(page.get_by_role("link", name="Log in with Test IdP")).to_be_visible()


def test_mobile_flow_gives_a_working_key(page, site):
    """Does the mobile app's flow end in a redirect to zulip://login whose encrypted key, decoded
    with the pad, works against the API?"""
    site.provider.sign_in_as("alice")
    otp = secrets.token_hex(32)
    page.expected = ["zulip://"]
    with page.expect_response(lambda r: "/complete/oidc/" in r.url) as answer:
        try:
            page.goto(f"{site.url}/accounts/login/social/oidc?mobile_flow_otp={otp}")
        except Exception:  # Chromium cannot open zulip://, which is the app's to open
            pass
    location = answer.value.headers["location"]
    assert answer.value.status == 302 and location.startswith("zulip://login?")
    params = {k: v[0] for k, v in parse_qs(urlparse(location).query).items()}
    key = bytes.fromhex("".join(f"{int(a, 16) ^ int(b, 16):x}" for a, b in zip(params["otp_encrypted_api_key"], otp)))
    me = requests.get(f"{site.url}/api/v1/users/me", auth=(params["email"], key.decode()), timeout=30).json()
    assert me["user_id"] == site.alice[2] == int(params["user_id"])


def test_ldap_by_uid_email_refusal_and_first_login(page, site):
    """Through the sign-in form: is a wrong LDAP password refused with a message, does Lena's bare
    uid with her directory password create her account and sign her in, and does Walt sign in
    with his email?"""
    page.expected = ["401"]
    page.goto(site.url + "/")
    page.get_by_label("Email or username").fill("lena")
    page.get_by_label("Password").fill("wrong")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_have_text(re.compile("."))
    page.get_by_label("Password").fill("lena ldap pw")
    page.get_by_role("button", name="Log in").click()
    in_the_app(page)
    users = {u["email"]: u["full_name"] for u in site.api("GET", "users")["members"]}
    assert users["lena@example.com"] == "Lena from LDAP"
    other = page.context.browser.new_context(viewport=DESKTOP).new_page()
    other.goto(site.url + "/")
    other.get_by_label("Email or username").fill("walt@example.com")
    other.get_by_label("Password").fill("walt ldap pw")
    other.get_by_role("button", name="Log in").click()
    other.get_by_role("textbox", name="Message").wait_for()
    other.context.close()


def test_sync_signs_out_who_left_the_directory(page, site, directory):
    """Once Walt leaves the directory, does sync-ldap-users (run beside the server) end his
    browser session, so that a reload shows the sign-in page, and refuse his next sign-in?"""
    page.expected = ["401"]
    page.goto(site.url + "/")
    page.get_by_label("Email or username").fill("walt")
    page.get_by_label("Password").fill("walt ldap pw")
    page.get_by_role("button", name="Log in").click()
    in_the_app(page)
    directory.delete_person("walt")
    env = dict(os.environ)
    if pg.ENABLED:
        env["CHAT_APPLIANCE_DATABASE_URL"] = pg.database_for_instance(site.instance)
    done = subprocess.run([sys.executable, "-m", "chat_appliance", "sync-ldap-users", "--instance", str(site.instance)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and "1 deactivated" in done.stdout, (done.stdout, done.stderr)
    page.reload()
    expect(page.get_by_label("Email or username")).to_be_visible()
    page.get_by_label("Email or username").fill("walt")
    page.get_by_label("Password").fill("walt ldap pw")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_have_text(re.compile("."))


# What Zulip's desktop app gives the pages it shows (its preload script's electron_bridge):
# decrypt_clipboard(1) -> {key, pasted}. The app itself is not under test, so this stand-in
# resolves `pasted` with whatever the test hands to window.__paste (the app would decrypt what
# the person copies).
ELECTRON_BRIDGE = """(() => {
    let paste;
    const pasted = new Promise((resolve) => { paste = resolve; });
    window.__paste = (token) => paste(token);
    window.electron_bridge = {
        decrypt_clipboard(version) {
            window.__key = crypto.getRandomValues(new Uint8Array(32));
            window.__version = version;
            return { version, key: window.__key, pasted };
        },
    };
})();"""


def test_desktop_app_flow(browser, site):
    """Inside the desktop app, does the provider link open the login URL with desktop_flow_otp in
    another window (the system browser), whose page shows a token encrypted with the app's key
    (AES-GCM), which, once decrypted and handed back, signs the app's page in?"""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    site.provider.sign_in_as("alice")
    context = browser.new_context(viewport=DESKTOP)
    context.add_init_script(ELECTRON_BRIDGE)
    app = Watched(context.new_page())
    requested = []
    context.on("request", lambda request: requested.append(request.url))
    try:
        app.page.goto(site.url + "/")
        with context.expect_page() as opened:
            app.page.get_by_role("link", name="Log in with Test IdP").click()
        field = opened.value.get_by_label("Login token")
        expect(field).to_be_visible()
        data = bytes.fromhex(field.input_value())
        key = bytes(app.page.evaluate("() => [...window.__key]"))
        assert f"{site.url}/accounts/login/social/oidc?desktop_flow_otp={key.hex()}" in requested
        assert app.page.evaluate("() => window.__version") == 1
        token = AESGCM(key).decrypt(data[:12], data[12:], b"").decode()
        app.page.evaluate("(token) => window.__paste(token)", token)
        in_the_app(app.page)
        assert app.errors == [] and app.dialogs == []
    finally:
        context.close()


@pytest.fixture(scope="module")
def strict_site(tmp_path_factory):
    """A second serve whose provider has auto_signup false: newcomers are asked first."""
    port = free_port()
    folder = tmp_path_factory.mktemp("webclient-sso-strict")
    provider = OidcProvider(folder, [f"http://127.0.0.1:{port}/complete/oidc/"], ACCOUNTS)
    instance = folder / "instance"
    instance.mkdir()
    (instance / "config.json").write_text(json.dumps({
        "AUTHENTICATION_BACKENDS": ["zproject.backends.EmailAuthBackend",
                                    "zproject.backends.GenericOpenIdConnectBackend"],
        "SOCIAL_AUTH_OIDC_ENABLED_IDPS": provider.idp_settings(auto_signup=False)}))
    try:
        running = Site(instance, port=port)
        running.provider = provider
        yield running
        running.stop()
    finally:
        provider.stop()


def test_sign_up_without_auto_signup_asks_first(page, strict_site):
    """Without auto_signup, is a newcomer shown Zulip's confirmation with no account made, and
    does "Continue to registration" create it and land them in the app?"""
    strict_site.provider.sign_in_as("newbie")
    provider_link(page, strict_site).click()
    expect(page.get_by_text("which does not have an account in this organization")).to_be_visible()
    assert "newbie@example.com" not in [u["email"] for u in strict_site.api("GET", "users")["members"]]
    page.get_by_role("button", name="Continue to registration").click()
    in_the_app(page)
    assert "newbie@example.com" in [u["email"] for u in strict_site.api("GET", "users")["members"]]
