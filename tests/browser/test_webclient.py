"""End to end: the web client at `/` in Chromium (Playwright), against a real `serve`.

Each test answers one question about what a person sees and does in the browser; every page is
watched for console errors, uncaught exceptions and dialogs, and none may occur."""

import re
import time
from urllib.parse import unquote

import requests

import pytest

pytest.importorskip("playwright", reason="the browser tests need the test extra's playwright")

from playwright.sync_api import expect  # noqa: E402

expect.set_options(timeout=10_000)

from ..support.browser import DESKTOP, PASSWORD, PHONE, Site, Watched, browser, pages, shot, sign_in, arrives_while_fetching, on_page_until  # noqa: E402,F401 (fixtures)

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


def test_a_message_arriving_while_a_view_loads_is_shown(pages, site):
    """A view's messages are fetched when it opens. If a message of that view arrives (its event)
    while the fetch is still under way, and the fetch's answer was made before the message
    existed, is the message shown once the view has loaded, not lost until a reload?"""
    alice = pages(ALICE)
    expect(channel_link(alice, "design")).to_be_visible()
    text = "Sent while the view was loading"
    arrives_while_fetching(
        alice, "**/json/messages?**", lambda request: request.method == "GET",
        start=lambda: channel_link(alice, "design").click(), text=text,
        post=lambda: site.api("POST", "messages", auth=site.bob[1], type="stream", to="design",
                              topic="mid-load", content=text))
    expect(alice.get_by_role("article").filter(has_text=text)).to_have_count(1)


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
    # Earlier tests of this module leave design messages unread for Bob when his page closed
    # before it said it had read them: start from none, so that the count is this test's own.
    site.api("POST", "mark_stream_as_read", auth=site.bob[1], stream_id=site.stream_id("design"))
    bob = pages(BOB)
    open_topic(bob, "general", "elsewhere", site)
    expect(channel_link(bob, "design")).to_have_accessible_name("design")
    ids = [site.api("POST", "messages", auth=site.alice[1], type="stream", to="design", topic="news",
                    content=f"news {n}")["id"] for n in range(2)]
    expect(channel_link(bob, "design")).to_have_accessible_name(re.compile(r"^design\s*2"))
    expect(bob).to_have_title(re.compile(r"^\(\d+\) "))
    bob.get_by_role("navigation", name="Views").get_by_role("link", name=re.compile("^Inbox")).click()
    expect(bob.get_by_role("link", name=re.compile(r"^#design > news\s*2"))).to_be_visible()
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
    # exact: a channel's view also has a "Channel settings" button
    phone.get_by_role("button", name="Settings", exact=True).click()
    expect(phone.get_by_role("dialog", name="Settings")).to_be_visible()
    shot(phone, "settings-phone-dark")
    desktop = pages(ALICE, viewport=DESKTOP)
    desktop.get_by_role("button", name="Settings").click()
    desktop.get_by_role("dialog", name="Settings").get_by_role("tab", name="Channels", exact=True).click()
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
    site = Site(tmp_path / "instance")
    try:
        watched = sign_in(browser, site, site.server.email, site.owner_password)
        page, context = watched.page, watched.page.context
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


