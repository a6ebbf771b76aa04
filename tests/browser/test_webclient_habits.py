"""End to end: the daily habits of a Zulip user in the web client (Chromium through
Playwright, against a real `serve`): links and images, reading (mark read and unread, Recent
conversations, Drafts, muting), writing (people pills, topic suggestions, emoji picker, status),
keyboard shortcuts, notifications, the phone layout, and a long channel that stays light.

Every page is watched for console errors, uncaught exceptions and dialogs; none may occur."""

import re
import time

import pytest
import requests

pytest.importorskip("playwright", reason="the browser tests need the test extra's playwright")

from playwright.sync_api import expect  # noqa: E402

expect.set_options(timeout=10_000)

from ..support.browser import PHONE, Site, browser, pages, settled, shot, arrives_while_fetching, on_page_until  # noqa: E402,F401 (fixtures)

ALICE, BOB, CAROL = "alice@example.com", "bob@example.com", "carol@example.com"
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e5270f8d0000000049454e44ae426082")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    running = Site(tmp_path_factory.mktemp("habits") / "instance")
    running.alice = running.person(ALICE, "Alice Liddell")
    running.bob = running.person(BOB, "Bob Builder")
    running.carol = running.person(CAROL, "Carol Danvers")
    running.api("POST", "users/me/subscriptions", subscriptions=[{"name": "design"}, {"name": "ops"}],
                principals=[ALICE, BOB, CAROL, running.server.email])
    yield running
    running.stop()


def upload(site, auth, name, data):
    response = requests.post(f"{site.url}/api/v1/user_uploads", auth=auth, files={"file": (name, data)}, timeout=30)
    return response.json()["url"]


def post(site, auth, stream, topic, content):
    return site.api("POST", "messages", auth=auth, type="stream", to=stream, topic=topic, content=content)["id"]


def open_topic(page, site, channel, topic):
    page.goto(f"{site.url}/#narrow/channel/{site.stream_id(channel)}-{channel}/topic/{topic}")
    expect(page.get_by_role("textbox", name="Topic")).to_have_value(topic)


def views(page):
    return page.get_by_role("navigation", name="Views")


def channel_link(page, name):
    return page.get_by_role("navigation", name="Channels").get_by_role("link", name=re.compile(f"^{re.escape(name)}"))


