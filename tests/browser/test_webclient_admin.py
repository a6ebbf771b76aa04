"""End to end: running the organization from the browser, in Chromium against a real
`serve`: channel settings (members, name, description, archiving), invitations into default
channels only, profile cards, the organization's name, custom emoji and incoming webhook bots.

Each test answers one question about what an owner or a member sees and does; every page is
watched for console errors, uncaught exceptions and dialogs, and none may occur. Screenshots of
each screen at desktop and phone width go to test-artifacts/webclient."""

import re
from pathlib import Path

import pytest
import requests

pytest.importorskip("playwright", reason="the browser tests need the test extra's playwright")

from playwright.sync_api import expect  # noqa: E402

from ..support.browser import DESKTOP, PHONE, Site, Watched, browser, pages, settled, shot  # noqa: E402,F401 (fixtures)

expect.set_options(timeout=15_000)

ALICE, BOB = "alice@example.com", "bob@example.com"
ICON = Path(__file__).resolve().parents[2] / "chat_appliance" / "webclient" / "static" / "realm-icon.png"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    running = Site(tmp_path_factory.mktemp("webclient-admin") / "instance")
    running.alice = running.person(ALICE, "Alice Liddell")
    running.bob = running.person(BOB, "Bob Builder")
    yield running
    running.stop()


def owner_page(pages, site, **kwargs):
    return pages(site.server.email, site.owner_password, **kwargs)


def channel_link(page, name):
    return page.get_by_role("navigation", name="Channels").get_by_role("link", name=re.compile(f"^{re.escape(name)}"))


def open_channel(page, site, name, topic=None):
    stream_id = site.stream_id(name)
    page.goto(f"{site.url}/#narrow/channel/{stream_id}-{name}" + (f"/topic/{topic}" if topic else ""))
    expect(page.get_by_role("heading", name=re.compile(f"^#{re.escape(name)}"))).to_be_visible()


def channel_settings(page):
    page.get_by_role("button", name="Channel settings").click()
    dialog = page.get_by_role("dialog", name=re.compile("^Channel settings"))
    expect(dialog).to_be_visible()
    return dialog


def make_channel(site, name, members, private=False, description=""):
    site.api("POST", "users/me/subscriptions", subscriptions=[{"name": name, "description": description}],
             principals=members, invite_only=private)
    return site.stream_id(name)


def subscribers(site, stream_id):
    return set(site.api("GET", f"streams/{stream_id}/members")["subscribers"])


def send(page, text):
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")
    expect(box).to_have_value("")


def axe_in_both_schemes(page, include=None):
    """axe-core's violations (tests/support/browser.py's axe_violations) with the page in light, then in
    dark colours (the client follows prefers-color-scheme), each prefixed by its scheme."""
    from ..support.browser import axe_violations

    found = []
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        assert page.evaluate("() => matchMedia('(prefers-color-scheme: dark)').matches") == (scheme == "dark")
        found += [f"{scheme}: {v}" for v in axe_violations(page, include)]
    page.emulate_media(color_scheme="light")
    return found


def confirm_then_cancel(page, opener, name):
    """Open a confirmation with `opener`, check it with axe in both colour schemes, and cancel it."""
    opener.click()
    confirm = page.get_by_role("alertdialog", name=re.compile(f"^{re.escape(name)}"))
    expect(confirm).to_be_visible()
    assert axe_in_both_schemes(page, "dialog.confirm[open]") == [], name
    confirm.get_by_role("button", name="Cancel").click()
    expect(confirm).to_have_count(0)


