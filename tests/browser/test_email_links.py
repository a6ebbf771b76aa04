"""End to end: mail from a real `serve` to a real SMTP server on loopback (aiosmtpd), its links
followed in Chromium.

Each test answers one question about what a person does with a mail they receive."""

import re

import pytest

pytest.importorskip("playwright", reason="the browser tests need the test extra's playwright")

from playwright.sync_api import expect  # noqa: E402

expect.set_options(timeout=10_000)

from ..support.browser import PASSWORD, Site, Watched, browser, sign_in  # noqa: E402,F401 (fixture)
from ..support.smtp_sink import body, running_sink  # noqa: E402

ALICE = "alice@example.com"


@pytest.fixture(scope="module")
def smtp():
    with running_sink() as sink:
        yield sink


@pytest.fixture(scope="module")
def site(tmp_path_factory, smtp):
    running = Site(tmp_path_factory.mktemp("email") / "instance", env=smtp.environment())
    running.alice = running.person(ALICE, "Alice Liddell")
    yield running
    running.stop()


def mail_to(smtp, address, count_before):
    """The first mail to `address` received after the first `count_before` mails."""
    messages = smtp.wait(count_before + 1)
    for message in messages[count_before:]:
        if message["To"].addresses[0].addr_spec == address:
            return message
    raise AssertionError(f"no mail to {address}")


def link_in(message, pattern):
    return re.search(pattern, body(message, "plain")).group(0)


def test_password_reset_through_the_browser(browser, site, smtp):
    """From the sign-in page, does "Forgot your password?" lead to a form whose mail carries a link
    that sets a new password, with which Alice then signs in while the old one fails?"""
    context = browser.new_context()
    watched = Watched(context.new_page())
    page = watched.page
    page.goto(site.url + "/")
    page.get_by_role("link", name="Forgot your password?").click()
    before = len(smtp.messages)
    page.get_by_role("textbox", name="Email").fill(ALICE)
    page.get_by_role("button", name="Reset password").click()
    expect(page.get_by_role("status")).to_contain_text("If an account exists for this address")
    link = link_in(mail_to(smtp, ALICE, before), r"http://\S+/accounts/password/reset/\S+")
    assert link.startswith(site.url + "/")
    page.goto(link)
    page.get_by_role("textbox", name="New password").fill("a brand new password")
    page.get_by_role("button", name="Set password").click()
    expect(page.get_by_role("status")).to_contain_text("Your password has been changed")
    page.get_by_role("link", name="Log in").click()
    page.get_by_label("Email").fill(ALICE)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_have_text("Your username or password is incorrect")
    # A used link says so.
    page.goto(link)
    expect(page.get_by_role("alert")).to_have_text("The password reset link has expired or has already been used.")
    unexpected = [e for e in watched.errors if "401" not in e and "400" not in e and "Failed to load" not in e]
    context.close()
    assert unexpected == [], watched.errors
    signed_in = sign_in(browser, site, ALICE, "a brand new password")
    assert signed_in.errors == []
    signed_in.page.context.close()


def test_invitation_by_email_signed_up_through_the_link(browser, site, smtp):
    """Does an address invited through POST /invites get a mail whose link opens the sign-up form
    with that address filled in and read-only, and does signing up there open the app?"""
    before = len(smtp.messages)
    general = site.stream_id("general")
    site.api("POST", "invites", invitee_emails="carol@example.com", stream_ids=[general])
    message = mail_to(smtp, "carol@example.com", before)
    assert message["Subject"] == "Owner invited you to join chat-appliance"
    link = link_in(message, r"http://\S+/join/[a-z0-9]+")
    assert link.startswith(site.url + "/join/")
    context = browser.new_context()
    watched = Watched(context.new_page())
    page = watched.page
    page.goto(link)
    email = page.get_by_role("textbox", name="Email")
    expect(email).to_have_value("carol@example.com")
    expect(email).not_to_be_editable()
    page.get_by_role("textbox", name="Full name").fill("Carol Singer")
    page.get_by_label("Password").fill("carol's long password")
    page.get_by_role("button", name="Sign up").click()
    page.get_by_role("textbox", name="Message").wait_for()
    expect(page.get_by_role("navigation", name="Channels").get_by_role("link", name=re.compile("^general"))).to_be_visible()
    context.close()
    assert watched.errors == [] and watched.dialogs == []