def eventually(check, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(0.2)


def test_links_open_in_a_new_tab_and_deep_links_stay(pages, site):
    """Does a URL in a message open in a new tab (target _blank, rel noopener noreferrer), an
    uploaded file too, while a link to a conversation in this chat stays in the app?"""
    general = site.stream_id("general")
    post(site, site.bob[1], "general", "links",
         f"see https://example.com/page and [the thread]({site.url}/#narrow/channel/{general}-general/topic/links)"
         " and [notes](/user_uploads/1/ab/notes.txt)")
    alice = pages(ALICE)
    open_topic(alice, site, "general", "links")
    article = alice.get_by_role("article").filter(has_text="see https")
    outside = article.get_by_role("link", name="https://example.com/page")
    expect(outside).to_have_attribute("target", "_blank")
    expect(outside).to_have_attribute("rel", "noopener noreferrer")
    expect(article.get_by_role("link", name="notes")).to_have_attribute("target", "_blank")
    inside = article.get_by_role("link", name="the thread")
    assert inside.get_attribute("target") is None
    inside.click()
    expect(alice).to_have_url(re.compile(r"#narrow/channel/\d+-general/topic/links$"))


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_login_page(browser, site, scheme):
    """Does axe-core find no violation on the sign-in page, in light and in dark colours?"""
    from ..support.browser import axe_violations

    context = browser.new_context(color_scheme=scheme)
    page = context.new_page()
    page.goto(site.url + "/")
    page.get_by_role("button", name="Log in").wait_for()
    assert axe_violations(page) == []
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_main_view_settings_and_dialogs(pages, site, scheme):
    """Does axe-core find no violation on the main view, Recent conversations, Drafts, settings
    and each dialog this client opens, in light and in dark colours (the client follows
    prefers-color-scheme)?"""
    from ..support.browser import axe_violations

    post(site, site.bob[1], "general", "axe", "Hello **axe**, see https://example.com")
    alice = pages(ALICE, color_scheme=scheme)
    assert alice.evaluate("() => matchMedia('(prefers-color-scheme: dark)').matches") == (scheme == "dark")
    open_topic(alice, site, "general", "axe")
    expect(alice.get_by_role("article").filter(has_text="Hello axe").last).to_be_visible()
    assert axe_violations(alice) == []
    views(alice).get_by_role("link", name="Recent conversations").click()
    expect(alice.get_by_role("table", name="Recent conversations")).to_be_visible()
    assert axe_violations(alice) == []
    views(alice).get_by_role("link", name="Drafts").click()
    expect(alice.get_by_role("heading", name="Drafts")).to_be_visible()
    assert axe_violations(alice) == []
    alice.get_by_role("button", name="Settings").click()
    settings = alice.get_by_role("dialog", name="Settings")
    expect(settings).to_be_visible()
    for tab in [b.inner_text() for b in settings.get_by_role("tablist").get_by_role("tab").all()]:
        settings.get_by_role("tablist").get_by_role("tab", name=tab, exact=True).click()
        settled(alice)
        assert axe_violations(alice, "dialog[open]") == [], tab
    alice.keyboard.press("Escape")
    for name, opener in DIALOGS:
        opener(alice, site)
        dialog = alice.get_by_role("dialog", name=name)
        expect(dialog).to_be_visible()
        assert axe_violations(alice, "dialog[open]") == [], name
        alice.keyboard.press("Escape")
        expect(dialog).to_have_count(0)


def _open_shortcuts(page, site):
    page.locator("body").press("?")


def _open_status(page, site):
    page.get_by_role("button", name="Set status").click()


def _open_image(page, site):
    url = upload(site, site.bob[1], "axe.png", PNG)
    post(site, site.bob[1], "general", "axe", f"{site.url}{url}")
    open_topic(page, site, "general", "axe")
    page.get_by_role("article").locator(".message_inline_image img").last.click()


# (dialog name, how to open it): add the dialogs of other features here.
DIALOGS = [
    ("Keyboard shortcuts", _open_shortcuts),
    ("Set status", _open_status),
    ("Image", _open_image),
]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_message_actions_and_their_dialogs(pages, site, scheme):
    """Does axe-core find no violation in a message's actions menu and in the dialogs its items
    open: "Move topic" (its dialog: new channel and topic), "View edit history" and the confirmation
    of "Delete message" (each cancelled, so the message stays), in light and in dark colours?"""
    from ..support.browser import axe_violations

    topic = f"axe actions {scheme}"
    message_id = post(site, site.alice[1], "general", topic, "first words")
    site.api("PATCH", f"messages/{message_id}", auth=site.alice[1], content="second words")
    alice = pages(ALICE, color_scheme=scheme)
    open_topic(alice, site, "general", topic)
    article = alice.get_by_role("article").filter(has_text="second words")

    def open_item(item):
        article.hover()
        article.get_by_role("button", name="Message actions").click()
        expect(alice.get_by_role("menu", name="Message actions")).to_be_visible()
        alice.get_by_role("menuitem", name=item).click()

    article.hover()
    article.get_by_role("button", name="Message actions").click()
    expect(alice.get_by_role("menu", name="Message actions")).to_be_visible()
    assert axe_violations(alice, "#message-menu") == [], "Message actions"
    alice.keyboard.press("Escape")
    expect(alice.get_by_role("menu", name="Message actions")).to_have_count(0)
    for item, role, name in [("Move topic", "dialog", "Move topic"),
                             ("View edit history", "dialog", "Edit history"),
                             ("Delete message", "alertdialog", "Delete this message?")]:
        open_item(item)
        dialog = alice.get_by_role(role, name=name)
        expect(dialog).to_be_visible()
        assert axe_violations(alice, "dialog[open]") == [], name
        alice.keyboard.press("Escape")
        expect(dialog).to_have_count(0)
    assert site.api("GET", f"messages/{message_id}", auth=site.alice[1])["message"]["subject"] == topic


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_compose_popups(pages, site, scheme):
    """Does axe-core find no violation, in light and in dark colours, in what pops up while
    writing: the To box's people suggestions and its pills, the Topic box's suggestions, the
    Message box's mention suggestions and the "Add emoji" picker?"""
    from ..support.browser import axe_violations

    # a channel of its own: a message in design or ops would change the unread counts other tests expect
    site.api("POST", "users/me/subscriptions", subscriptions=[{"name": "popups"}], principals=[ALICE, BOB])
    post(site, site.bob[1], "popups", "axe popups", "plans")
    alice = pages(ALICE, color_scheme=scheme)
    expect(alice.get_by_role("textbox", name="Message")).to_be_visible()
    to = alice.get_by_role("textbox", name="To")
    alice.locator("body").press("x")
    expect(to).to_be_focused()
    to.press_sequentially("Bo")
    expect(alice.get_by_role("option", name=re.compile("Bob Builder"))).to_be_visible()
    assert axe_violations(alice, "#people-suggestions") == [], "people suggestions"
    to.press("Enter")
    expect(alice.get_by_role("button", name="Remove Bob Builder")).to_be_visible()
    assert axe_violations(alice) == [], "direct message compose with a pill"
    box = alice.get_by_role("textbox", name="Message")
    box.press_sequentially("hi @car")
    expect(alice.get_by_role("listbox", name="Suggestions").get_by_role("option").first).to_be_visible()
    assert axe_violations(alice, "ul.completion:not([hidden])") == [], "mention suggestions"
    box.press("Escape")
    alice.get_by_role("button", name="Add emoji").click()
    picker = alice.get_by_role("dialog", name="Emoji picker")
    expect(picker.get_by_role("option").first).to_be_visible()
    assert axe_violations(alice, "#emoji-picker") == [], "emoji picker"
    alice.keyboard.press("Escape")
    alice.goto(f"{site.url}/#narrow/channel/{site.stream_id('popups')}")
    topic = alice.get_by_role("textbox", name="Topic")
    topic.click()
    topic.fill("")
    topic.press_sequentially("axe")
    expect(alice.get_by_role("listbox", name="Topics").get_by_role("option", name="axe popups")).to_be_visible()
    assert axe_violations(alice, "#topic-suggestions") == [], "topic suggestions"


def test_axe_helper_reports_what_it_should(browser):
    """The check itself: does the helper report a violation on a page that has one?"""
    from ..support.browser import axe_violations

    context = browser.new_context()
    page = context.new_page()
    page.set_content('<html lang="en"><title>t</title><main><img src="data:,"><button></button></main></html>')
    found = axe_violations(page)
    assert any(v.startswith("image-alt") for v in found) and any(v.startswith("button-name") for v in found), found
    context.close()


def seed(site, auth, stream, count):
    """`count` messages in `stream` (topics of 25), sent over HTTP by 8 threads."""
    from concurrent.futures import ThreadPoolExecutor

    session = requests.Session()
    session.auth = auth

    def one(n):
        body = session.post(f"{site.url}/api/v1/messages", timeout=60, data={
            "type": "stream", "to": stream, "topic": f"part {n // 25}",
            "content": f"Long message **{n}** with a [link](https://example.com/{n}) and `code`"}).json()
        assert body["result"] == "success", body

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, range(count)))


def test_a_2000_message_channel_scrolls_back_light_and_fast(pages, site):
    """Scrolled back from its newest message to its very first, does a 2,000-message channel keep
    the page under 20,000 elements all the way, take seconds rather than tens of seconds (a loose
    bound: scripts/bench_webclient.py measures it), and does your own message then still appear at
    once at the bottom?"""
    site.api("POST", "users/me/subscriptions", auth=site.alice[1], subscriptions=[{"name": "long"}])
    seed(site, site.alice[1], "long", 2000)
    site.api("POST", "mark_all_as_read", auth=site.alice[1])  # the channel opens at its newest
    narrow = [{"operator": "channel", "operand": site.stream_id("long")}]
    oldest = site.api("GET", "messages", auth=site.alice[1], anchor="oldest", num_before=0, num_after=1,
                      narrow=narrow)["messages"][0]["id"]
    newest = site.api("GET", "messages", auth=site.alice[1], anchor="newest", num_before=1, num_after=0,
                      narrow=narrow)["messages"][0]["id"]
    alice = pages(ALICE, at=f"#narrow/channel/{site.stream_id('long')}-long")  # not the combined feed first
    expect(alice.locator(f'[role=article][data-id="{newest}"]')).to_be_visible()
    started = time.monotonic()
    peak = alice.evaluate("""async (oldest) => {
        const feed = document.querySelector(".feed");
        let peak = 0;
        const deadline = performance.now() + 60000;
        while (!document.querySelector(`[role=article][data-id="${oldest}"]`) && performance.now() < deadline) {
            feed.scrollTop = 0;
            feed.dispatchEvent(new Event("scroll"));
            await new Promise((resolve) => setTimeout(resolve, 20));
            peak = Math.max(peak, document.getElementsByTagName("*").length);
        }
        return peak;
    }""", oldest)
    elapsed = time.monotonic() - started
    expect(alice.locator(f'[role=article][data-id="{oldest}"]')).to_be_attached()
    assert peak < 20_000, peak
    assert elapsed < 30, elapsed  # loose: 4 s is the target, measured by the benchmark
    print(f"scrolled back through 2000 messages in {elapsed:.1f} s, peak {peak} elements")
    box = alice.get_by_role("textbox", name="Topic")
    box.fill("part 0")
    message = alice.get_by_role("textbox", name="Message")
    message.fill("my own words at the end")
    message.press("Enter")
    try:
        expect(alice.get_by_role("article").filter(has_text="my own words at the end")).to_be_in_viewport()
    except AssertionError as error:  # it failed now and then under a full suite's load: say where things were
        raise AssertionError(f"{error}\nfeed: {feed_state(alice, 'my own words')}") from None
    assert alice.evaluate('document.getElementsByTagName("*").length') < 20_000