def test_axe_administration_screens_and_dialogs(pages, site):
    """Does axe-core find, in light and dark colours, no violation on what an owner sees: the
    main view with the "Name your organization" banner, a channel's view and its settings, a
    profile card with "Manage user", each Settings tab, and the confirmations those screens ask
    (each then cancelled)? It runs before test_rename_the_organization, while the organization
    is still unnamed."""
    make_channel(site, "access", [site.server.email, ALICE, BOB], description="Checked by **axe**")
    site.api("POST", "messages", auth=site.bob[1], type="stream", to="access", topic="a11y", content="axe time")
    owner = owner_page(pages, site)
    expect(owner.get_by_role("form", name="Name your organization")).to_be_visible()
    assert axe_in_both_schemes(owner) == [], "main view with the banner"
    open_channel(owner, site, "access")
    expect(owner.get_by_role("article").filter(has_text="axe time")).to_be_visible()
    assert axe_in_both_schemes(owner) == [], "channel view"

    dialog = channel_settings(owner)
    expect(dialog.get_by_role("region", name="Members")).to_contain_text("Bob Builder")
    assert axe_in_both_schemes(owner, "dialog[open]") == [], "Channel settings"
    confirm_then_cancel(owner, dialog.get_by_role("button", name="Archive channel"), "Archive #access")
    owner.keyboard.press("Escape")
    expect(dialog).to_have_count(0)

    open_channel(owner, site, "access", "a11y")
    message = owner.get_by_role("article").filter(has_text="axe time")
    message.get_by_role("button", name="Bob Builder").click()
    card = owner.get_by_role("dialog", name="Bob Builder")
    expect(card).to_contain_text(BOB)
    assert axe_in_both_schemes(owner, "dialog[open]") == [], "profile card"
    card.get_by_role("button", name="Manage user").click()
    expect(card.get_by_role("combobox", name="Role of Bob Builder")).to_be_visible()
    assert axe_in_both_schemes(owner, "dialog[open]") == [], "profile card, Manage user"
    confirm_then_cancel(owner, card.get_by_role("button", name="Deactivate user"), "Deactivate Bob Builder")
    owner.keyboard.press("Escape")
    expect(card).to_have_count(0)

    owner.get_by_role("button", name="Settings").click()
    settings = owner.get_by_role("dialog", name="Settings")
    expect(settings.get_by_role("tablist").get_by_role("tab", name="Users", exact=True)).to_be_visible()
    tabs = [b.inner_text() for b in settings.get_by_role("tablist").get_by_role("tab").all()]
    assert {"Organization", "Bots", "Invitations", "Users"} <= set(tabs), tabs
    for tab in tabs:
        settings.get_by_role("tablist").get_by_role("tab", name=tab, exact=True).click()
        settled(owner)
        assert axe_in_both_schemes(owner, "dialog[open]") == [], tab
    settings.get_by_role("tablist").get_by_role("tab", name="Users", exact=True).click()
    bob_row = settings.get_by_role("row", name=re.compile("Bob Builder"))
    confirm_then_cancel(owner, bob_row.get_by_role("button", name="Deactivate"), "Deactivate Bob Builder")
    assert site.api("GET", f"users/{site.bob[2]}")["user"]["is_active"] is True


def test_admin_adds_a_member_to_a_private_channel_who_sees_it_live(pages, site):
    """Can an owner, in a private channel's settings, add a member by typing part of their name
    and picking the suggestion, and does that member's open page show the channel without a
    reload?"""
    stream_id = make_channel(site, "leads", [site.server.email], private=True)
    bob = pages(BOB)
    expect(channel_link(bob, "general")).to_be_visible()
    expect(channel_link(bob, "leads")).to_have_count(0)
    owner = owner_page(pages, site)
    open_channel(owner, site, "leads")
    dialog = channel_settings(owner)
    members = dialog.get_by_role("region", name="Members")
    expect(members).to_contain_text("Owner")
    dialog.get_by_role("textbox", name="Add members").fill("bob")
    dialog.get_by_role("option", name="Bob Builder").click()
    dialog.get_by_role("button", name="Add", exact=True).click()
    expect(members).to_contain_text("Bob Builder")
    expect(dialog.get_by_role("button", name="Remove Bob Builder")).to_be_visible()
    assert site.bob[2] in subscribers(site, stream_id)
    expect(channel_link(bob, "leads")).to_be_visible()
    shot(owner, "channel-settings-desktop")


