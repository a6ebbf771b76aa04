"""End to end: the web client at `/` in Chromium (Playwright), against a real `serve`.

Each test answers one question about what a person sees and does in the browser; every page is
watched for console errors, uncaught exceptions and dialogs, and none may occur."""

import re
import time

import pytest

pytest.importorskip("playwright", reason="the browser tests need the test extra's playwright")

from playwright.sync_api import expect, sync_playwright  # noqa: E402

expect.set_options(timeout=10_000)

from .browser import DESKTOP, PASSWORD, PHONE, Site, launch, shot, sign_in  # noqa: E402

ALICE, BOB = "alice@example.com", "bob@example.com"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    running = Site(tmp_path_factory.mktemp("webclient") / "instance")
    running.alice = running.person(ALICE, "Alice Liddell")
    running.bob = running.person(BOB, "Bob Builder")
    running.api("POST", "users/me/subscriptions", subscriptions=[{"name": "design", "description": "Looks"}],
                principals=[ALICE, BOB, running.server.email])
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def pages(browser, site):
    """Open signed-in pages through `open(email)`; afterwards, assert none logged an error."""
    opened = []

    def open_page(email, password=PASSWORD, **kwargs):
        watched = sign_in(browser, site, email, password, **kwargs)
        opened.append(watched)
        return watched.page

    yield open_page
    for watched in opened:
        errors, dialogs = watched.errors, watched.dialogs
        watched.page.context.close()
        assert errors == [], errors
        assert dialogs == [], dialogs


def channel_link(page, name):
    return page.get_by_role("navigation", name="Channels").get_by_role("link", name=re.compile(f"^{re.escape(name)}"))


def open_topic(page, channel, topic, site):
    page.goto(f"{site.url}/#narrow/channel/{site.stream_id(channel)}-{channel}/topic/{topic}")
    expect(page.get_by_role("textbox", name="Topic")).to_have_value(topic)


def send(page, text):
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")
    expect(box).to_have_value("")


def test_two_people_chat_without_reload(pages, site):
    """Do two people sign in, see one link per subscribed channel in the Channels navigation, and
    does a message one sends in a channel appear for the other without a reload?"""
    alice, bob = pages(ALICE), pages(BOB)
    links = alice.get_by_role("navigation", name="Channels").get_by_role("link")
    expect(links).to_have_count(2)
    expect(channel_link(alice, "design")).to_be_visible()
    expect(channel_link(alice, "general")).to_be_visible()
    channel_link(alice, "design").click()
    topic = alice.get_by_role("textbox", name="Topic")
    topic.fill("colours")
    send(alice, "Shall we use **teal**?")
    expect(alice.get_by_role("article").filter(has_text="Shall we use teal?")).to_have_count(1)
    message = bob.get_by_role("article").filter(has_text="Shall we use teal?")
    expect(message).to_have_count(1)
    expect(message.locator("strong")).to_have_text("teal")
    expect(message).to_contain_text("Alice Liddell")
    shot(bob, "feed-desktop")


def test_edit_and_react(pages, site):
    """Does an edit by the sender show for the other person with an "edited" mark, and does a
    reaction chosen in the emoji picker show, with its count, for the sender?"""
    alice, bob = pages(ALICE), pages(BOB)
    open_topic(alice, "design", "edits", site)
    open_topic(bob, "design", "edits", site)
    send(alice, "Helo there")
    mine = alice.get_by_role("article").filter(has_text="Helo there")
    mine.hover()
    mine.get_by_role("button", name="Message actions").click()
    alice.get_by_role("menuitem", name="Edit message").click()
    editor = alice.get_by_role("textbox", name="Edit message")
    editor.fill("Hello there")
    editor.press("Enter")
    theirs = bob.get_by_role("article").filter(has_text="Hello there")
    expect(theirs).to_contain_text("edited")
    theirs.hover()
    theirs.get_by_role("button", name="Add reaction").first.click()
    bob.get_by_role("textbox", name="Search emoji").fill("octopus")
    bob.get_by_role("option", name="octopus").click()
    reaction = alice.get_by_role("article").filter(has_text="Hello there").get_by_role("button", name="octopus: 1")
    expect(reaction).to_be_visible()
    shot(alice, "reactions-desktop")


