"""End to end, in Chromium against a real `serve` that sends mail to an SMTP server on loopback,
signed in as the owner: Settings' "Muted users" and "Alert words" tabs (following the server's
events), muting from a profile card, a message's edit history, and changing one's own email
address (the confirmation mail, the organization's email_changes_disabled) and, as an authorized
owner, someone else's. Each scenario runs at desktop and at phone width; elements are found by
role and accessible name only; outcomes are read back through /api/v1. Every page is watched for
console errors and failed requests, axe-core checks each new screen (no serious or critical
violation), and a screenshot of each goes to the test's temporary folder."""

import os
import re

import pytest

pytest.importorskip("playwright", reason="the browser tests need the test extra's playwright")

from playwright.sync_api import expect  # noqa: E402

from ..support import pg  # noqa: E402
from ..support.browser import DESKTOP, PHONE, Site, Watched, axe_violations, browser, pages  # noqa: E402,F401 (fixtures)
from ..support.helpers import run  # noqa: E402
from ..support.smtp_sink import body, running_sink  # noqa: E402

expect.set_options(timeout=15_000)

ALICE = "alice@example.com"
WIDTHS = {"desktop": DESKTOP, "phone": PHONE}


@pytest.fixture(scope="module")
def smtp():
    with running_sink() as sink:
        yield sink


@pytest.fixture(scope="module")
def site(tmp_path_factory, smtp):
    instance = tmp_path_factory.mktemp("webclient-settings-more") / "instance"
    running = Site(instance, env=smtp.environment())
    running.instance = instance
    running.owner_email = running.server.email
    running.owner_id = running.api("GET", "users/me")["user_id"]
    running.alice = running.person(ALICE, "Alice Liddell")
    running.bob = running.person("bob@example.com", "Bob Builder")
    running.carol = running.person("carol@example.com", "Carol Singer")
    running.api("POST", "users/me/subscriptions", subscriptions=[{"name": "sealife"}], principals=[running.owner_email, ALICE])
    yield running
    running.stop()


def serious(page, include=None):
    """axe-core's serious and critical violations on the page (or within `include`)."""
    return [v for v in axe_violations(page, include) if "(serious)" in v or "(critical)" in v]


def check(page, tmp_path, name):
    """A screenshot of the page as it is, and no serious or critical axe-core violation on it."""
    page.screenshot(path=str(tmp_path / f"{name}.png"))
    assert serious(page) == [], name


def owner_page(pages, site, width):
    return pages(site.owner_email, site.owner_password, viewport=WIDTHS[width])


def settings_tab(page, tab):
    """Settings, opened on `tab`; returns the Settings dialog."""
    page.get_by_role("button", name="Settings").click()
    settings = page.get_by_role("dialog", name="Settings")
    settings.get_by_role("tab", name=tab, exact=True).click()
    expect(settings.get_by_role("tab", name=tab, exact=True)).to_have_attribute("aria-selected", "true")
    return settings


def eventually(page, check_fn, what):
    """Wait on the page (up to 10 s) until check_fn() holds."""
    for _ in range(100):
        if check_fn():
            return
        page.wait_for_timeout(100)
    assert check_fn(), what


def muted_ids(site):
    state = site.api("POST", "register", fetch_event_types=["muted_users"])
    return sorted(entry["id"] for entry in state["muted_users"])


def alert_words(site):
    return sorted(site.api("GET", "users/me/alert_words")["alert_words"])


def open_topic(page, site, channel, topic):
    page.goto(f"{site.url}/#narrow/channel/{site.stream_id(channel)}-{channel}/topic/{topic}")
    expect(page.get_by_role("article").first).to_be_visible()