def test_admin_removes_a_member(pages, site):
    """Does "Remove FULL NAME" in a channel's settings unsubscribe that person, as the API then
    reports, and take the channel out of their open page?"""
    stream_id = make_channel(site, "ops", [site.server.email, ALICE, BOB])
    alice = pages(ALICE)
    expect(channel_link(alice, "ops")).to_be_visible()
    owner = owner_page(pages, site)
    open_channel(owner, site, "ops")
    dialog = channel_settings(owner)
    members = dialog.get_by_role("region", name="Members")
    expect(members).to_contain_text("Alice Liddell")
    dialog.get_by_role("button", name="Remove Alice Liddell").click()
    expect(dialog.get_by_role("button", name="Remove Alice Liddell")).to_have_count(0)
    expect(members).to_contain_text("Bob Builder")
    assert site.alice[2] not in subscribers(site, stream_id)
    expect(channel_link(alice, "ops")).to_have_count(0)
    phone = owner_page(pages, site, viewport=PHONE)
    open_channel(phone, site, "ops")
    shot(phone, "channel-view-phone")
    dialog = channel_settings(phone)
    expect(dialog.get_by_role("region", name="Members")).to_contain_text("Bob Builder")
    shot(phone, "channel-settings-phone")


def test_rename_and_description_show_live_for_others(pages, site):
    """When an owner renames a channel and changes its description (with its Markdown preview),
    does a member looking at that channel see the new name and description without a reload?"""
    make_channel(site, "plans", [site.server.email, ALICE], description="Old plans")
    alice = pages(ALICE)
    open_channel(alice, site, "plans")
    expect(alice.locator(".channel-description")).to_have_text("Old plans")
    owner = owner_page(pages, site)
    open_channel(owner, site, "plans")
    dialog = channel_settings(owner)
    dialog.get_by_role("textbox", name="Channel name").fill("roadmap")
    dialog.get_by_role("textbox", name="Channel description").fill("Where we are **going**")
    expect(dialog.get_by_role("region", name="Description preview").locator("strong")).to_have_text("going")
    dialog.get_by_role("button", name="Save changes").click()
    expect(channel_link(alice, "roadmap")).to_be_visible()
    expect(channel_link(alice, "plans")).to_have_count(0)
    expect(alice.get_by_role("heading", name="#roadmap")).to_be_visible()
    expect(alice.locator(".channel-description strong")).to_have_text("going")
    alice.set_viewport_size(PHONE)
    expect(channel_link(alice, "roadmap")).to_be_hidden()  # the channels slid behind their menu
    expect(alice.locator(".channel-description strong")).to_be_visible()
    shot(alice, "channel-description-phone")
    expect(owner.get_by_role("dialog", name=re.compile("^Channel settings: #roadmap"))).to_be_visible()
    shot(owner, "channel-settings-renamed-desktop")


def test_archive_and_unarchive_a_channel(pages, site):
    """Does "Archive channel" (after a confirmation) archive it, as the API reports, and take it
    out of a member's open page; and does "Unarchive" in Settings > Channels bring it back there?"""
    stream_id = make_channel(site, "oldstuff", [site.server.email, ALICE])
    alice = pages(ALICE)
    expect(channel_link(alice, "oldstuff")).to_be_visible()
    owner = owner_page(pages, site)
    open_channel(owner, site, "oldstuff")
    dialog = channel_settings(owner)
    dialog.get_by_role("button", name="Archive channel").click()
    confirm = owner.get_by_role("alertdialog", name=re.compile("^Archive #oldstuff"))
    confirm.get_by_role("button", name="Archive").click()
    expect(owner.get_by_role("dialog", name=re.compile("^Channel settings"))).to_have_count(0)
    expect(channel_link(alice, "oldstuff")).to_have_count(0)
    expect(channel_link(owner, "oldstuff")).to_have_count(0)
    assert site.api("GET", f"streams/{stream_id}")["stream"]["is_archived"] is True
    owner.get_by_role("button", name="Settings").click()
    settings = owner.get_by_role("dialog", name="Settings")
    settings.get_by_role("tab", name="Channels", exact=True).click()
    settings.get_by_role("button", name="Unarchive oldstuff").click()
    expect(channel_link(alice, "oldstuff")).to_be_visible()
    assert site.api("GET", f"streams/{stream_id}")["stream"]["is_archived"] is False