def test_compose_autocomplete_preview_and_uploads(pages, site, tmp_path):
    """Does the compose box complete @-mentions, #-channels and :emoji: names, show a rendered
    preview, add Shift+Enter newlines, and upload a file chosen with the picker, pasted or dropped,
    linking it in the message?"""
    alice = pages(ALICE)
    open_topic(alice, "general", "compose", site)
    box = alice.get_by_role("textbox", name="Message")
    suggestions = alice.get_by_role("listbox", name="Suggestions")
    box.press_sequentially("Hi @Bo")
    suggestions.get_by_role("option", name=re.compile("Bob Builder")).wait_for()
    box.press("Enter")
    box.press_sequentially("see #des")
    suggestions.get_by_role("option", name=re.compile("#design")).wait_for()
    box.press("Tab")
    box.press_sequentially(":octop")
    suggestions.get_by_role("option", name=re.compile(":octopus:")).first.wait_for()
    box.press("Enter")
    expect(box).to_have_value("Hi @**Bob Builder** see #**design** :octopus: ")
    box.press("Shift+Enter")
    box.press_sequentially("**second line**")
    alice.get_by_role("button", name="Preview").click()
    preview = alice.get_by_role("region", name="Preview")
    expect(preview.locator("strong")).to_have_text("second line")
    expect(preview.locator(".user-mention")).to_contain_text("Bob Builder")
    alice.get_by_role("button", name="Write").click()
    report = tmp_path / "report.txt"
    report.write_text("quarterly numbers")
    alice.locator("form.compose input[type=file]").set_input_files(str(report))
    expect(box).to_have_value(re.compile(r"\[report\.txt\]\(/user_uploads/\d+/.+/report\.txt\)"))
    alice.evaluate("""() => {
        const data = new DataTransfer();
        data.items.add(new File(["pasted bytes"], "pasted.txt", {type: "text/plain"}));
        document.querySelector("textarea[aria-label=Message]").dispatchEvent(
            new ClipboardEvent("paste", {clipboardData: data, bubbles: true, cancelable: true}));
    }""")
    expect(box).to_have_value(re.compile(r"\[pasted\.txt\]\(/user_uploads/"))
    dropped = alice.evaluate_handle("""() => {
        const data = new DataTransfer();
        data.items.add(new File(["dropped bytes"], "dropped.txt", {type: "text/plain"}));
        return data;
    }""")
    alice.dispatch_event("form.compose", "drop", {"dataTransfer": dropped})
    expect(box).to_have_value(re.compile(r"\[dropped\.txt\]\(/user_uploads/"))
    shot(alice, "compose-desktop")
    box.press("Enter")
    sent = alice.get_by_role("article").filter(has_text="second line")
    expect(sent.get_by_role("link", name="report.txt")).to_be_visible()
    expect(sent.locator(".user-mention")).to_contain_text("Bob Builder")
    expect(sent.locator("span.emoji")).to_have_text("\U0001f419")  # the glyph, not ":octopus:"


def test_keyboard_shortcuts(pages, site):
    """Do Zulip's shortcuts work: / to Search, Esc out of it, j/k to move between messages, r to
    reply to the selected one (Message box aimed at its topic), c for a new topic, x for a direct
    message?"""
    for n in range(3):
        site.api("POST", "messages", auth=site.bob[1], type="stream", to="general", topic=f"keys {n}",
                 content=f"shortcut {n}")
    alice = pages(ALICE, at=f"#narrow/channel/{site.stream_id('general')}-general")  # not the combined feed first
    expect(alice.get_by_role("article").filter(has_text="shortcut 2")).to_be_visible()
    alice.keyboard.press("/")
    expect(alice.get_by_role("textbox", name="Search")).to_be_focused()
    alice.keyboard.press("Escape")
    alice.keyboard.press("k")
    alice.keyboard.press("j")
    alice.keyboard.press("k")
    selected = alice.locator('[role="article"].selected')
    expect(selected).to_have_count(1)
    selected_text = selected.inner_text()
    alice.keyboard.press("r")
    expect(alice.get_by_role("textbox", name="Message")).to_be_focused()
    topic = re.search(r"shortcut (\d)", selected_text)
    if topic:
        expect(alice.get_by_role("textbox", name="Topic")).to_have_value(f"keys {topic.group(1)}")
    alice.keyboard.press("Escape")
    alice.keyboard.press("c")
    expect(alice.get_by_role("textbox", name="Topic")).to_be_focused()
    expect(alice.get_by_role("textbox", name="Topic")).to_have_value("")
    alice.keyboard.press("Escape")
    alice.keyboard.press("x")
    expect(alice.get_by_role("textbox", name="To")).to_be_focused()


