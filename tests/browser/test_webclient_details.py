"""End to end, in Chromium against a real `serve`: the sign-in page's wait after too many wrong
passwords, the compose box's recipient fields in every view, emoji drawn with the font served
with the client, and the theme following the system. Each scenario runs at desktop and at phone
width; elements are found by role and accessible name; axe-core checks each new screen (no
serious or critical violation) and a screenshot of each goes to the test's temporary folder."""

import re
import time

import pytest
import requests

pytest.importorskip("playwright", reason="the browser tests need the test extra's playwright")

from playwright.sync_api import expect  # noqa: E402

from ..support.browser import DESKTOP, PHONE, Site, axe_violations, browser, pages  # noqa: E402,F401 (fixtures)

expect.set_options(timeout=15_000)

ALICE = "alice@example.com"
WIDTHS = {"desktop": DESKTOP, "phone": PHONE}
EMOJI_FAMILY = "Noto Color Emoji (chat-appliance)"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    running = Site(tmp_path_factory.mktemp("webclient-details") / "instance")
    running.alice = running.person(ALICE, "Alice Liddell")
    running.bob = running.person("bob@example.com", "Bob Builder")
    running.api("POST", "users/me/subscriptions", subscriptions=[{"name": "sealife"}], principals=[running.server.email, ALICE])
    yield running
    running.stop()


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    """A second server with Zulip's rate limits on (the other runs without them, as load tests do):
    5 failed sign-ins per account in 30 minutes."""
    running = Site(tmp_path_factory.mktemp("webclient-limited") / "instance", rate_limiting=True)
    yield running
    running.stop()


def serious(page, include=None):
    """axe-core's serious and critical violations on the page (or within `include`)."""
    return [v for v in axe_violations(page, include) if "(serious)" in v or "(critical)" in v]


# --- sign-in: how long to wait ------------------------------------------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_sign_in_after_too_many_wrong_passwords_says_how_long_to_wait(browser, limited, tmp_path, width):
    """After five wrong passwords, does the sign-in page say "Too many sign-in attempts. Try again
    in ..." with the number of seconds the server's RATE_LIMIT_HIT answer gave (its retry-after
    field and Retry-After header), instead of "API usage exceeded rate limit"; is that number what
    the server still asks a moment later, give or take the seconds between; and does the right
    password then get the same answer?"""
    email, _auth, _user_id = limited.person(f"locked-{width}@example.com", "Locked Out")
    context = browser.new_context(viewport=WIDTHS[width])
    try:
        page = context.new_page()
        page.goto(limited.url + "/")
        alert = page.get_by_role("alert")

        def sign_in(password):
            page.get_by_label("Email").fill(email)
            page.get_by_label("Password").fill(password)
            with page.expect_response(lambda response: response.url.endswith("/accounts/login")) as answer:
                page.get_by_role("button", name="Log in").click()
            expect(page.get_by_role("button", name="Log in")).to_be_enabled()
            return answer.value

        for _ in range(5):
            assert sign_in("not the password").status == 401
            expect(alert).to_have_text("Your username or password is incorrect")
        refused = sign_in("not the password either")
        assert refused.status == 429
        body = refused.json()
        assert body["code"] == "RATE_LIMIT_HIT"
        wait = body["retry-after"]
        assert refused.headers["retry-after"] == str(wait)
        assert 1700 < wait <= 1800  # the 30-minute window, less the seconds the attempts took
        expect(alert).to_have_text(f"Too many sign-in attempts. Try again in 30 minutes ({wait} seconds).")
        page.screenshot(path=str(tmp_path / f"sign-in-wait-{width}.png"))
        assert serious(page) == []

        asked_at = time.monotonic()
        server = requests.post(f"{limited.url}/api/v1/fetch_api_key", data={"username": email, "password": "x"},
                               timeout=30)
        assert server.status_code == 429 and server.json()["code"] == "RATE_LIMIT_HIT"
        assert 0 <= wait - server.json()["retry-after"] <= 2 + (time.monotonic() - asked_at)

        # The lock holds for the right password too, with the time left.
        again = sign_in("a long enough password")
        assert again.status == 429
        left = again.json()["retry-after"]
        assert left <= wait
        expect(alert).to_have_text(re.compile(rf"^Too many sign-in attempts\. Try again in \d+ minutes \({left} seconds\)\.$"))
    finally:
        context.close()


# --- compose: the fields of the conversation type ---------------------------------------------


def expect_fields(page, kind):
    """The compose box shows the channel and its Topic (kind "channel") or the To box (kind
    "people"), never both kinds."""
    channel = page.get_by_role("combobox", name="Channel", exact=True)
    topic = page.get_by_role("textbox", name="Topic", exact=True)
    to = page.get_by_role("textbox", name="To", exact=True)
    shown, hidden = ([channel, topic], [to]) if kind == "channel" else ([to], [channel, topic])
    for field in shown:
        expect(field).to_be_visible()
    for field in hidden:
        expect(field).to_be_hidden()