def test_invitations_tick_only_default_channels(browser, pages, site):
    """In Settings > Invitations, are exactly the organization's default channels ticked (a
    private channel the inviter is in never is), and does someone joining by the link then land
    in those channels only?"""
    make_channel(site, "secret", [site.server.email], private=True)
    make_channel(site, "random", [site.server.email])
    general = site.stream_id("general")
    site.api("POST", "default_streams", stream_id=general)
    owner = owner_page(pages, site)
    owner.get_by_role("button", name="Settings").click()
    settings = owner.get_by_role("dialog", name="Settings")
    settings.get_by_role("tab", name="Invitations").click()
    expect(settings.get_by_role("checkbox", name="general", exact=True)).to_be_checked()
    expect(settings.get_by_role("checkbox", name="secret", exact=True)).not_to_be_checked()
    expect(settings.get_by_role("checkbox", name="random", exact=True)).not_to_be_checked()
    settings.get_by_role("button", name="Create invitation link").click()
    link = settings.get_by_role("textbox", name="Invitation link").input_value()
    expect(settings.get_by_role("list", name="Pending invitations")).to_contain_text("/join/")
    shot(owner, "settings-invitations-defaults-desktop")
    owner.set_viewport_size(PHONE)
    shot(owner, "settings-invitations-phone")
    key = link.rsplit("/join/", 1)[1]
    context = browser.new_context(viewport=PHONE)
    newcomer = Watched(context.new_page())
    newcomer.page.goto(f"{site.url}/join/{key}")
    newcomer.page.get_by_label("Email").fill("fay@example.com")
    newcomer.page.get_by_label("Full name").fill("Fay Newcomer")
    newcomer.page.get_by_label("Password").fill("fay's password")
    newcomer.page.get_by_role("button", name="Sign up").click()
    expect(newcomer.page.get_by_role("textbox", name="Message")).to_be_visible()
    context.close()
    assert newcomer.errors == []
    key_fay = site.api("POST", "fetch_api_key", username="fay@example.com", password="fay's password")["api_key"]
    subs = site.api("GET", "users/me/subscriptions", auth=("fay@example.com", key_fay))["subscriptions"]
    assert sorted(s["name"] for s in subs) == ["general"]


def test_profile_card(pages, site):
    """Does a sender's name in a message open a card named after them with their role, email and
    a "Send direct message" button that opens the conversation, and do administrators (only)
    get "Manage user"?"""
    site.api("POST", "messages", auth=site.bob[1], type="stream", to="general", topic="cards", content="card time")
    alice = pages(ALICE)
    open_channel(alice, site, "general", "cards")
    message = alice.get_by_role("article").filter(has_text="card time")
    message.get_by_role("button", name="Bob Builder").click()
    card = alice.get_by_role("dialog", name="Bob Builder")
    expect(card).to_contain_text("Member")
    expect(card).to_contain_text(BOB)
    expect(card.get_by_role("button", name="Manage user")).to_have_count(0)
    shot(alice, "profile-card-desktop")
    card.get_by_role("button", name="Send direct message").click()
    expect(card).to_have_count(0)
    expect(alice.get_by_role("heading", name="Bob Builder")).to_be_visible()
    owner = owner_page(pages, site, viewport=PHONE)
    open_channel(owner, site, "general", "cards")
    owner.get_by_role("article").filter(has_text="card time").get_by_role("button", name="Bob Builder").click()
    card = owner.get_by_role("dialog", name="Bob Builder")
    card.get_by_role("button", name="Manage user").click()
    expect(card.get_by_role("combobox", name="Role of Bob Builder")).to_have_value("400")
    shot(owner, "profile-card-phone")