def test_search_and_deep_links(pages, site):
    """Does the Search box take Zulip's operators (channel:, topic:, free text) and show only
    matching messages, and does a deep link in Zulip's form (channel/topic/near, dm) open that view?"""
    site.api("POST", "messages", auth=site.bob[1], type="stream", to="general", topic="apples", content="red apples")
    site.api("POST", "messages", auth=site.bob[1], type="stream", to="general", topic="pears", content="green pears")
    target = site.api("POST", "messages", auth=site.bob[1], type="stream", to="general", topic="apples",
                      content="apples are crisp")["id"]
    alice = pages(ALICE)
    search = alice.get_by_role("textbox", name="Search")
    search.fill("channel:general topic:apples")
    search.press("Enter")
    articles = alice.get_by_role("article")
    expect(articles).to_have_count(2)
    expect(articles.filter(has_text="green pears")).to_have_count(0)
    search.fill("crisp")
    search.press("Enter")
    expect(articles).to_have_count(1)
    expect(articles.first).to_contain_text("apples are crisp")
    general = site.stream_id("general")
    alice.goto(f"{site.url}/#narrow/channel/{general}-general/topic/apples/near/{target}")
    expect(alice.locator(f'[role="article"][data-id="{target}"]')).to_have_class(re.compile("selected"))
    expect(alice.get_by_role("textbox", name="Topic")).to_have_value("apples")
    site.api("POST", "messages", auth=site.bob[1], type="direct", to=[site.alice[2]], content="just for alice")
    alice.goto(f"{site.url}/#narrow/dm/{site.bob[2]}-Bob-Builder")
    expect(alice.get_by_role("article").filter(has_text="just for alice")).to_have_count(1)
    expect(alice.get_by_role("textbox", name="Topic")).to_be_hidden()
    shot(alice, "search-desktop")


def test_draft_survives_reload_and_session_stays(pages, site):
    """Is text typed in the compose box saved to the server as a draft, and after a reload is the
    person still signed in, with the draft back in the box of that conversation?"""
    alice = pages(ALICE)
    open_topic(alice, "general", "drafty", site)
    alice.get_by_role("textbox", name="Message").fill("half a thought")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        drafts = site.api("GET", "drafts", auth=site.alice[1])["drafts"]
        if any(d["content"] == "half a thought" for d in drafts):
            break
        time.sleep(0.2)
    assert [d["topic"] for d in drafts if d["content"] == "half a thought"] == ["drafty"]
    alice.reload()
    expect(alice.get_by_role("textbox", name="Message")).to_have_value("half a thought")
    expect(alice.get_by_role("button", name="Log in")).to_have_count(0)


def test_typing_notice(pages, site):
    """Does the other person in the same conversation see "Alice Liddell is typing..." while
    Alice types, and does it go away when she sends?"""
    alice, bob = pages(ALICE), pages(BOB)
    open_topic(alice, "design", "typing", site)
    open_topic(bob, "design", "typing", site)
    alice.get_by_role("textbox", name="Message").press_sequentially("I am wri")
    expect(bob.get_by_text("Alice Liddell is typing\u2026")).to_be_visible()
    send(alice, "I am writing")
    expect(bob.get_by_text("Alice Liddell is typing\u2026")).to_be_hidden()


def test_unread_counts_follow(pages, site):
    """Do unread counts appear on a channel link and in the page title when messages arrive, and
    go when the person opens the channel and sees them (marked read on the server too)?"""
    bob = pages(BOB)
    open_topic(bob, "general", "elsewhere", site)
    ids = [site.api("POST", "messages", auth=site.alice[1], type="stream", to="design", topic="news",
                    content=f"news {n}")["id"] for n in range(2)]
    expect(channel_link(bob, "design")).to_have_accessible_name(re.compile(r"^design\s*2"))
    expect(bob).to_have_title(re.compile(r"^\(\d+\) "))
    channel_link(bob, "design").click()
    expect(bob.get_by_role("article").filter(has_text="news 1")).to_be_visible()
    expect(channel_link(bob, "design")).to_have_accessible_name("design")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        flags = [site.api("GET", f"messages/{i}", auth=site.bob[1])["message"]["flags"] for i in ids]
        if all("read" in f for f in flags):
            break
        time.sleep(0.2)
    assert all("read" in f for f in flags), flags