def test_settings_channels_password_key_and_bots(pages, site):
    """From Settings, can a person create a channel (it appears in Channels), change their
    password (the new one signs in), see their API key and download a zuliprc, and create a bot
    with its own zuliprc?"""
    carol_email, _auth, _id = site.person("carol@example.com", "Carol Singer")
    carol = pages(carol_email)
    carol.get_by_role("button", name="Browse channels").click()
    settings = carol.get_by_role("dialog", name="Settings")
    settings.get_by_role("textbox", name="Channel name").fill("carols")
    settings.get_by_role("button", name="Create channel").click()
    expect(settings.get_by_role("button", name="Unsubscribe from carols")).to_be_visible()
    expect(channel_link(carol, "carols")).to_have_count(1)
    settings.get_by_role("tab", name="Account and API key").click()
    settings.get_by_label("Old password").fill(PASSWORD)
    settings.get_by_label("New password").fill("carol's new password")
    settings.get_by_role("button", name="Change password").click()
    expect(carol.get_by_text("Password changed.")).to_be_visible()
    site.api("POST", "fetch_api_key", username=carol_email, password="carol's new password")
    settings.get_by_label("Password", exact=True).fill("carol's new password")
    settings.get_by_role("button", name="Show API key").click()
    with carol.expect_download() as download:
        settings.get_by_role("button", name="Download zuliprc", exact=True).click()
    text = open(download.value.path()).read()
    assert f"email={carol_email}" in text and f"site={site.url}" in text
    key = re.search(r"key=(\w+)", text).group(1)
    assert site.api("GET", "users/me", auth=(carol_email, key))["email"] == carol_email
    settings.get_by_role("tab", name="Bots").click()
    settings.get_by_label("Bot name").fill("Carol's helper")
    settings.get_by_label(re.compile("Short name")).fill("carolhelper")
    settings.get_by_role("button", name="Create bot").click()
    with carol.expect_download() as download:
        settings.get_by_role("button", name="Download zuliprc", exact=True).click()
    bot_rc = open(download.value.path()).read()
    bot_email = re.search(r"email=(\S+)", bot_rc).group(1)
    bot_key = re.search(r"key=(\w+)", bot_rc).group(1)
    assert bot_email.startswith("carolhelper")
    assert site.api("GET", "users/me", auth=(bot_email, bot_key))["is_bot"] is True
    with carol.expect_download() as download:  # the bot is listed with its own zuliprc, too
        settings.get_by_role("button", name="Download zuliprc of Carol's helper").click()
    assert open(download.value.path()).read() == bot_rc
    shot(carol, "settings-bots-desktop")


def test_admin_changes_a_role_and_deactivates(browser, site):
    """Can the owner, in Settings > Users, change a member's role and deactivate them, as the API
    then reports?"""
    dave_email, dave_auth, dave_id = site.person("dave@example.com", "Dave Null")
    watched = sign_in(browser, site, site.server.email, site.owner_password)
    page, context = watched.page, watched.page.context
    page.get_by_role("button", name="Settings").click()
    settings = page.get_by_role("dialog", name="Settings")
    settings.get_by_role("tab", name="Users", exact=True).click()
    settings.get_by_role("combobox", name="Role of Dave Null").select_option("Moderator")
    expect(page.get_by_text("Role changed.")).to_be_visible()
    assert site.api("GET", f"users/{dave_id}")["user"]["role"] == 300
    settings.get_by_role("row", name=re.compile("Dave Null")).get_by_role("button", name="Deactivate").click()
    page.get_by_role("alertdialog", name="Deactivate Dave Null?").get_by_role("button", name="Deactivate").click()
    expect(page.get_by_text("User deactivated.")).to_be_visible()
    assert site.api("GET", f"users/{dave_id}")["user"]["is_active"] is False
    shot(page, "settings-users-desktop")
    context.close()
    assert watched.errors == []