def test_email_change_confirmed_through_the_browser(browser, site, smtp):
    """Does the link mailed to a new address open a page whose button makes the change, after which
    the person signs in with the new address?"""
    email, auth, _user_id = site.person("dave@example.com", "Dave Diver")
    before = len(smtp.messages)
    answer = site.api("PATCH", "settings", auth=auth, email="dave@new.example.com")
    assert answer["account_email"] == "Check your email for a confirmation link."
    link = link_in(mail_to(smtp, "dave@new.example.com", before), r"http://\S+/accounts/confirm_new_email/\S+")
    context = browser.new_context()
    watched = Watched(context.new_page())
    page = watched.page
    page.goto(link)
    page.get_by_role("button", name="Confirm email change").click()
    expect(page.get_by_role("status")).to_have_text("Your email address is now dave@new.example.com.")
    context.close()
    assert watched.errors == []
    signed_in = sign_in(browser, site, "dave@new.example.com", PASSWORD)
    assert signed_in.errors == []
    signed_in.page.context.close()


def test_invitations_by_email_from_settings_with_resend_and_revoke(browser, site, smtp):
    """On a server that sends mail, does Settings > Invitations offer invitations by email, does an
    address entered there get its mail, and are pending invitations listed with "Resend" (a second
    mail) and "Revoke" (gone from the list and from the API)?"""
    owner = sign_in(browser, site, site.server.email, site.owner_password)
    page = owner.page
    page.get_by_role("button", name="Settings").click()
    settings = page.get_by_role("dialog", name="Settings")
    settings.get_by_role("tab", name="Invitations").click()
    before = len(smtp.messages)
    settings.get_by_role("textbox", name="Emails").fill("hank@example.com")
    settings.get_by_role("button", name="Send invitations").click()
    assert "/join/" in body(mail_to(smtp, "hank@example.com", before), "plain")
    pending = settings.get_by_role("list", name="Pending invitations")
    expect(pending).to_contain_text("hank@example.com")
    before = len(smtp.messages)
    pending.get_by_role("button", name="Resend invitation to hank@example.com").click()
    assert "/join/" in body(mail_to(smtp, "hank@example.com", before), "plain")
    pending.get_by_role("button", name="Revoke invitation to hank@example.com").click()
    expect(pending).not_to_contain_text("hank@example.com")
    assert all(i.get("email") != "hank@example.com" for i in site.api("GET", "invites")["invites"])
    page.context.close()
    assert owner.errors == [] and owner.dialogs == []


def test_sign_up_through_a_reusable_link_confirms_the_address_first(browser, site, smtp):
    """With email configured, does a reusable link's sign-up page ask for the address only, mail
    it a confirmation link, and does that link's page then create the account and sign in?"""
    link = site.api("POST", "invites/multiuse")["invite_link"]
    context = browser.new_context()
    watched = Watched(context.new_page())
    page = watched.page
    page.goto(link)
    expect(page.get_by_label("Full name")).to_have_count(0)
    before = len(smtp.messages)
    page.get_by_label("Email").fill("zoe@example.com")
    page.get_by_role("button", name="Send confirmation link").click()
    expect(page.get_by_role("status")).to_contain_text("We have sent a confirmation link to zoe@example.com")
    confirm = link_in(mail_to(smtp, "zoe@example.com", before), r"http://\S+/join/\S+\?confirm=\S+")
    assert confirm.startswith(site.url + "/")
    page.goto(confirm)
    expect(page.get_by_label("Email")).to_have_value("zoe@example.com")
    page.get_by_label("Full name").fill("Zoe Newcomer")
    page.get_by_label("Password").fill("zoe's password")
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("textbox", name="Message")).to_be_visible()
    assert site.api("POST", "fetch_api_key", username="zoe@example.com", password="zoe's password")["api_key"]
    context.close()
    assert watched.errors == []