def test_rename_the_organization(pages, site):
    """Does the first owner sign-in offer to name the organization, does Settings > Organization
    show its address, and does a new name saved there show in a member's open page without a
    reload?"""
    alice = pages(ALICE)
    owner = owner_page(pages, site)
    expect(owner.get_by_role("form", name="Name your organization")).to_be_visible()
    shot(owner, "name-your-organization-desktop")
    owner.get_by_role("button", name="Settings").click()
    settings = owner.get_by_role("dialog", name="Settings")
    settings.get_by_role("tab", name="Organization", exact=True).click()
    expect(settings.get_by_label("Organization URL")).to_have_text(site.api("GET", "server_settings")["realm_url"])
    settings.get_by_role("textbox", name="Organization name").fill("Wonderland Inc")
    settings.get_by_role("button", name="Save changes").click()
    expect(owner.get_by_text("Organization saved.")).to_be_visible()
    shot(owner, "settings-organization-desktop")
    assert site.api("GET", "server_settings")["realm_name"] == "Wonderland Inc"
    expect(alice.locator(".realm-name")).to_have_text("Wonderland Inc")
    expect(alice).to_have_title(re.compile("Wonderland Inc$"))
    settings.get_by_label("Icon image").set_input_files(str(ICON))
    settings.get_by_role("button", name="Upload icon").click()
    expect(owner.get_by_text("Icon changed.")).to_be_visible()
    icon_url = site.api("GET", "server_settings")["realm_icon"]
    assert "/realm/icon.png?version=" in icon_url and requests.get(icon_url, timeout=30).content == ICON.read_bytes()
    expect(alice.locator("img.realm-icon")).to_have_attribute("src", icon_url)
    settings.get_by_role("combobox", name="Who can create public channels").select_option(label="Administrators")
    settings.get_by_role("combobox", name="Time limit for editing messages").select_option(label="1 hour")
    settings.get_by_role("button", name="Save permissions").click()
    expect(owner.get_by_text("Permissions saved.")).to_be_visible()
    state = site.api("POST", "register", fetch_event_types=["realm"], auth=site.alice[1])
    groups = site.api("GET", "user_groups")["user_groups"]
    admins = next(g["id"] for g in groups if g["name"] == "role:administrators")
    assert state["realm_can_create_public_channel_group"] == admins
    assert state["realm_message_content_edit_limit_seconds"] == 3600
    assert state["can_create_public_streams"] is False
    phone = owner_page(pages, site, viewport=PHONE)
    expect(phone.get_by_role("form", name="Name your organization")).to_have_count(0)  # named now
    phone.get_by_role("button", name="Settings").click()
    phone.get_by_role("dialog", name="Settings").get_by_role("tab", name="Organization", exact=True).click()
    expect(phone.get_by_role("textbox", name="Organization name")).to_have_value("Wonderland Inc")
    shot(phone, "settings-organization-phone")


def test_custom_emoji_usable_right_after_upload(pages, site):
    """Can an owner upload a custom emoji in Settings, and does a message using it right away show
    the image for another member?"""
    alice = pages(ALICE)
    open_channel(alice, site, "general", "emoji")
    owner = owner_page(pages, site)
    owner.get_by_role("button", name="Settings").click()
    settings = owner.get_by_role("dialog", name="Settings")
    settings.get_by_role("tab", name="Custom emoji").click()
    settings.get_by_role("textbox", name="Emoji name").fill("wonder")
    settings.get_by_label("Emoji image").set_input_files(str(ICON))
    settings.get_by_role("button", name="Add emoji").click()
    expect(settings.get_by_role("list", name="Custom emoji")).to_contain_text(":wonder:")
    shot(owner, "settings-emoji-desktop")
    settings.get_by_role("button", name="Close settings").click()
    open_channel(owner, site, "general", "emoji")
    send(owner, "I :wonder: why")
    message = alice.get_by_role("article").filter(has_text="why")
    expect(message.locator("img.emoji")).to_have_attribute("alt", ":wonder:")


def test_incoming_webhook_bot_made_in_the_page_posts(pages, site):
    """Does a bot of type "Incoming webhook" created in Settings > Bots come with a URL that, when a
    service posts JSON to it, puts a message in the channel for everyone to see?"""
    alice = pages(ALICE)
    open_channel(alice, site, "general")
    owner = owner_page(pages, site)
    owner.get_by_role("button", name="Settings").click()
    settings = owner.get_by_role("dialog", name="Settings")
    settings.get_by_role("tab", name="Bots").click()
    settings.get_by_role("combobox", name="Bot type").select_option(label="Incoming webhook")
    settings.get_by_role("textbox", name="Bot name").fill("Deploy notices")  # the short name is made from it
    settings.get_by_role("button", name="Create bot").click()
    url_box = settings.get_by_role("textbox", name="Webhook URL of Deploy notices").first
    expect(url_box).to_have_value(re.compile(r"/api/v1/external/json\?api_key=\w+&stream=general"))
    expect(settings.get_by_text(url_box.input_value())).to_be_visible()  # also shown as text
    shot(owner, "settings-bots-webhook-desktop")
    response = requests.post(url_box.input_value(), json={"deploy": "v2 is live"}, timeout=30)
    assert response.status_code == 200, response.text
    message = alice.get_by_role("article").filter(has_text="v2 is live")
    expect(message).to_have_count(1)
    expect(message).to_contain_text("Deploy notices")
    phone = owner_page(pages, site, viewport=PHONE)
    phone.get_by_role("button", name="Settings").click()
    phone.get_by_role("dialog", name="Settings").get_by_role("tab", name="Bots").click()
    expect(phone.get_by_role("dialog", name="Settings")).to_contain_text("Deploy notices")
    shot(phone, "settings-bots-phone")