@pytest.mark.parametrize("width", WIDTHS)
def test_muted_users_listed_unmuted_and_following_events(pages, site, tmp_path, width):
    """Does Settings > "Muted users" list each person the owner muted by full name, each with an
    "Unmute ..." button that unmutes them (DELETE /users/me/muted_users/{id}), and does the list
    follow muted_users events: someone muted elsewhere appears without a reload?"""
    for person in (site.alice, site.bob):
        site.api("POST", f"users/me/muted_users/{person[2]}")
    page = owner_page(pages, site, width)
    settings = settings_tab(page, "Muted users")
    muted = settings.get_by_role("list", name="Muted users").get_by_role("listitem")
    expect(muted).to_have_count(2)
    expect(muted.filter(has_text="Alice Liddell").get_by_role("button", name=re.compile("^Unmute"))).to_be_visible()
    expect(muted.filter(has_text="Bob Builder").get_by_role("button", name=re.compile("^Unmute"))).to_be_visible()
    check(page, tmp_path, f"muted-users-{width}")

    muted.filter(has_text="Bob Builder").get_by_role("button", name=re.compile("^Unmute")).click()
    expect(muted.filter(has_text="Bob Builder")).to_have_count(0)
    assert muted_ids(site) == [site.alice[2]]

    # Muted from elsewhere (another client): the open list follows the event.
    site.api("POST", f"users/me/muted_users/{site.carol[2]}")
    expect(muted.filter(has_text="Carol Singer")).to_have_count(1)
    for name in ("Alice Liddell", "Carol Singer"):
        muted.filter(has_text=name).get_by_role("button", name=re.compile("^Unmute")).click()
        expect(muted.filter(has_text=name)).to_have_count(0)
    expect(muted).to_have_count(0)
    expect(settings.get_by_text("You have not muted anyone.")).to_be_visible()
    assert muted_ids(site) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_mute_from_the_profile_card_hides_their_messages(pages, site, tmp_path, width):
    """Does a sender's profile card offer "Mute this user", muting them (POST
    /users/me/muted_users/{id}) and hiding their messages in the open feed behind "Show message",
    and does "Unmute this user" undo it?"""
    topic = f"chatter {width}"
    site.api("POST", "messages", auth=site.bob[1], type="stream", to="sealife", topic=topic, content=f"bob says hi {width}")
    page = owner_page(pages, site, width)
    open_topic(page, site, "sealife", topic)
    article = page.get_by_role("article").filter(has_text=f"bob says hi {width}")
    article.get_by_role("button", name="Bob Builder").click()
    card = page.get_by_role("dialog", name="Bob Builder")
    card.get_by_role("button", name="Mute this user").click()
    expect(card.get_by_role("button", name="Unmute this user")).to_be_visible()
    eventually(page, lambda: muted_ids(site) == [site.bob[2]], "Bob muted")
    check(page, tmp_path, f"profile-card-muted-{width}")
    card.get_by_role("button", name="Close").click()

    hidden = page.get_by_role("article", name=re.compile("^Muted user"))
    expect(hidden).to_have_count(1)
    expect(page.get_by_text(f"bob says hi {width}")).to_have_count(0)
    check(page, tmp_path, f"muted-message-{width}")
    hidden.get_by_role("button", name="Show message").click()
    expect(page.get_by_text(f"bob says hi {width}")).to_be_visible()

    page.get_by_role("article").filter(has_text=f"bob says hi {width}").get_by_role("button", name="Bob Builder").click()
    card = page.get_by_role("dialog", name="Bob Builder")
    card.get_by_role("button", name="Unmute this user").click()
    expect(card.get_by_role("button", name="Mute this user")).to_be_visible()
    eventually(page, lambda: muted_ids(site) == [], "Bob unmuted")