def feed_state(page, text):
    """Where the feed is scrolled, and where the articles holding `text` are (for a failure's message)."""
    return page.evaluate("""(text) => {
        const feed = document.querySelector(".feed");
        const articles = [...document.querySelectorAll("[role=article]")];
        const box = (el) => { const r = el.getBoundingClientRect(); return [Math.round(r.top), Math.round(r.bottom)]; };
        return JSON.stringify({
            scrollTop: feed.scrollTop, scrollHeight: feed.scrollHeight, clientHeight: feed.clientHeight,
            feed: box(feed), articles: articles.length, first: articles[0]?.dataset.id, last: articles.at(-1)?.dataset.id,
            matching: articles.filter((a) => a.textContent.includes(text))
                .map((a) => ({ id: a.dataset.id, local: a.dataset.local, box: box(a), className: a.className })),
            compose: [...document.querySelectorAll("textarea, input")].filter((el) => el.value)
                .map((el) => `${el.getAttribute("aria-label") || el.name}: ${el.value.slice(0, 40)}`),
            hash: location.hash,
        });
    }""", text)


def test_the_end_stays_in_view_while_what_is_above_it_grows(pages, site):
    """At the end of a channel after sending, does your message stay in view when a message above
    it grows afterwards (a preview drawn late; in a long channel, a block first drawn after the
    jump to the end), and once you scroll away from the end, does such growth leave the view be?"""
    site.api("POST", "users/me/subscriptions", auth=site.alice[1], subscriptions=[{"name": "tall"}])
    seed(site, site.alice[1], "tall", 40)
    alice = pages(ALICE, at=f"#narrow/channel/{site.stream_id('tall')}-tall")  # not the combined feed first
    expect(alice.get_by_role("article").filter(has_text="Long message 39").first).to_be_visible()
    alice.get_by_role("textbox", name="Topic").fill("part 1")
    box = alice.get_by_role("textbox", name="Message")
    box.fill("the last word")
    box.press("Enter")
    mine = alice.locator("[role=article][data-id]").filter(has_text="the last word")
    expect(mine).to_be_in_viewport()
    grow = """() => {
        const articles = [...document.querySelectorAll("[role=article][data-id]")];
        const above = articles[articles.length - 2];
        above.querySelector(".content").append(Object.assign(document.createElement("div"), { style: "height: 1500px" }));
    }"""
    alice.evaluate(grow)
    expect(mine).to_be_in_viewport()
    # Growth that lands between the view's scroll back to the end and that scroll's event (which
    # a busy page delivers a frame later) must not count as scrolling away.
    alice.evaluate("""async () => {
        const list = document.querySelector(".message-list");
        list.append(Object.assign(document.createElement("div"), { style: "height: 30px" }));
        await new Promise((resolve) => new ResizeObserver((_, seen) => {
            seen.disconnect();
            setTimeout(() => { (%s)(); resolve(); });
        }).observe(list));
    }""" % grow)
    expect(mine).to_be_in_viewport()
    alice.evaluate("""() => {
        const feed = document.querySelector(".feed");
        feed.scrollTop = feed.scrollHeight - feed.clientHeight - 1200;
    }""")
    alice.wait_for_timeout(300)  # the scroll event: away from the end
    before = alice.evaluate('document.querySelector(".feed").scrollTop')
    alice.evaluate(grow)
    alice.wait_for_timeout(300)
    assert alice.evaluate('document.querySelector(".feed").scrollTop') == before
    expect(mine).not_to_be_in_viewport()


def test_a_message_arriving_while_newer_messages_load_is_shown(pages, site):
    """A channel opened at its first unread message holds only part of what follows; scrolling
    down fetches the rest. If a message arrives (its event) while that fetch is under way, and
    the fetch's answer was made before the message existed, is the message shown after it?"""
    site.api("POST", "users/me/subscriptions", auth=site.alice[1], subscriptions=[{"name": "backlog"}])
    site.api("POST", "users/me/subscriptions", auth=site.bob[1], subscriptions=[{"name": "backlog"}])
    seed(site, site.bob[1], "backlog", 90)  # unread for Alice: she opens at the first of them
    backlog = site.stream_id("backlog")
    # Opened at the channel: a combined feed shown first would hold its messages too, and a fetch
    # of that feed's newer messages would be dropped when the channel's view replaced it.
    alice = pages(ALICE, at=f"#narrow/channel/{backlog}-backlog")
    said = []  # for a failure's message: what the page logged and the notices it showed
    alice.on("console", lambda message: said.append(f"{message.type}: {message.text}"[:300]))
    alice.on("request", lambda request: "/json/" in request.url and said.append(
        f"request: {request.method} {request.url.split('/json/')[1][:120]}"))
    expect(alice.get_by_role("article").first).to_be_visible()
    settled(alice)  # no fetch under way: an older page's would make the scroll below fetch nothing
    alice.evaluate("""() => new MutationObserver((changes) => changes.forEach((change) => change.addedNodes.forEach(
        (node) => node.classList?.contains("toast") && console.info(`toast: ${node.textContent}`))))
        .observe(document.body, { childList: true, subtree: true })""")
    text = "Arrived while newer messages loaded"
    arrives_while_fetching(
        alice, "**/json/messages?**",
        lambda request: (request.method == "GET" and "num_before=0" in request.url and "include_anchor=false" in request.url
                         and f"%22operand%22%3A{backlog}" in request.url),
        start=lambda: alice.evaluate("""() => {
            const feed = document.querySelector(".feed");
            feed.scrollTop = feed.scrollHeight;
            feed.dispatchEvent(new Event("scroll"));
        }"""), text=text,
        post=lambda: site.api("POST", "messages", auth=site.bob[1], type="stream", to="backlog",
                              topic="late", content=text))
    try:
        expect(alice.get_by_role("article").filter(has_text=text)).to_have_count(1)
    except AssertionError as error:  # it failed now and then under a full suite's load: say where things were
        raise AssertionError(f"{error}\nfeed: {feed_state(alice, text)}\npage: {said}") from None