def open_directly(page, url):
    """Load `url` as a new page (not a hash change in the page already there)."""
    page.goto("about:blank")
    page.goto(url)
    expect(page.get_by_role("textbox", name="Message")).to_be_visible()
    page.locator("body[data-shortcuts=ready]").wait_for(state="attached")


@pytest.mark.parametrize("width", WIDTHS)
def test_compose_shows_only_the_fields_of_the_conversation_type(pages, site, tmp_path, width):
    """Does the compose box show the channel and "Topic" when aimed at a channel, and only "To"
    when aimed at people, whichever view is opened by its URL (Combined feed, Inbox, Recent
    conversations, Drafts, Scheduled messages, a channel, a topic, a direct message), after "c"
    (new topic) and "x" (new direct message) in each, and after opening a conversation from
    Inbox and Recent conversations?"""
    topic = f"fields {width}"
    site.api("POST", "messages", auth=site.bob[1], type="stream", to="sealife", topic=topic, content="unread here")
    site.api("POST", "messages", auth=site.bob[1], type="direct", to=[site.alice[2]], content=f"psst {width}")
    sealife = site.stream_id("sealife")
    page = pages(ALICE, viewport=WIDTHS[width])
    views = {
        "#feed": "channel", "#inbox": "channel", "#recent": "channel", "#drafts": "channel", "#scheduled": "channel",
        f"#narrow/channel/{sealife}-sealife": "channel",
        f"#narrow/channel/{sealife}-sealife/topic/{topic.replace(' ', '.20')}": "channel",
        f"#narrow/dm/{site.bob[2]}-Bob-Builder": "people",
    }
    for hash_, kind in views.items():
        open_directly(page, f"{site.url}/{hash_}")
        expect_fields(page, kind)
        name = re.sub(r"\W+", "-", hash_.strip("#"))[:40]
        page.screenshot(path=str(tmp_path / f"compose-{name}-{width}.png"))
        if hash_ in ("#inbox", "#recent") or kind == "people":
            assert serious(page) == [], hash_
        page.keyboard.press("Escape")
        page.keyboard.press("x")
        expect_fields(page, "people")
        expect(page.get_by_role("textbox", name="To", exact=True)).to_be_focused()
        page.keyboard.press("Escape")
        page.keyboard.press("c")
        expect_fields(page, "channel")
        expect(page.get_by_role("textbox", name="Topic", exact=True)).to_be_focused()

    # Opening a conversation from the list views aims the box at it.
    open_directly(page, f"{site.url}/#recent")
    page.get_by_role("table", name="Recent conversations").get_by_role("link", name="Bob Builder").first.click()
    expect_fields(page, "people")
    # (the views above read the first messages: a new one, for the Inbox to list)
    site.api("POST", "messages", auth=site.bob[1], type="stream", to="sealife", topic=f"{topic} again", content="unread")
    open_directly(page, f"{site.url}/#inbox")
    page.keyboard.press("x")
    expect_fields(page, "people")
    page.get_by_role("link", name=f"#sealife > {topic} again").click()
    expect_fields(page, "channel")
    expect(page.get_by_role("textbox", name="Topic", exact=True)).to_have_value(f"{topic} again")


# --- emoji: drawn with the served font --------------------------------------------------------


def fonts_drawing(page, locator):
    """The fonts Chromium drew `locator`'s element's text with, its user-agent shadow tree's too (a
    text box's value is there), from DevTools' CSS.getPlatformFontsForNode: [(family, whether a
    web font)]."""
    locator.evaluate("(el) => el.setAttribute('data-font-probe', '')")
    session = page.context.new_cdp_session(page)
    try:
        session.send("DOM.enable")
        session.send("CSS.enable")
        root = session.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
        node = session.send("DOM.querySelector", {"nodeId": root, "selector": "[data-font-probe]"})["nodeId"]
        tree = session.send("DOM.describeNode", {"nodeId": node, "depth": -1, "pierce": True})["node"]
        inside, stack = [], list(tree.get("shadowRoots", []))
        while stack:
            current = stack.pop()
            inside.append(current["backendNodeId"])
            stack.extend(current.get("children", []))
        nodes = [node, *session.send("DOM.pushNodesByBackendIdsToFrontend", {"backendNodeIds": inside})["nodeIds"]]
        found = [font for each in nodes for font in session.send("CSS.getPlatformFontsForNode", {"nodeId": each})["fonts"]]
    finally:
        locator.evaluate("(el) => el.removeAttribute('data-font-probe')")
        session.detach()
    return [(font["familyName"], font["isCustomFont"]) for font in found]


SERVED = ("Noto Color Emoji", True)  # the served font's own name, and a web font


def drawn_with(page, locator, done, timeout=10):
    """Wait until the fonts `locator`'s text is drawn with satisfy `done` (a part of the emoji font
    swaps in once it has arrived); returns those fonts."""
    deadline = time.monotonic() + timeout
    while True:
        found = sorted(set(fonts_drawing(page, locator)))
        if done(found) or time.monotonic() > deadline:
            return found
        page.wait_for_timeout(100)


only_served = lambda found: found == [SERVED]  # noqa: E731
served_too = lambda found: SERVED in found  # noqa: E731 (text beside the emoji has a text font)