@pytest.mark.parametrize("width", WIDTHS)
def test_alert_words_added_listed_and_removed(pages, site, tmp_path, width):
    """Does Settings > "Alert words" save a word typed into "Alert word" with "Add alert word"
    (POST /users/me/alert_words), list the saved words each with a remove button (DELETE), and
    follow alert_words events: a word added elsewhere appears without a reload?"""
    word, other = f"kraken {width}", f"leviathan {width}"
    page = owner_page(pages, site, width)
    settings = settings_tab(page, "Alert words")
    settings.get_by_role("textbox", name="Alert word").fill(word)
    settings.get_by_role("button", name="Add alert word").click()
    words = settings.get_by_role("list", name="Alert words").get_by_role("listitem")
    expect(words.filter(has_text=word)).to_have_count(1)
    expect(settings.get_by_role("textbox", name="Alert word")).to_have_value("")
    assert alert_words(site) == [word]
    check(page, tmp_path, f"alert-words-{width}")

    site.api("POST", "users/me/alert_words", alert_words=[other])
    expect(words.filter(has_text=other)).to_have_count(1)
    words.filter(has_text=word).get_by_role("button", name=re.compile("^Remove")).click()
    expect(words.filter(has_text=word)).to_have_count(0)
    assert alert_words(site) == [other]
    words.filter(has_text=other).get_by_role("button", name=re.compile("^Remove")).click()
    expect(words).to_have_count(0)
    assert alert_words(site) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_edit_history_shows_earlier_and_current_text(pages, site, tmp_path, width):
    """Does an edited message's "Message actions" menu have "View edit history", opening a
    dialog named for the edit history that shows the text before the edit and the text now?"""
    topic = f"revisions {width}"
    before, after = f"the first draft {width}", f"the final word {width}"
    message_id = site.api("POST", "messages", type="stream", to="sealife", topic=topic, content=before)["id"]
    site.api("PATCH", f"messages/{message_id}", content=after)
    history = site.api("GET", f"messages/{message_id}/history")["message_history"]
    assert [entry["content"] for entry in history] == [before, after]
    page = owner_page(pages, site, width)
    open_topic(page, site, "sealife", topic)
    article = page.get_by_role("article").filter(has_text=after)
    article.click()
    article.get_by_role("button", name="Message actions").click()
    page.get_by_role("menuitem", name=re.compile("^View edit history")).click()
    dialog = page.get_by_role("dialog", name=re.compile("edit history", re.I))
    expect(dialog.get_by_text(before)).to_be_visible()
    expect(dialog.get_by_text(after)).to_be_visible()
    check(page, tmp_path, f"edit-history-{width}")
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_have_count(0)


def mail_to(smtp, address, count_before):
    """The first mail to `address` among those received after the first `count_before`."""
    for _ in range(100):
        for message in smtp.messages[count_before:]:
            if message["To"].addresses[0].addr_spec == address:
                return message
        smtp.settle(0.1)
    raise AssertionError(f"no mail to {address}")


def owner_delivery_email(site):
    return site.api("GET", f"users/{site.owner_id}")["user"]["delivery_email"]


@pytest.mark.parametrize("width", WIDTHS)
def test_own_email_change_confirmed_by_mail(browser, pages, site, smtp, tmp_path, width):
    """Does Settings > "Account and API key" show the owner's address and change it: "New email"
    and "Change email" saying a confirmation mail was sent, nothing changing until the mailed
    link's "Confirm email change" is pressed, after which the API has the new address and the
    open Settings show it without a reload?"""
    old, new = site.owner_email, f"owner-{width}@example.net"
    page = owner_page(pages, site, width)
    settings = settings_tab(page, "Account and API key")
    expect(settings.get_by_text(old, exact=True)).to_be_visible()
    before = len(smtp.messages)
    settings.get_by_role("textbox", name="New email").fill(new)
    settings.get_by_role("button", name="Change email").click()
    expect(settings.get_by_role("tabpanel", name="Account and API key").get_by_role("status")).to_have_text(
        "Check your email for a confirmation link.")
    check(page, tmp_path, f"email-change-sent-{width}")
    assert owner_delivery_email(site) == old

    link = re.search(r"http://\S+/accounts/confirm_new_email/\S+", body(mail_to(smtp, new, before), "plain")).group(0)
    context = browser.new_context(viewport=WIDTHS[width])
    confirming = Watched(context.new_page())
    confirming.page.goto(link)
    confirming.page.get_by_role("button", name="Confirm email change").click()
    expect(confirming.page.get_by_role("status")).to_have_text(f"Your email address is now {new}.")
    context.close()
    assert confirming.errors == []
    # The owner's API name is now the new address.
    site.owner_email, site.owner_auth = new, (new, site.owner_auth[1])
    assert owner_delivery_email(site) == new
    expect(settings.get_by_text(new, exact=True)).to_be_visible()
    notice = mail_to(smtp, old, before)
    assert new in body(notice, "plain")