def unread_total(page):
    link = views(page).get_by_role("link", name=re.compile("^Inbox"))
    match = re.search(r"(\d+)", link.inner_text())
    return int(match.group(1)) if match else 0


def test_leaving_the_box_while_a_send_is_answered_keeps_the_focus_away(pages, site):
    """The server's answer to a send can come after the message's own event. If the person has
    left the compose box meanwhile (Escape), does the answer leave the focus where they put it, so
    that their next shortcut (e: edit) acts on the message instead of typing into the box?"""
    alice = pages(ALICE)
    open_topic(alice, site, "general", "late answer")
    held = []

    def hold_the_answer(route):
        held.append((route, route.fetch()))  # the server has sent it; the page waits for the answer

    alice.route("**/json/messages", hold_the_answer)
    box = alice.get_by_role("textbox", name="Message", exact=True)
    box.fill("answered late")
    box.press("Enter")
    # The message's event has come (the server's copy, with an id), its answer not yet.
    expect(alice.locator("[role=article][data-id]").filter(has_text="answered late")).to_be_visible()
    # The server sends the event before the answer, so the handler's fetch may still be reading
    # it: wait for it (the page itself never sees the answer until it is fulfilled below).
    on_page_until(alice, lambda: held)
    assert len(held) == 1
    alice.keyboard.press("Escape")
    expect(box).not_to_be_focused()
    route, response = held[0]
    route.fulfill(response=response)
    alice.unroute("**/json/messages")
    expect(alice.get_by_role("button", name="Send", exact=True)).to_be_enabled()  # the send has finished
    expect(box).not_to_be_focused()
    alice.locator("body").press("e")
    expect(alice.get_by_role("textbox", name="Edit message")).to_be_focused()
    expect(box).to_have_value("")


def quiet_page(pages, site, email):
    """A signed-in page showing Drafts: nothing arriving there is seen (so nothing is marked read)."""
    page = pages(email)
    page.goto(f"{site.url}/#drafts")
    expect(page.get_by_role("heading", name="Drafts")).to_be_visible()
    return page


def test_mark_all_as_read_clears_every_count(pages, site):
    """With unread messages in several channels and a direct message, does "Mark all as read" in
    the Inbox clear every count: the Inbox, each channel, the page title; and on the server?"""
    carol = quiet_page(pages, site, CAROL)
    for n in range(3):
        post(site, site.bob[1], "design", f"colours {n}", f"pick a colour {n}")
        post(site, site.bob[1], "ops", "pager", f"page {n}")
    site.api("POST", "messages", auth=site.bob[1], type="direct", to=[site.carol[2]], content="hi carol")
    views(carol).get_by_role("link", name=re.compile("^Inbox")).click()
    expect(channel_link(carol, "design")).to_have_accessible_name(re.compile(r"design\s*3"))
    assert unread_total(carol) >= 7
    carol.get_by_role("button", name="Mark all as read").click()
    expect(views(carol).get_by_role("link", name=re.compile("^Inbox"))).to_have_accessible_name("Inbox")
    expect(channel_link(carol, "design")).to_have_accessible_name("design")
    expect(channel_link(carol, "ops")).to_have_accessible_name("ops")
    expect(carol.get_by_text("You have no unread messages.")).to_be_visible()
    expect(carol).not_to_have_title(re.compile(r"^\(\d+\)"))
    counts = site.api("GET", "messages", auth=site.carol[1], anchor="newest", num_before=50, num_after=0,
                      narrow=[{"operator": "is", "operand": "unread"}])["messages"]
    assert counts == []


def test_mark_channel_topic_and_message_unread(pages, site):
    """Do "Mark topic as read" and "Mark channel as read" clear just those counts, and does
    "Mark as unread" in a message's actions make it and the later ones unread again (and keep
    them unread while the view stays open)?"""
    site.api("POST", "mark_all_as_read", auth=site.carol[1])
    carol = quiet_page(pages, site, CAROL)
    ids = [post(site, site.bob[1], "ops", "deploys", f"deploy {n}") for n in range(3)]
    post(site, site.bob[1], "ops", "alerts", "alert one")
    post(site, site.bob[1], "design", "fonts", "serif or not")
    expect(channel_link(carol, "ops")).to_have_accessible_name(re.compile(r"ops\s*4"))
    carol.goto(f"{site.url}/#narrow/channel/{site.stream_id('ops')}-ops/topic/deploys")
    expect(carol.get_by_role("article").filter(has_text="deploy 2")).to_be_visible()
    expect(channel_link(carol, "ops")).to_have_accessible_name(re.compile(r"ops\s*1"))
    article = carol.get_by_role("article").filter(has_text="deploy 1")
    article.hover()
    article.get_by_role("button", name="Message actions").click()
    carol.get_by_role("menuitem", name="Mark as unread").click()
    expect(channel_link(carol, "ops")).to_have_accessible_name(re.compile(r"ops\s*3"))
    carol.wait_for_timeout(1500)  # seen on screen, yet they stay unread
    expect(channel_link(carol, "ops")).to_have_accessible_name(re.compile(r"ops\s*3"))
    flags = [site.api("GET", f"messages/{i}", auth=site.carol[1])["message"]["flags"] for i in ids]
    assert ["read" in f for f in flags] == [True, False, False]
    carol.get_by_role("button", name="Mark topic as read").click()
    expect(channel_link(carol, "ops")).to_have_accessible_name(re.compile(r"ops\s*1"))
    channel_link(carol, "design").click()
    carol.get_by_role("button", name="Mark channel as read").click()
    expect(channel_link(carol, "design")).to_have_accessible_name("design")
    expect(channel_link(carol, "ops")).to_have_accessible_name(re.compile(r"ops\s*1"))