def test_message_actions_and_views(pages, site):
    """Do the message actions work from the page: star (the message then shows under Starred
    messages), quote and reply (the quote lands in the Message box), move the topic, view the
    edit history, delete; and does scrolling up in a long topic load older messages?"""
    # More than the view's opening page (50 either side) plus the older pages it may fetch at once
    # while the top of a short page is near (50, then 400): some must wait for the scroll.
    total = 520
    for n in range(total):
        site.api("POST", "messages", auth=site.bob[1], type="stream", to="design", topic="long", content=f"line {n}")
    site.api("POST", "mark_all_as_read", auth=site.alice[1])  # so the topic opens at its newest message
    alice = pages(ALICE)
    open_topic(alice, "design", "long", site)
    articles = alice.get_by_role("article")
    last_line = f"line {total - 1}"
    expect(articles.filter(has_text=last_line)).to_be_visible()
    loaded = articles.count()
    info = alice.evaluate("""() => { const f = document.querySelector(".feed"); return [f.scrollTop, f.scrollHeight, f.clientHeight, window.innerHeight, document.querySelectorAll("[role=article]").length, performance.getEntriesByType("resource").filter(e => e.name.includes("/messages")).map(e => e.name.replace(/.*anchor=/, "").slice(0, 60) + " @" + Math.round(e.startTime))]; }""")
    assert loaded < total, info
    # Scrolled to the top, as a reader keeps scrolling up: older messages must come, and above
    # the reader's place, which stays under their eyes. (The message at the top is drawn again
    # as the page grows, as the continuation of the one before it; when that lost the place, the
    # feed stayed at the top and fetched page after page, the whole history.)
    alice.wait_for_function("""(shown) => {
        if (document.querySelectorAll("[role=article]").length > shown) return true;
        const feed = document.querySelector(".feed");
        feed.scrollTop = 0;
        feed.dispatchEvent(new Event("scroll"));
        return false;
    }""", arg=loaded, polling=250, timeout=15_000)
    alice.wait_for_timeout(500)  # any further page would have been asked for by now
    assert alice.evaluate("document.querySelector('.feed').scrollTop") > 0
    expect(articles.filter(has_text="Bob Builder").first).to_be_visible()
    last = articles.filter(has_text=last_line)
    last.hover()
    last.get_by_role("button", name="Star").click()
    expect(last.get_by_role("button", name="Unstar")).to_be_visible()
    last.get_by_role("button", name="Message actions").click()
    alice.get_by_role("menuitem", name="Quote and reply").click()
    expect(alice.get_by_role("textbox", name="Message")).to_have_value(re.compile(f"```quote\n{last_line}\n```"))
    alice.get_by_role("textbox", name="Message").fill("")
    send(alice, "mine to move")
    mine = articles.filter(has_text="mine to move")
    mine.hover()
    mine.get_by_role("button", name="Message actions").click()
    alice.get_by_role("menuitem", name="Move topic").click()
    move = alice.get_by_role("dialog", name=re.compile("^Move topic"))
    move.get_by_role("textbox", name="New topic").fill("moved here")
    move.get_by_role("button", name="Confirm").click()
    # The whole topic moved, and the view followed it.
    expect(alice.get_by_role("heading", level=1)).to_have_text(re.compile("> moved here$"))
    moved = alice.get_by_role("article").filter(has_text="mine to move")
    expect(moved).to_contain_text("moved")
    moved.hover()
    moved.get_by_role("button", name="Message actions").click()
    alice.get_by_role("menuitem", name="View edit history").click()
    history = alice.get_by_role("dialog", name="Edit history")
    expect(history).to_contain_text("long \u2192 moved here")
    history.get_by_role("button", name="Close").click()
    moved.hover()
    moved.get_by_role("button", name="Message actions").click()
    alice.get_by_role("menuitem", name="Delete message").click()
    alice.get_by_role("alertdialog").get_by_role("button", name="Delete").click()
    expect(alice.get_by_role("article").filter(has_text="mine to move")).to_have_count(0)
    alice.get_by_role("navigation", name="Views").get_by_role("link", name="Starred messages").click()
    expect(alice.get_by_role("article")).to_have_count(1)
    expect(alice.get_by_role("article")).to_contain_text(last_line)


def test_desktop_notification_for_a_direct_message(pages, site):
    """Once notifications are allowed, does a direct message arriving while the page is in the
    background raise a desktop notification naming the sender, and a channel message without a
    mention raise none?"""
    bob = pages(BOB)
    bob.context.grant_permissions(["notifications"], origin=site.url)
    bob.evaluate("""() => {
        window.__notes = [];
        window.Notification = class { constructor(title, options) { window.__notes.push([title, options.body]); }
                                       static get permission() { return "granted"; } };
        document.hasFocus = () => false;  // the page is in the background
    }""")
    site.api("POST", "messages", auth=site.alice[1], type="stream", to="general", topic="quiet", content="no ping")
    site.api("POST", "messages", auth=site.alice[1], type="direct", to=[site.bob[2]], content="ping for bob")
    bob.wait_for_timeout(200)
    expect(bob.get_by_role("navigation", name="Direct messages").get_by_role("link", name=re.compile("^Alice Liddell"))).to_be_visible()
    notes = bob.evaluate("window.__notes")
    assert notes == [["Alice Liddell", "ping for bob"]]


def test_log_out(browser, site):
    """Does Log out end the session: the sign-in form comes back, and stays after a reload? What
    was seen before is saved as read, and nothing the page asks for after it is refused (neither
    the waiting event poll nor the read flags)."""
    message_id = site.api("POST", "messages", auth=site.alice[1], type="stream", to="general",
                          topic="last words", content="seen just before leaving")["id"]
    watched = sign_in(browser, site, BOB, PASSWORD)
    page, context = watched.page, watched.page.context
    open_topic(page, "general", "last words", site)
    expect(page.get_by_role("article").filter(has_text="seen just before leaving")).to_be_visible()
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("button", name="Log in")).to_be_visible()
    page.reload()
    expect(page.get_by_role("button", name="Log in")).to_be_visible()
    assert [c for c in context.cookies() if c["name"] == "chat_appliance_session"] == []
    context.close()
    assert watched.errors == []
    assert "read" in site.api("GET", f"messages/{message_id}", auth=site.bob[1])["message"]["flags"]