@pytest.mark.parametrize("width", WIDTHS)
def test_organization_turns_off_members_email_changes(pages, site, tmp_path, width):
    """Does the owner's "Prevent users from changing their email address" (Settings >
    Organization > Save permissions) set email_changes_disabled, a member's Account tab then
    offering no "New email" and saying why, while the owner's still offers it?"""
    owner = owner_page(pages, site, width)
    settings = settings_tab(owner, "Organization")
    settings.get_by_role("checkbox", name="Prevent users from changing their email address").check()
    settings.get_by_role("button", name="Save permissions").click()
    disabled = lambda: site.api("POST", "register", fetch_event_types=["realm"])["realm_email_changes_disabled"]  # noqa: E731
    eventually(owner, disabled, "email_changes_disabled saved")
    settings.get_by_role("tab", name="Account and API key", exact=True).click()
    expect(settings.get_by_role("textbox", name="New email")).to_be_visible()

    member = pages(ALICE, viewport=WIDTHS[width])
    member_settings = settings_tab(member, "Account and API key")
    expect(member_settings.get_by_text(ALICE, exact=True)).to_be_visible()
    expect(member_settings.get_by_text("Your organization does not let members change their email address")).to_be_visible()
    expect(member_settings.get_by_role("textbox", name="New email")).to_have_count(0)
    check(member, tmp_path, f"email-change-off-{width}")

    settings.get_by_role("tab", name="Organization", exact=True).click()
    settings.get_by_role("checkbox", name="Prevent users from changing their email address").uncheck()
    settings.get_by_role("button", name="Save permissions").click()
    eventually(owner, lambda: not disabled(), "email_changes_disabled cleared")


def grant_email_changes(site):
    """`chat-appliance set-permission` on the running server's instance (its database)."""
    env = dict(os.environ)
    if pg.ENABLED:
        env["CHAT_APPLIANCE_DATABASE_URL"] = pg.database_for_instance(site.instance)
    done = run("set-permission", "--instance", str(site.instance), "--email", site.owner_email,
               "--permission", "can_change_user_emails", env=env)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("width", WIDTHS)
def test_authorized_owner_changes_someone_elses_email(pages, site, tmp_path, width):
    """With the server's can_change_user_emails permission, does the owner's "Manage user" on a
    profile card change someone else's address at once (PATCH /users/{id} new_email)?"""
    grant_email_changes(site)
    carol_id = site.carol[2]
    new = f"carol-{width}@example.net"
    topic = f"addresses {width}"
    site.api("POST", "messages", auth=site.carol[1], type="stream", to="general", topic=topic, content=f"carol here {width}")
    page = owner_page(pages, site, width)
    open_topic(page, site, "general", topic)
    page.get_by_role("article").filter(has_text=f"carol here {width}").get_by_role("button", name="Carol Singer").click()
    card = page.get_by_role("dialog", name="Carol Singer")
    card.get_by_role("button", name="Manage user").click()
    card.get_by_role("textbox", name="New email for Carol Singer").fill(new)
    card.get_by_role("button", name="Change email").click()
    expect(page.get_by_text("Email changed.")).to_be_visible()
    eventually(page, lambda: site.api("GET", f"users/{carol_id}")["user"]["delivery_email"] == new, "Carol's new address")
    site.carol = (new, (new, site.carol[1][1]), carol_id)
    expect(card).to_contain_text(new)
    check(page, tmp_path, f"manage-user-email-{width}")