def test_muted_topic_and_channel_leave_the_counts(pages, site):
    """Does muting a topic take its unread messages out of the channel's count and the Inbox (and
    unmuting bring them back), does muting a channel take it out of the total, and does following
    a topic show as pressed?"""
    site.api("POST", "mark_all_as_read", auth=site.carol[1])
    carol = quiet_page(pages, site, CAROL)
    post(site, site.bob[1], "design", "noise", "noise 1")
    post(site, site.bob[1], "design", "noise", "noise 2")
    post(site, site.bob[1], "design", "signal", "signal 1")
    expect(channel_link(carol, "design")).to_have_accessible_name(re.compile(r"design\s*3"))
    carol.goto(f"{site.url}/#narrow/channel/{site.stream_id('design')}-design/topic/noise")
    carol.get_by_role("button", name="Mute topic").click()
    expect(carol.get_by_role("button", name="Unmute topic")).to_be_visible()
    carol.goto(f"{site.url}/#narrow/channel/{site.stream_id('ops')}-ops")
    expect(channel_link(carol, "design")).to_have_accessible_name("design 1 unread")
    views(carol).get_by_role("link", name=re.compile("^Inbox")).click()
    expect(carol.get_by_role("link", name=re.compile(r"^#design > signal"))).to_be_visible()
    expect(carol.get_by_role("link", name=re.compile(r"^#design > noise"))).to_have_count(0)
    policies = site.api("GET", "user_topics", auth=site.carol[1])["user_topics"]
    assert [(p["topic_name"], p["visibility_policy"]) for p in policies if p["topic_name"] == "noise"] == [("noise", 1)]
    total = unread_total(carol)
    channel_link(carol, "design").click()
    carol.get_by_role("button", name="Mute channel").click()
    expect(carol.get_by_role("button", name="Unmute channel")).to_be_visible()
    expected = "Inbox" if total == 1 else re.compile(rf"^Inbox\s*{total - 1}")
    expect(views(carol).get_by_role("link", name=re.compile("^Inbox"))).to_have_accessible_name(expected)
    carol.get_by_role("button", name="Unmute channel").click()
    expect(carol.get_by_role("button", name="Mute channel")).to_be_visible()
    carol.goto(f"{site.url}/#narrow/channel/{site.stream_id('design')}-design/topic/noise")
    carol.get_by_role("button", name="Unmute topic").click()
    # Each click as a person makes it, after the page showed the one before (quick clicks have
    # test_topic_buttons_reach_the_server_in_the_order_clicked).
    expect(carol.get_by_role("button", name="Mute topic")).to_be_visible()
    carol.get_by_role("button", name="Follow topic").click()
    expect(carol.get_by_role("button", name="Unfollow topic")).to_be_visible()
    policies = site.api("GET", "user_topics", auth=site.carol[1])["user_topics"]
    assert [(p["topic_name"], p["visibility_policy"]) for p in policies if p["topic_name"] == "noise"] == [("noise", 3)]
    assert not site.api("GET", "users/me/subscriptions", auth=site.carol[1])["subscriptions"][1]["is_muted"]


def test_topic_buttons_reach_the_server_in_the_order_clicked(pages, site):
    """Unmute topic, then Follow topic at once: while the first request is still unanswered, does
    the second wait for it, so that the topic ends followed (sent together, the unmute could land
    last and undo the follow)?"""
    carol = quiet_page(pages, site, CAROL)
    post(site, site.bob[1], "design", "order", "first")
    carol.goto(f"{site.url}/#narrow/channel/{site.stream_id('design')}-design/topic/order")
    carol.get_by_role("button", name="Mute topic").click()
    expect(carol.get_by_role("button", name="Unmute topic")).to_be_visible()
    held = []

    def hold_the_first(route):
        if held:
            route.continue_()
        else:
            held.append(route)  # the unmute, not yet sent on to the server

    carol.route("**/json/user_topics", hold_the_first)
    carol.get_by_role("button", name="Unmute topic").click()
    carol.get_by_role("button", name="Follow topic").click()
    carol.wait_for_timeout(300)
    assert len(held) == 1  # the follow waits for the unmute's answer
    held[0].continue_()
    expect(carol.get_by_role("button", name="Unfollow topic")).to_be_visible()
    carol.unroute("**/json/user_topics")

    def order_policy():
        policies = site.api("GET", "user_topics", auth=site.carol[1])["user_topics"]
        return [p["visibility_policy"] for p in policies if p["topic_name"] == "order"]

    deadline = time.monotonic() + 10
    while order_policy() != [3] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert order_policy() == [3]


def test_recent_conversations_with_filters(pages, site):
    """Does Recent conversations list each conversation (channel, topic, participants, time,
    unread count), newest first, with the Unread, Direct messages and text filters working, and
    does a new message move its conversation to the top live?"""
    site.api("POST", "mark_all_as_read", auth=site.alice[1])
    alice = quiet_page(pages, site, ALICE)
    post(site, site.bob[1], "design", "palette", "warm colours")
    post(site, site.carol[1], "design", "palette", "cold colours")
    post(site, site.alice[1], "ops", "rota", "my week")
    site.api("POST", "messages", auth=site.bob[1], type="direct", to=[site.alice[2]], content="psst")
    site.api("POST", "messages/flags", auth=site.alice[1], messages=[site.api(
        "GET", "messages", auth=site.alice[1], anchor="newest", num_before=2, num_after=0,
        narrow=[{"operator": "channel", "operand": site.stream_id("ops")}])["messages"][-1]["id"]], op="add", flag="read")
    views(alice).get_by_role("link", name="Recent conversations").click()
    table = alice.get_by_role("table", name="Recent conversations")
    expect(table).to_be_visible()
    rows = table.locator("tbody tr")
    expect(rows.first).to_contain_text("Bob Builder")  # the direct message is the newest
    palette = rows.filter(has_text="palette")
    expect(palette).to_contain_text("#design")
    expect(palette.locator(".participants")).to_have_attribute("aria-label", re.compile("Bob Builder.*Carol Danvers|Carol Danvers.*Bob Builder"))
    expect(palette.get_by_label(re.compile(r"^2 unread$"))).to_be_visible()
    alice.get_by_role("button", name="Unread").click()
    expect(rows.filter(has_text="rota")).to_have_count(0)  # her own message: read
    expect(rows.filter(has_text="palette")).to_have_count(1)
    alice.get_by_role("button", name="Unread").click()
    alice.get_by_role("button", name="Direct messages").click()
    expect(rows.filter(has_text="Bob Builder")).to_have_count(0)
    alice.get_by_role("searchbox", name="Filter conversations").fill("rot")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("rota")
    alice.get_by_role("searchbox", name="Filter conversations").fill("")
    post(site, site.carol[1], "ops", "incident", "something broke")
    expect(rows.first).to_contain_text("incident")
    rows.first.get_by_role("link", name="incident").click()
    expect(alice.get_by_role("article").filter(has_text="something broke")).to_be_visible()