@pytest.mark.parametrize("width", WIDTHS)
def test_emoji_are_drawn_with_the_font_served_with_the_client(pages, site, tmp_path, width):
    """On a machine without an emoji font (this one has none), is an emoji in a message, in a
    reaction, in the emoji picker and in the compose box drawn with the Noto Color Emoji served
    with the client (a web font, not a system font), its parts fetched from the server with 200
    font/woff2 and kept a year, and only the parts the page needs?"""
    topic = f"emoji {width}"
    sent = site.api("POST", "messages", auth=site.bob[1], type="stream", to="sealife", topic=topic,
                    content=f"An octopus :octopus: waves on the {width}")["id"]
    site.api("POST", f"messages/{sent}/reactions", auth=site.bob[1], emoji_name="octopus")
    page = pages(ALICE, viewport=WIDTHS[width],
                 at=f"#narrow/channel/{site.stream_id('sealife')}-sealife/topic/{topic.replace(' ', '.20')}")
    # The other width's message says "on the desktop" (or "phone"): the topic's view shows only this one.
    message = page.get_by_role("article").filter(has_text=f"waves on the {width}")
    emoji = message.get_by_role("img", name="octopus")
    expect(emoji).to_have_text("\U0001F419")
    assert drawn_with(page, emoji, only_served) == [SERVED]
    assert page.evaluate("(family) => [...document.fonts].some((face) => face.family === family && face.status === 'loaded')",
                         EMOJI_FAMILY)
    # (the reaction's count is text, drawn by a text font)
    reaction = message.get_by_role("button", name="octopus: 1")
    assert SERVED in drawn_with(page, reaction, served_too)
    page.screenshot(path=str(tmp_path / f"emoji-message-{width}.png"))

    # The parts came from the server; none is the flags' part (no flag on the page).
    loaded = page.evaluate("""() => performance.getEntriesByType('resource')
        .filter((entry) => entry.name.includes('/static/webclient/fonts/'))
        .map((entry) => [new URL(entry.name).pathname, entry.responseStatus])""")
    assert loaded and all(status == 200 for _path, status in loaded), loaded
    assert not any(path.endswith("/noto-color-emoji-0.woff2") for path, _status in loaded)
    for path, _status in loaded:
        served = requests.get(site.url + path, timeout=30)
        assert served.status_code == 200
        assert served.headers["Content-Type"] == "font/woff2"
        assert served.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert served.content[:4] == b"wOF2"

    box = page.get_by_role("textbox", name="Message")
    box.fill("\U0001F680 launch")
    assert SERVED in drawn_with(page, box, served_too)

    page.get_by_role("button", name="Add emoji").click()
    picker = page.get_by_role("dialog", name="Emoji picker")
    option = picker.get_by_role("option", name="octopus", exact=True)
    expect(option).to_be_visible()
    assert drawn_with(page, option, only_served) == [SERVED]
    page.screenshot(path=str(tmp_path / f"emoji-picker-{width}.png"))
    assert serious(page) == []
    page.keyboard.press("Escape")
    box.fill("")


# --- theme: one palette per theme, Automatic follows the system ------------------------------


@pytest.mark.parametrize("width", WIDTHS)
def test_automatic_theme_follows_the_system_as_it_changes(browser, pages, site, tmp_path, width):
    """With the theme on Automatic, do the page's colours follow the system's light or dark
    scheme, also when it changes while the page is open; does Dark stay dark whatever the system
    says; and does the sign-in page take the system's scheme?"""
    page = pages(ALICE, viewport=WIDTHS[width], color_scheme="light")
    background = lambda: page.evaluate("getComputedStyle(document.body).backgroundColor")  # noqa: E731
    light = background()
    page.emulate_media(color_scheme="dark")
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    dark = background()
    assert dark != light
    page.screenshot(path=str(tmp_path / f"automatic-dark-{width}.png"))
    assert serious(page) == []
    page.emulate_media(color_scheme="light")
    expect(page.locator("html")).to_have_attribute("data-theme", "light")
    assert background() == light

    site.api("PATCH", "settings", auth=site.alice[1], color_scheme=2)
    try:
        expect(page.locator("html")).to_have_attribute("data-theme", "dark")
        page.emulate_media(color_scheme="light")
        page.reload()
        expect(page.get_by_role("textbox", name="Message")).to_be_visible()
        expect(page.locator("html")).to_have_attribute("data-theme", "dark")
        assert background() == dark
    finally:
        site.api("PATCH", "settings", auth=site.alice[1], color_scheme=1)

    context = browser.new_context(viewport=WIDTHS[width], color_scheme="dark")
    try:
        signed_out = context.new_page()
        signed_out.goto(site.url + "/")
        expect(signed_out.get_by_role("button", name="Log in")).to_be_visible()
        assert signed_out.evaluate("getComputedStyle(document.body).backgroundColor") == dark
        signed_out.screenshot(path=str(tmp_path / f"sign-in-dark-{width}.png"))
        assert serious(signed_out) == []
    finally:
        context.close()