def test_image_preview_and_uploaded_image_show(pages, site, tmp_path):
    """Does a link to an image get its preview in the page: /thumbnail (followed with the session
    cookie) redirecting to the image, which loads, with no console error?"""
    png = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                        "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e5270f8d0000000049454e44ae426082")
    path = tmp_path / "dot.png"
    path.write_bytes(png)
    with open(path, "rb") as handle:
        url = __import__("requests").post(f"{site.url}/api/v1/user_uploads", auth=site.bob[1],
                                          files={"file": ("dot.png", handle, "image/png")}, timeout=30).json()["url"]
    site.api("POST", "messages", auth=site.bob[1], type="stream", to="general", topic="pictures",
             content=f"{site.url}{url}")
    alice = pages(ALICE)
    open_topic(alice, "general", "pictures", site)
    image = alice.get_by_role("article").filter(has_text="Bob Builder").locator(".message_inline_image img").first
    expect(image).to_be_visible()
    alice.wait_for_function("() => [...document.querySelectorAll('[role=article] img')].every(i => i.complete)")
    assert image.evaluate("img => img.naturalWidth") == 1


def test_sign_up_from_an_invitation_link(browser, site):
    """Does an invitation link made in Settings > Invitations open a sign-up page at /join/<key>
    that creates the account from an email, a name and a password, signs the person in, and lets
    them chat with the inviter without a reload?"""
    owner = sign_in(browser, site, site.server.email, site.owner_password)
    page, context = owner.page, owner.page.context
    page.get_by_role("button", name="Settings").click()
    settings = page.get_by_role("dialog", name="Settings")
    settings.get_by_role("tab", name="Invitations").click()
    settings.get_by_role("button", name="Create invitation link").click()
    link = settings.get_by_role("textbox", name="Invitation link").input_value()
    assert "/join/" in link
    shot(page, "settings-invitations-desktop")
    settings.get_by_role("button", name="Close settings").click()
    open_topic(page, "general", "welcome", site)  # where the newcomer will write
    key = link.rsplit("/join/", 1)[1]
    newcomer_context = browser.new_context(viewport=PHONE)
    newcomer = Watched(newcomer_context.new_page())
    joining = newcomer.page
    joining.goto(f"{site.url}/join/{key}")
    joining.get_by_label("Email").fill("erin@example.com")
    joining.get_by_label("Full name").fill("Erin Newcomer")
    joining.get_by_label("Password").fill("erin's password")
    shot(joining, "join-phone")
    joining.get_by_role("button", name="Sign up").click()
    expect(joining.get_by_role("textbox", name="Message")).to_be_visible()
    assert site.api("POST", "fetch_api_key", username="erin@example.com", password="erin's password")["api_key"]
    open_topic(joining, "general", "welcome", site)
    send(joining, "hello from erin")
    expect(page.get_by_role("article").filter(has_text="hello from erin")).to_have_count(1)
    newcomer_context.close()
    context.close()
    assert owner.errors == [] and newcomer.errors == []


def test_join_page_refuses_a_bad_key(browser, site):
    """Does /join/<unknown key> say the link is not valid, without a sign-up form?"""
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.goto(f"{site.url}/join/not-a-real-key")
    expect(page.get_by_role("alert")).to_contain_text("invitation")
    expect(page.get_by_role("button", name="Sign up")).to_have_count(0)
    context.close()


def test_poll_and_todo_widgets(pages, site):
    """Does a /poll message show as a poll both people vote in and add options to, and a /todo
    message as a list whose tasks tick for the other person, live?"""
    alice, bob = pages(ALICE), pages(BOB)
    open_topic(alice, "design", "widgets", site)
    open_topic(bob, "design", "widgets", site)
    send(alice, "/poll Which colour?\nTeal\nOrange")
    poll = bob.get_by_role("article").filter(has_text="Which colour?")
    poll.get_by_role("button", name="Teal: 0 votes").click()
    theirs = alice.get_by_role("article").filter(has_text="Which colour?")
    expect(theirs.get_by_role("button", name="Teal: 1 vote")).to_be_visible()
    theirs.get_by_role("textbox", name="New option").fill("Grey")
    theirs.get_by_role("button", name="Add option").click()
    expect(poll.get_by_role("button", name="Grey: 0 votes")).to_be_visible()
    send(bob, "/todo Launch\nWrite notes: for the team\nShip")
    tasks = alice.get_by_role("article").filter(has_text="Launch")
    tasks.get_by_role("checkbox", name="Ship").check()
    expect(bob.get_by_role("article").filter(has_text="Launch").get_by_role("checkbox", name="Ship")).to_be_checked()
    shot(alice, "widgets-desktop")