def test_users_list_search_filters_and_reactivation(pages, site):
    """In Settings > Users, does the search narrow the list to matching people, does the status
    filter show deactivated accounts, and does "Reactivate" bring one back, as the API reports?"""
    _email, _auth, gus_id = site.person("gus@example.com", "Gus Gone")
    site.api("DELETE", f"users/{gus_id}")
    owner = owner_page(pages, site)
    owner.get_by_role("button", name="Settings").click()
    settings = owner.get_by_role("dialog", name="Settings")
    settings.get_by_role("tab", name="Users", exact=True).click()
    rows = settings.get_by_role("row")
    expect(settings.get_by_role("row", name=re.compile("Alice Liddell"))).to_be_visible()
    expect(settings.get_by_role("row", name=re.compile("Gus Gone"))).to_have_count(0)
    settings.get_by_role("searchbox", name="Search users").fill("bob")
    expect(settings.get_by_role("row", name=re.compile("Alice Liddell"))).to_have_count(0)
    expect(settings.get_by_role("row", name=re.compile("Bob Builder"))).to_be_visible()
    settings.get_by_role("searchbox", name="Search users").fill("")
    settings.get_by_role("combobox", name="Filter by status").select_option("deactivated")
    gus = settings.get_by_role("row", name=re.compile("Gus Gone"))
    expect(rows).to_have_count(2)  # the header and Gus
    shot(owner, "settings-users-filters-desktop")
    gus.get_by_role("button", name="Reactivate").click()
    expect(owner.get_by_text("User reactivated.")).to_be_visible()
    assert site.api("GET", f"users/{gus_id}")["user"]["is_active"] is True
    settings.get_by_role("button", name="Invite more").click()
    expect(settings.get_by_role("button", name="Create invitation link")).to_be_visible()


def test_custom_profile_field_and_linkifier(pages, site):
    """Can an owner add a custom profile field and a linkifier in Settings; does a member's answer,
    given in their own Profile settings, show on their profile card; and does the linkifier turn
    matching text of a new message into a link?"""
    owner = owner_page(pages, site)
    owner.get_by_role("button", name="Settings").click()
    settings = owner.get_by_role("dialog", name="Settings")
    settings.get_by_role("tab", name="Custom fields").click()
    settings.get_by_role("textbox", name="Field name").fill("Team")
    settings.get_by_role("textbox", name="Hint").fill("Which team you are on")
    settings.get_by_role("button", name="Add field").click()
    expect(settings.get_by_role("list", name="Profile fields")).to_contain_text("Team")
    shot(owner, "settings-profile-fields-desktop")
    settings.get_by_role("tab", name="Linkifiers").click()
    settings.get_by_role("textbox", name="Pattern").fill(r"#(?P<id>[0-9]+)")
    settings.get_by_role("textbox", name="URL template", exact=True).fill("https://tracker.example.com/issues/{id}")
    settings.get_by_role("button", name="Add linkifier").click()
    expect(settings.get_by_role("list", name="Linkifiers")).to_contain_text("tracker.example.com")
    shot(owner, "settings-linkifiers-desktop")
    settings.get_by_role("button", name="Close settings").click()
    alice = pages(ALICE, viewport=PHONE)
    alice.get_by_role("button", name="Settings").click()
    mine = alice.get_by_role("dialog", name="Settings")
    mine.get_by_role("textbox", name="Team").fill("Wonders")
    mine.get_by_role("button", name="Save profile fields").click()
    expect(alice.get_by_text("Profile fields saved.")).to_be_visible()
    shot(alice, "settings-profile-phone")
    mine.get_by_role("button", name="Close settings").click()
    open_channel(alice, site, "general", "links")
    send(alice, "see #42 please")
    open_channel(owner, site, "general", "links")
    message = owner.get_by_role("article").filter(has_text="see #42 please")
    expect(message.get_by_role("link", name="#42")).to_have_attribute("href", "https://tracker.example.com/issues/42")
    message.get_by_role("button", name="Alice Liddell").click()
    card = owner.get_by_role("dialog", name="Alice Liddell")
    expect(card).to_contain_text("Team")
    expect(card).to_contain_text("Wonders")