def test_drafts_list_restore_and_delete(pages, site):
    """Do drafts typed in two conversations show in the Drafts view, does Restore bring one back
    into its conversation's compose box, and does Delete remove one (on the server too)?"""
    alice = pages(ALICE)
    open_topic(alice, site, "design", "draft one")
    alice.get_by_role("textbox", name="Message").fill("first unfinished thought")
    open_topic(alice, site, "ops", "draft two")
    alice.get_by_role("textbox", name="Message").fill("second unfinished thought")
    assert eventually(lambda: {"first unfinished thought", "second unfinished thought"} <= {
        d["content"] for d in site.api("GET", "drafts", auth=site.alice[1])["drafts"]})
    views(alice).get_by_role("link", name="Drafts").click()
    drafts = alice.get_by_role("list", name="Drafts")
    first = drafts.get_by_role("listitem").filter(has_text="first unfinished thought")
    expect(first).to_contain_text("#design > draft one")
    expect(drafts.get_by_role("listitem").filter(has_text="second unfinished thought")).to_be_visible()
    drafts.get_by_role("listitem").filter(has_text="second unfinished thought").get_by_role("button", name="Delete draft: #ops > draft two").click()
    expect(drafts.get_by_role("listitem").filter(has_text="second unfinished thought")).to_have_count(0)
    assert "second unfinished thought" not in [d["content"] for d in site.api("GET", "drafts", auth=site.alice[1])["drafts"]]
    first.get_by_role("button", name="Restore").click()
    expect(alice.get_by_role("textbox", name="Topic")).to_have_value("draft one")
    expect(alice.get_by_role("textbox", name="Message")).to_have_value("first unfinished thought")


def test_people_pills_topic_suggestions_and_emoji_button(pages, site):
    """Does the To box suggest people (role option) as a name is typed, make removable pills of
    the chosen ones, and send to them; does the Topic box suggest the channel's topics; does the
    "Add emoji" button insert the chosen emoji?"""
    post(site, site.bob[1], "design", "roadmap 2027", "plans")
    alice = pages(ALICE)
    alice.keyboard.press("x")
    to = alice.get_by_role("textbox", name="To")
    expect(to).to_be_focused()
    to.press_sequentially("Bo")
    option = alice.get_by_role("option", name=re.compile("Bob Builder"))
    expect(option).to_be_visible()
    to.press("Enter")
    expect(alice.get_by_role("button", name="Remove Bob Builder")).to_be_visible()
    to.press_sequentially("car")
    alice.get_by_role("option", name=re.compile("Carol Danvers")).click()
    expect(alice.get_by_role("button", name="Remove Carol Danvers")).to_be_visible()
    alice.get_by_role("button", name="Remove Bob Builder").click()
    expect(alice.get_by_role("button", name="Remove Bob Builder")).to_have_count(0)
    to.press_sequentially("Bob")
    to.press("Enter")
    box = alice.get_by_role("textbox", name="Message")
    box.fill("group hello ")
    alice.get_by_role("button", name="Add emoji").click()
    alice.get_by_role("textbox", name="Search emoji").fill("octopus")
    alice.get_by_role("dialog", name="Emoji picker").get_by_role("option", name="octopus", exact=True).click()
    expect(box).to_have_value("group hello :octopus: ")
    box.press("Enter")
    expect(box).to_have_value("")
    newest = lambda: site.api("GET", "messages", auth=site.carol[1], anchor="newest", num_before=1, num_after=0)["messages"][0]  # noqa: E731
    assert eventually(lambda: newest()["content"].startswith("<p>group hello"))  # (the box clears at once: local echo)
    sent = newest()
    assert sorted(r["email"] for r in sent["display_recipient"]) == [ALICE, BOB, CAROL]
    alice.goto(f"{site.url}/#narrow/channel/{site.stream_id('design')}")
    topic = alice.get_by_role("textbox", name="Topic")
    topic.click()
    topic.fill("")
    topic.press_sequentially("road")
    alice.get_by_role("listbox", name="Topics").get_by_role("option", name="roadmap 2027").click()
    expect(topic).to_have_value("roadmap 2027")


def test_status_shows_in_the_user_list(pages, site):
    """Does "Set status" save a text and an emoji, shown beside the name in everyone's user
    list, and does clearing it take it away?"""
    alice, bob = pages(ALICE), pages(BOB)
    alice.get_by_role("button", name="Set status").click()
    dialog = alice.get_by_role("dialog", name="Set status")
    dialog.get_by_role("textbox", name="Status text").fill("In a meeting")
    dialog.get_by_role("button", name="Status emoji").click()
    alice.get_by_role("textbox", name="Search emoji").fill("calendar")
    alice.get_by_role("dialog", name="Emoji picker").get_by_role("option", name="calendar", exact=True).click()
    dialog.get_by_role("button", name="Save").click()
    expect(dialog).to_have_count(0)
    entry = bob.get_by_role("complementary", name="Users").get_by_role("link", name=re.compile("Alice Liddell"))
    expect(entry).to_contain_text("In a meeting")
    expect(entry).to_contain_text("\U0001f4c5")
    status = site.api("GET", f"users/{site.alice[2]}/status", auth=site.bob[1])["status"]
    assert status["status_text"] == "In a meeting" and status["emoji_name"] == "calendar"
    alice.get_by_role("button", name="Set status").click()
    alice.get_by_role("dialog", name="Set status").get_by_role("button", name="Clear status").click()
    expect(entry).not_to_contain_text("In a meeting")