def test_hostile_message_html_runs_no_script(pages, site):
    """Does a message carrying script tags, event-handler attributes and javascript: links show
    as inert text or links, with no script run and no dialog opened?"""
    hostile = ('<script>window.pwned = 1; alert(1)</script> <img src=x onerror="window.pwned=2;alert(2)"> '
               '[click](javascript:alert(3)) <svg onload=alert(4)>')
    site.api("POST", "messages", auth=site.bob[1], type="stream", to="general", topic="hostile", content=hostile)
    alice = pages(ALICE)
    open_topic(alice, "general", "hostile", site)
    article = alice.get_by_role("article").filter(has_text="window.pwned")
    expect(article).to_have_count(1)
    assert article.locator("script, img[onerror], svg, a[href^='javascript']").count() == 0
    alice.get_by_role("article").filter(has_text="window.pwned").get_by_text("click").click()
    assert alice.evaluate("window.pwned") is None


def test_views_at_phone_width_and_dark(pages, site):
    """At phone width, are the feed and the compose box usable with the channels behind a menu
    button, and does the dark scheme apply when the system asks for it? (Screenshots saved.)"""
    phone = pages(BOB, viewport=PHONE, color_scheme="dark")
    expect(phone.get_by_role("textbox", name="Message")).to_be_visible()
    expect(phone.get_by_role("article").first).to_be_visible()
    expect(channel_link(phone, "general")).to_be_hidden()
    shot(phone, "feed-phone-dark")
    phone.get_by_role("button", name="Show channels").click()
    expect(channel_link(phone, "general")).to_be_visible()
    shot(phone, "channels-phone-dark")
    channel_link(phone, "general").click()
    expect(phone.get_by_role("textbox", name="Topic")).to_be_visible()
    expect(phone.get_by_role("article").first).to_be_visible()
    background = phone.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(27, 30, 35)"
    shot(phone, "channel-phone-dark")
    phone.get_by_role("button", name="Settings").click()
    expect(phone.get_by_role("dialog", name="Settings")).to_be_visible()
    shot(phone, "settings-phone-dark")
    desktop = pages(ALICE, viewport=DESKTOP)
    desktop.get_by_role("button", name="Settings").click()
    desktop.get_by_role("dialog", name="Settings").get_by_role("button", name="Channels", exact=True).click()
    expect(desktop.get_by_role("button", name="Unsubscribe from design")).to_be_visible()
    shot(desktop, "settings-channels-desktop")


def test_login_page_and_wrong_password(browser, site):
    """Does the page at / ask for Email and Password with a Log in button, say so on a wrong
    password, and log no console error while doing it?"""
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(site.url + "/")
    shot(page, "login-phone")
    page.get_by_label("Email").fill(ALICE)
    page.get_by_label("Password").fill("not it")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_have_text("Your username or password is incorrect")
    context.close()
    assert errors == []


def test_server_restart_keeps_the_compose_box(browser, tmp_path):
    """After a server restart (the page's event queue is gone: BAD_EVENT_QUEUE_ID), does the page
    register again by itself, keep what was typed in the compose box, and show new messages
    without a reload?"""
    from .browser import Watched

    site = Site(tmp_path / "instance")
    try:
        context = browser.new_context(viewport=DESKTOP)
        watched = Watched(context.new_page())
        page = watched.page
        page.goto(site.url + "/")
        page.get_by_label("Email").fill(site.server.email)
        page.get_by_label("Password").fill(site.owner_password)
        page.get_by_role("button", name="Log in").click()
        open_topic(page, "general", "restart", site)
        page.get_by_role("textbox", name="Message").fill("typed before the restart")
        port = site.server.port
        site.server.stop()
        site.server = type(site.server)(tmp_path / "instance", port=port)
        site.api("POST", "messages", type="stream", to="general", topic="restart", content="after the restart")
        expect(page.get_by_role("article").filter(has_text="after the restart")).to_have_count(1, timeout=40_000)
        expect(page.get_by_role("textbox", name="Message")).to_have_value("typed before the restart")
        # While the server was down the page's requests failed; nothing else may have.
        unexpected = [e for e in watched.errors if "ERR_CONNECTION_REFUSED" not in e and "Failed to load" not in e
                      and "BAD_EVENT_QUEUE_ID" not in e and "/json/events" not in e]
        assert unexpected == [], watched.errors
        context.close()
    finally:
        site.stop()