def test_axe_administration_lists_filled_in(browser, pages, site):
    """In light and dark colours: once an owner has made things in Settings (a bot, an
    invitation link, a custom emoji, a linkifier, a custom field) and filtered the users, and while
    a channel's "Add members" box offers suggestions, does axe-core still find no violation,
    including in the confirmations that deleting or deactivating asks, and on the sign-up page
    the invitation link opens?"""
    _email, _auth, _id = site.person("axel@example.com", "Axel Checker")
    make_channel(site, "filled", [site.server.email], private=True)
    owner = owner_page(pages, site)
    open_channel(owner, site, "filled")
    dialog = channel_settings(owner)
    dialog.get_by_role("textbox", name="Add members").fill("axel")
    expect(dialog.get_by_role("option", name="Axel Checker")).to_be_visible()
    assert axe_in_both_schemes(owner, "dialog[open]") == [], "Add members suggestions"
    owner.keyboard.press("Escape")
    if dialog.count():
        owner.keyboard.press("Escape")
    expect(dialog).to_have_count(0)

    owner.get_by_role("button", name="Settings", exact=True).click()
    settings = owner.get_by_role("dialog", name="Settings")
    tab = lambda name: settings.get_by_role("tablist").get_by_role("tab", name=name, exact=True).click()  # noqa: E731
    tab("Bots")
    settings.get_by_role("textbox", name="Bot name").fill("Axe checker")
    settings.get_by_role("button", name="Create bot").click()
    expect(settings.get_by_role("button", name="Download zuliprc of Axe checker")).to_be_visible()
    assert axe_in_both_schemes(owner, "dialog[open]") == [], "Bots, with a bot"
    confirm_then_cancel(owner, settings.get_by_role("button", name=re.compile("^Deactivate.*Axe checker")).first,
                        "Deactivate the bot Axe checker")
    tab("Invitations")
    settings.get_by_role("button", name="Create invitation link").click()
    expect(settings.get_by_role("textbox", name="Invitation link")).to_have_value(re.compile("/join/"))
    assert axe_in_both_schemes(owner, "dialog[open]") == [], "Invitations, with a link"
    context = browser.new_context(viewport=PHONE)
    newcomer = context.new_page()
    newcomer.goto(settings.get_by_role("textbox", name="Invitation link").input_value())
    expect(newcomer.get_by_role("button", name="Sign up")).to_be_visible()
    assert axe_in_both_schemes(newcomer) == [], "the page the invitation link opens"
    context.close()
    tab("Custom emoji")
    settings.get_by_role("textbox", name="Emoji name").fill("axecheck")
    settings.get_by_label("Emoji image").set_input_files(str(ICON))
    settings.get_by_role("button", name="Add emoji").click()
    expect(settings.get_by_role("list", name="Custom emoji")).to_contain_text(":axecheck:")
    assert axe_in_both_schemes(owner, "dialog[open]") == [], "Custom emoji, with an emoji"
    confirm_then_cancel(owner, settings.get_by_role("button", name="Delete emoji axecheck"), "Delete the emoji :axecheck:")
    tab("Linkifiers")
    settings.get_by_role("textbox", name="Pattern").fill(r"AXE-(?P<id>[0-9]+)")
    settings.get_by_role("textbox", name="URL template", exact=True).fill("https://tracker.example.com/axe/{id}")
    settings.get_by_role("button", name="Add linkifier").click()
    expect(settings.get_by_role("list", name="Linkifiers")).to_contain_text("tracker.example.com/axe")
    assert axe_in_both_schemes(owner, "dialog[open]") == [], "Linkifiers, with a linkifier"
    tab("Custom fields")
    settings.get_by_role("textbox", name="Field name").fill("Desk")
    settings.get_by_role("button", name="Add field").click()
    expect(settings.get_by_role("list", name="Profile fields")).to_contain_text("Desk")
    assert axe_in_both_schemes(owner, "dialog[open]") == [], "Custom fields, with a field"
    confirm_then_cancel(owner, settings.get_by_role("button", name="Delete field Desk"), "Delete the field Desk")
    tab("Users")
    settings.get_by_role("searchbox", name="Search users").fill("axel")
    expect(settings.get_by_role("row", name=re.compile("Axel Checker"))).to_be_visible()
    assert axe_in_both_schemes(owner, "dialog[open]") == [], "Users, searched"
    settings.get_by_role("searchbox", name="Search users").fill("")
    settings.get_by_role("combobox", name="Filter by status").select_option("deactivated")
    settled(owner)
    assert axe_in_both_schemes(owner, "dialog[open]") == [], "Users, deactivated"