def test_every_keyboard_shortcut(pages, site):
    """Does each of Zulip's shortcuts do its job: ? shows them, j/k and the arrows move, + thumbs
    up, * stars, : opens the reaction picker, i the message actions, e edits your own message,
    r/Enter reply, c new topic, x new direct message, n next unread topic, p next unread direct
    message, Shift+A/Shift+D previous/next channel, q/w search people/channels, / search, Esc?"""
    site.api("POST", "mark_all_as_read", auth=site.alice[1])
    alice = quiet_page(pages, site, ALICE)
    for n in range(3):
        post(site, site.bob[1], "general", "keys", f"key line {n}")
    post(site, site.bob[1], "design", "unread elsewhere", "waiting for n")
    site.api("POST", "messages", auth=site.carol[1], type="direct", to=[site.alice[2]], content="waiting for p")
    body = alice.locator("body")
    body.press("?")
    shortcuts = alice.get_by_role("dialog", name="Keyboard shortcuts")
    expect(shortcuts).to_be_visible()
    expect(shortcuts).to_contain_text("Next unread topic")
    alice.keyboard.press("Escape")
    expect(shortcuts).to_have_count(0)
    open_topic(alice, site, "general", "keys")
    articles = alice.get_by_role("article")
    expect(articles.filter(has_text="key line 2")).to_be_visible()
    selected = alice.locator('[role="article"].selected')
    alice.locator(".feed").click(position={"x": 5, "y": 5})
    body.press("k")
    body.press("ArrowUp")
    expect(selected).to_contain_text("key line 0")
    body.press("j")
    expect(selected).to_contain_text("key line 1")
    body.press("ArrowDown")
    expect(selected).to_contain_text("key line 2")
    body.press("+")
    expect(selected.get_by_role("button", name="thumbs_up: 1")).to_be_visible()
    body.press("*")
    expect(selected.get_by_role("button", name="Unstar")).to_be_visible()
    body.press(":")
    alice.get_by_role("textbox", name="Search emoji").fill("tada")
    alice.get_by_role("textbox", name="Search emoji").press("Enter")
    expect(selected.get_by_role("button", name="tada: 1")).to_be_visible()
    body.press("i")
    expect(alice.get_by_role("menu", name="Message actions")).to_be_visible()
    alice.keyboard.press("Escape")
    expect(alice.get_by_role("menu", name="Message actions")).to_have_count(0)
    body.press("r")
    expect(alice.get_by_role("textbox", name="Message")).to_be_focused()
    alice.keyboard.press("Escape")
    send_box = alice.get_by_role("textbox", name="Message")
    send_box.fill("mine to edit")
    send_box.press("Enter")
    # (the server's message, not its local echo: that one has no id yet)
    expect(alice.locator("[role=article][data-id].selected").filter(has_text="mine to edit")).to_be_visible()
    alice.keyboard.press("Escape")
    body.press("e")
    expect(alice.get_by_role("textbox", name="Edit message")).to_be_focused()
    alice.keyboard.press("Escape")
    alice.keyboard.press("Escape")
    body.press("Enter")
    expect(alice.get_by_role("textbox", name="Message")).to_be_focused()
    alice.keyboard.press("Escape")
    body.press("c")
    expect(alice.get_by_role("textbox", name="Topic")).to_be_focused()
    alice.keyboard.press("Escape")
    body.press("x")
    expect(alice.get_by_role("textbox", name="To")).to_be_focused()
    alice.keyboard.press("Escape")
    body.press("n")
    expect(alice.get_by_role("textbox", name="Topic")).to_have_value("unread elsewhere")
    body.press("p")
    expect(alice.get_by_role("heading", level=1)).to_have_text("Carol Danvers")
    open_topic(alice, site, "general", "keys")
    channels = sorted(s["name"] for s in site.api("GET", "users/me/subscriptions", auth=site.alice[1])["subscriptions"])
    body.press("Shift+D")
    expect(alice.get_by_role("heading", level=1)).to_have_text(f"#{channels[channels.index('general') + 1]}")
    body.press("Shift+A")
    expect(alice.get_by_role("heading", level=1)).to_have_text("#general")
    body.press("q")
    expect(alice.get_by_role("searchbox", name="Search people")).to_be_focused()
    alice.keyboard.press("Escape")
    body.press("w")
    expect(alice.get_by_role("searchbox", name="Filter channels")).to_be_focused()
    alice.keyboard.type("des")
    expect(channel_link(alice, "general")).to_have_count(0)
    alice.keyboard.press("Enter")
    expect(alice.get_by_role("heading", level=1)).to_have_text("#design")
    alice.keyboard.press("Escape")
    body.press("/")
    expect(alice.get_by_role("textbox", name="Search")).to_be_focused()
    alice.keyboard.press("Escape")
    expect(alice.get_by_role("textbox", name="Search")).not_to_be_focused()


def test_sound_follows_the_settings(pages, site):
    """Does a direct message play the sound, and not once "Play a sound for direct messages and
    mentions" is turned off in Settings > Notifications; does a channel whose "Audible
    notifications" is ticked there play it for its messages?"""
    bob = pages(BOB)
    played = lambda: bob.evaluate("window.__soundsPlayed || 0")  # noqa: E731
    site.api("POST", "messages", auth=site.alice[1], type="direct", to=[site.bob[2]], content="ding")
    expect(bob.get_by_role("navigation", name="Direct messages").get_by_role(
        "link", name=re.compile(r"^Alice Liddell( \d+ unread)?$"))).to_be_visible()
    assert eventually(lambda: played() == 1)
    bob.get_by_role("button", name="Settings").click()
    settings = bob.get_by_role("dialog", name="Settings")
    settings.get_by_role("tab", name="Notifications", exact=True).click()
    sound = settings.get_by_role("checkbox", name="Play a sound for direct messages and mentions")
    expect(sound).to_be_checked()
    sound.uncheck()
    settings.get_by_role("checkbox", name="Audible notifications for #ops").check()
    assert eventually(lambda: site.api("POST", "register", auth=site.bob[1], fetch_event_types=["user_settings"],
                                       client_capabilities={"user_settings_object": True})["user_settings"]["enable_sounds"] is False)
    assert eventually(lambda: [s["audible_notifications"] for s in site.api("GET", "users/me/subscriptions", auth=site.bob[1])["subscriptions"] if s["name"] == "ops"] == [True])
    settings.get_by_role("button", name="Close settings").click()
    site.api("POST", "messages", auth=site.alice[1], type="direct", to=[site.bob[2]], content="silent ding")
    post(site, site.alice[1], "design", "quiet", "no sound here")
    bob.wait_for_timeout(1500)
    assert played() == 1
    post(site, site.alice[1], "ops", "loud", "sound here")
    assert eventually(lambda: played() == 2)