def test_tex_typeset_and_uploaded_photo_thumbnail(pages, site):
    """Does a formula show as typeset maths (KaTeX's fonts loaded from the server), and an uploaded
    photo as its server-made thumbnail, in the other person's browser?"""
    import io

    import requests
    from PIL import Image

    alice_email, alice_auth, _ = site.alice
    photo = io.BytesIO()
    Image.new("RGB", (1680, 1120), (20, 120, 200)).save(photo, "JPEG")
    uploaded = requests.post(f"{site.url}/api/v1/user_uploads", auth=alice_auth, timeout=30,
                             files={"file": ("photo.jpg", photo.getvalue(), "image/jpeg")}).json()
    assert uploaded["result"] == "success", uploaded
    site.api("POST", "messages", auth=alice_auth, type="stream", to="design", topic="maths",
             content=f"Pythagoras: $$a^2 + b^2 = c^2$$ and [photo.jpg]({uploaded['url']})")
    bob = pages(BOB)
    open_topic(bob, "design", "maths", site)
    message = bob.get_by_role("article").filter(has_text="Pythagoras")
    formula = message.locator(".katex-html").first
    expect(formula).to_be_visible()
    font = formula.locator(".mord.mathnormal").first.evaluate("el => getComputedStyle(el).fontFamily")
    assert "KaTeX_Math" in font
    # The page fetches the font when text first needs it: wait until the fonts being fetched are
    # in, then ask for a KaTeX_Math face that loaded (one that failed, or none at all, fails).
    assert bob.evaluate("""document.fonts.ready.then(() => [...document.fonts].some(
        face => face.family.replace(/["']/g, '') === 'KaTeX_Math' && face.status === 'loaded'))""")
    thumb = message.locator(".message_inline_image img")
    expect(thumb).to_have_attribute("src", re.compile(r"^/user_uploads/thumbnail/.+/840x560\.webp$"))
    expect(thumb).to_have_attribute("data-original-dimensions", "1680x1120")
    bob.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=thumb.element_handle())
    assert thumb.evaluate("img => img.naturalWidth") == 840
    shot(bob, "tex-and-thumbnail-desktop")


def test_leaving_the_page_deletes_its_event_queue(pages, site):
    """When a tab is reloaded (or closed, or leaves for another page), does the queue the page
    registered go away at once, as Zulip's web app deletes its own, instead of collecting every
    event until the idle collection ends it minutes later? The new page's queue keeps working."""
    polled = []
    alice = pages(ALICE)
    alice.on("request", lambda request: "/json/events?" in request.url and polled.append(request.url))
    # The page may have started its first poll before the listener was there (a long poll, seen
    # again only when it ends): a load with the listener in place shows its queue for certain.
    alice.reload()
    alice.get_by_role("textbox", name="Message").wait_for()
    assert on_page_until(alice, lambda: polled, timeout=10)
    first_queue = unquote(re.search(r"queue_id=([^&]+)", polled[0]).group(1))

    def queue_answers(queue_id):
        response = requests.get(f"{site.url}/api/v1/events", auth=site.alice[1], timeout=10,
                                params={"queue_id": queue_id, "last_event_id": -1, "dont_block": "true"})
        return response.json().get("code") != "BAD_EVENT_QUEUE_ID"

    assert queue_answers(first_queue)
    alice.reload()
    alice.get_by_role("textbox", name="Message").wait_for()
    assert on_page_until(alice, lambda: not queue_answers(first_queue))

    def queues_polled():
        return [unquote(re.search(r"queue_id=([^&]+)", url).group(1)) for url in polled]

    # The new page's first poll can come a moment after its box is shown.
    assert on_page_until(alice, lambda: queues_polled()[-1] != first_queue, timeout=10)
    assert queue_answers(queues_polled()[-1])