def test_axe_what_a_member_sees_on_a_phone(pages, site):
    """At phone width, in light and dark colours, does axe-core find no violation in what a member
    (not an administrator) gets of the same screens: a channel's settings, a profile card without
    "Manage user", and their Settings tabs?"""
    make_channel(site, "phoneaxe", [site.server.email, ALICE, BOB], description="Small **screens**")
    site.api("POST", "messages", auth=site.bob[1], type="stream", to="phoneaxe", topic="small", content="tiny axe")
    alice = pages(ALICE, viewport=PHONE)
    open_channel(alice, site, "phoneaxe")
    assert axe_in_both_schemes(alice) == [], "channel view"
    dialog = channel_settings(alice)
    assert axe_in_both_schemes(alice, "dialog[open]") == [], "Channel settings, as a member"
    alice.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    open_channel(alice, site, "phoneaxe", "small")
    alice.get_by_role("article").filter(has_text="tiny axe").get_by_role("button", name="Bob Builder").click()
    card = alice.get_by_role("dialog", name="Bob Builder")
    expect(card.get_by_role("button", name="Send direct message")).to_be_visible()
    assert axe_in_both_schemes(alice, "dialog[open]") == [], "profile card, as a member"
    alice.keyboard.press("Escape")
    expect(card).to_have_count(0)
    alice.get_by_role("button", name="Settings", exact=True).click()
    settings = alice.get_by_role("dialog", name="Settings")
    nav = settings.get_by_role("tablist")
    expect(nav.get_by_role("tab", name="Profile", exact=True)).to_be_attached()
    tabs = [b.inner_text() for b in nav.get_by_role("tab").all()]
    assert "Users" not in tabs and "Organization" not in tabs, tabs
    for tab in tabs:
        nav.get_by_role("tab", name=tab, exact=True).click()
        settled(alice)
        assert axe_in_both_schemes(alice, "dialog[open]") == [], tab


def test_a_pinned_channel_stands_first_in_its_own_group(pages, site):
    """Does ticking "Pin to the top of the channel list" in a channel's settings move it, at once,
    into a "Pinned channels" group above the other channels (where it was last, by name), and
    does unticking put it back in its place?"""
    make_channel(site, "zz-pinned", [ALICE])
    make_channel(site, "aa-first", [ALICE])
    alice = pages(ALICE)
    nav = alice.get_by_role("navigation", name="Channels")
    names = lambda: [t.split("\n")[0].strip() for t in nav.get_by_role("link").all_inner_texts()]  # noqa: E731
    expect(channel_link(alice, "zz-pinned")).to_be_visible()
    assert names()[-1].startswith("zz-pinned") and names().index("aa-first") < names().index("zz-pinned")
    open_channel(alice, site, "zz-pinned")
    dialog = channel_settings(alice)
    dialog.get_by_role("checkbox", name="Pin to the top of the channel list").check()
    pinned = nav.get_by_role("list", name="Pinned channels")
    expect(pinned.get_by_role("link")).to_have_count(1)
    expect(pinned.get_by_role("link", name=re.compile("^zz-pinned"))).to_be_visible()
    assert names()[0].startswith("zz-pinned")
    subs = site.api("GET", "users/me/subscriptions", auth=site.alice[1])["subscriptions"]
    assert [s["pin_to_top"] for s in subs if s["name"] == "zz-pinned"] == [True]
    dialog.get_by_role("checkbox", name="Pin to the top of the channel list").uncheck()
    expect(nav.get_by_role("list", name="Pinned channels")).to_have_count(0)
    expect(channel_link(alice, "zz-pinned")).to_be_visible()
    assert names()[-1].startswith("zz-pinned")