def test_phone_user_list_and_one_sticky_header(pages, site):
    """At phone width, is the user list reachable from a "Show users" button, and, scrolled
    within a feed of several conversations, does only one recipient header stick at the top?"""
    for n in range(12):
        post(site, site.bob[1], "general", f"sticky {n // 4}", f"sticky line {n}\n\nwith a second paragraph")
    phone = pages(BOB, viewport=PHONE, at=f"#narrow/channel/{site.stream_id('general')}-general")
    users = phone.get_by_role("complementary", name="Users")
    expect(users).to_be_hidden()
    phone.get_by_role("button", name="Show users").click()
    expect(users).to_be_visible()
    expect(users.get_by_role("link", name=re.compile("Alice Liddell"))).to_be_visible()
    shot(phone, "users-phone")
    phone.get_by_role("button", name="Show users").click()
    expect(users).to_be_hidden()
    expect(phone.get_by_role("article").filter(has_text="sticky line 11")).to_be_visible()
    stuck = phone.evaluate("""async () => {
        const feed = document.querySelector(".feed");
        // where a stuck header sits: the top of the feed's content box
        const top = feed.getBoundingClientRect().top + parseFloat(getComputedStyle(feed).paddingTop);
        const counts = [];
        for (let y = feed.scrollHeight - feed.clientHeight; y >= 0; y -= 120) {
            feed.scrollTop = y;
            await new Promise((resolve) => requestAnimationFrame(() => resolve()));
            counts.push([...document.querySelectorAll(".recipient-header")]
                .filter((el) => Math.abs(el.getBoundingClientRect().top - top) < 2).length);
        }
        return counts;
    }""")
    assert max(stuck) == 1, stuck


def test_uploads_each_on_a_line_and_image_lightbox(pages, site, tmp_path):
    """Are two files uploaded together inserted on lines of their own (not one run-together link),
    does an image preview in a message open the "Image" dialog with the full image and a download
    link, and is an uploaded image (the server's thumbnail) an img in its article?"""
    alice = pages(ALICE)
    open_topic(alice, site, "design", "uploads")
    picture = tmp_path / "architecture.png"
    picture.write_bytes(PNG)
    notes = tmp_path / "roadmap.pdf"
    notes.write_bytes(b"%PDF-1.4 roadmap")
    alice.locator("form.compose input[type=file]").set_input_files([str(picture), str(notes)])
    box = alice.get_by_role("textbox", name="Message")
    expect(box).to_have_value(re.compile(r"^\[architecture\.png\]\(/user_uploads/\S+\)\n\[roadmap\.pdf\]\(/user_uploads/\S+\)\n$"
                                         r"|^\[roadmap\.pdf\]\(/user_uploads/\S+\)\n\[architecture\.png\]\(/user_uploads/\S+\)\n$"))
    box.press("Enter")
    sent = alice.get_by_role("article").filter(has_text="roadmap.pdf")
    expect(sent.get_by_role("link", name="roadmap.pdf")).to_have_attribute("target", "_blank")
    # The file's link, and the thumbnail's link around its img: both are named by the file.
    expect(sent.get_by_role("link", name="architecture.png").first).to_be_visible()
    # The preview the server makes today for a link to an image (/thumbnail), and the lightbox.
    url = upload(site, site.bob[1], "diagram.png", PNG)
    post(site, site.bob[1], "design", "uploads", f"{site.url}{url}")
    image = alice.get_by_role("article").locator(".message_inline_image img").last
    expect(image).to_be_visible()
    image.click()
    lightbox = alice.get_by_role("dialog", name="Image")
    expect(lightbox).to_be_visible()
    full = lightbox.get_by_role("img")
    expect(full).to_have_attribute("src", re.compile(re.escape(url.split("/")[-1])))
    alice.wait_for_function("() => document.querySelector('dialog.lightbox img').complete")
    assert full.evaluate("img => img.naturalWidth") == 1
    # Zulip writes links to the organization's own uploads relative (user_uploads/...).
    expect(lightbox.get_by_role("link", name="Download")).to_have_attribute("href", re.compile(re.escape(url.lstrip("/")) + "$"))
    alice.keyboard.press("Escape")
    expect(lightbox).to_have_count(0)
    # An uploaded image (sent as Zulip's clients send it) shows as a thumbnail in its article,
    # once the thumbnail worker has made it (moments after the upload).
    def thumbnail_markup():
        html = site.api("POST", "messages/render", content=f"[architecture.png]({url})")["rendered"]
        return html if "/user_uploads/thumbnail/" in html else None

    rendered = on_page_until(alice, thumbnail_markup)
    assert rendered and "message_inline_image" in rendered, rendered
    post(site, site.bob[1], "design", "uploads", f"[architecture.png]({url})")
    thumb = alice.get_by_role("article").filter(has_text="architecture.png").last.get_by_role("img").last
    expect(thumb).to_be_visible()
    thumb.click()
    expect(alice.get_by_role("dialog", name="Image")).to_be_visible()


def test_the_end_stays_in_view_while_the_compose_box_grows(pages, site):
    """At the end of a long channel, does a reply of many lines, which makes the compose box
    taller and the feed shorter, leave the latest message in sight, where it would otherwise
    slide under the box? And scrolled away from the end, does the view stay where it was?"""
    site.api("POST", "users/me/subscriptions", auth=site.alice[1], subscriptions=[{"name": "longreply"}])
    seed(site, site.bob[1], "longreply", 30)
    site.api("POST", "mark_all_as_read", auth=site.alice[1])
    alice = pages(ALICE, at=f"#narrow/channel/{site.stream_id('longreply')}-longreply")  # not the combined feed first
    expect(alice.get_by_role("article").filter(has_text="Long message 29")).to_be_visible()
    # The newest message (the seed's threads send out of order), once the view is at its end:
    # blocks drawn after a jump to the end can grow and push it, so jump until it stays there.
    latest = alice.locator("[role=article][data-id]").last
    alice.wait_for_function("""() => {
        const feed = document.querySelector(".feed");
        feed.scrollTop = feed.scrollHeight;
        return feed.scrollHeight - feed.scrollTop - feed.clientHeight < 1;
    }""", polling=100)
    alice.wait_for_timeout(200)
    expect(latest).to_be_in_viewport(ratio=1)
    box = alice.get_by_role("textbox", name="Message")
    feed_height = alice.evaluate('document.querySelector(".feed").clientHeight')
    box.fill("\n".join(f"line {n} of a long reply" for n in range(8)))
    alice.wait_for_function("(height) => document.querySelector('.feed').clientHeight < height - 60", arg=feed_height)
    expect(latest).to_be_in_viewport(ratio=1)
    box.fill("")
    alice.evaluate("""() => {
        const feed = document.querySelector(".feed");
        feed.scrollTop = feed.scrollHeight - feed.clientHeight - 600;
    }""")
    alice.wait_for_timeout(200)
    before = alice.evaluate('document.querySelector(".feed").scrollTop')
    box.fill("\n".join(f"line {n} of a long reply" for n in range(8)))
    alice.wait_for_timeout(300)
    assert alice.evaluate('document.querySelector(".feed").scrollTop') == before
