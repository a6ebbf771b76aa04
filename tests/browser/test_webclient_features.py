"""End to end, in Chromium against a real `serve`: a topic's actions (resolve, unresolve, move)
with the view and the compose box following the topic, search with suggestions and highlighted
matches, video call links and scheduled messages from the compose box. Each scenario runs at desktop and at phone width; outcomes are read back
through /api/v1. Every page is watched for console errors and failed requests, axe-core checks
each new screen (no serious or critical violation), and a screenshot of each goes to the test's
temporary folder."""

import re

import pytest

pytest.importorskip("playwright", reason="the browser tests need the test extra's playwright")

from playwright.sync_api import expect  # noqa: E402

from ..support.browser import DESKTOP, PHONE, Site, axe_violations, browser, on_page_until, pages  # noqa: E402,F401 (fixtures)

expect.set_options(timeout=15_000)

ALICE = "alice@example.com"
WIDTHS = {"desktop": DESKTOP, "phone": PHONE}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    running = Site(tmp_path_factory.mktemp("webclient-features") / "instance")
    running.alice = running.person(ALICE, "Alice Liddell")
    running.bob = running.person("bob@example.com", "Bob Builder")
    running.api("POST", "users/me/subscriptions", subscriptions=[{"name": "sealife"}], principals=[running.server.email, ALICE])
    yield running
    running.stop()


def serious(page, include=None):
    """axe-core's serious and critical violations on the page (or within `include`)."""
    return [v for v in axe_violations(page, include) if "(serious)" in v or "(critical)" in v]


def topic_messages(site, channel, topic):
    narrow = [{"operator": "channel", "operand": channel}, {"operator": "topic", "operand": topic}]
    return site.api("GET", "messages", anchor="newest", num_before=100, num_after=0, narrow=narrow)["messages"]


def drips(site, channel, topic):
    """The test's own messages in a topic (moving and resolving add the notification bot's)."""
    return [m["content"] for m in topic_messages(site, channel, topic) if "drip" in m["content"]]


def open_topic(page, site, channel, topic):
    page.goto(f"{site.url}/#narrow/channel/{site.stream_id(channel)}-{channel}/topic/{topic}")
    expect(page.get_by_role("article").first).to_be_visible()


def topic_action(page, item):
    page.get_by_role("button", name=re.compile("^Topic actions")).click()
    menu = page.get_by_role("menu")
    expect(menu.get_by_role("menuitem", name=item)).to_be_visible()
    return menu.get_by_role("menuitem", name=item)


@pytest.mark.parametrize("width", WIDTHS)
def test_resolve_unresolve_and_move_a_topic(pages, site, tmp_path, width):
    """From a topic's view, does "Topic actions" resolve the whole topic ("✔ " prefix), then
    unresolve it, then move it to another channel and name through the "Move topic" dialog, the
    view and the compose box's Topic following the topic each time without a reload?"""
    topic = f"leaks {width}"
    for text in ("first drip", "second drip"):
        site.api("POST", "messages", auth=site.alice[1], type="stream", to="sealife", topic=topic, content=text)
    page = pages(ALICE, viewport=WIDTHS[width])
    open_topic(page, site, "sealife", topic)
    compose_topic = page.get_by_role("textbox", name="Topic")
    expect(compose_topic).to_have_value(topic)

    resolve = topic_action(page, "Mark as resolved")
    page.screenshot(path=str(tmp_path / f"topic-actions-{width}.png"))
    assert serious(page) == []
    resolve.click()
    expect(compose_topic).to_have_value(f"\u2714 {topic}")
    expect(page.get_by_role("button", name=re.compile("^Topic actions: \u2714 "))).to_be_visible()
    expect(page.get_by_role("article").filter(has_text="drip")).to_have_count(2)
    assert drips(site, "sealife", f"\u2714 {topic}") == ["<p>first drip</p>", "<p>second drip</p>"]
    assert drips(site, "sealife", topic) == []

    # Unresolving at once deletes the resolve note (Zulip's grace period): wait until the page has
    # marked it read, so that no read flag for a deleted message is under way.
    note = topic_messages(site, "sealife", f"\u2714 {topic}")[-1]["id"]
    for _ in range(100):
        if "read" in site.api("GET", f"messages/{note}", auth=site.alice[1])["message"]["flags"]:
            break
        page.wait_for_timeout(100)
    topic_action(page, "Mark as unresolved").click()
    expect(compose_topic).to_have_value(topic)
    expect(page.get_by_role("article").filter(has_text="drip")).to_have_count(2)
    assert len(drips(site, "sealife", topic)) == 2

    topic_action(page, "Move topic").click()
    dialog = page.get_by_role("dialog", name=re.compile("^Move topic"))
    expect(dialog.get_by_role("textbox", name="New topic")).to_have_value(topic)
    dialog.get_by_role("combobox", name="New channel").select_option(label="#general")
    dialog.get_by_role("textbox", name="New topic").fill(f"pipes {width}")
    page.screenshot(path=str(tmp_path / f"move-topic-{width}.png"))
    assert serious(page) == []
    dialog.get_by_role("button", name="Confirm").click()
    expect(dialog).to_have_count(0)
    expect(compose_topic).to_have_value(f"pipes {width}")
    expect(page.get_by_role("heading", name=re.compile("^#general"))).to_be_visible()
    expect(page.get_by_role("article").filter(has_text="drip")).to_have_count(2)
    assert drips(site, "general", f"pipes {width}") == ["<p>first drip</p>", "<p>second drip</p>"]
    assert drips(site, "sealife", topic) == []

@pytest.mark.parametrize("width", WIDTHS)
def test_search_suggests_people_and_channels_and_marks_matches(pages, site, tmp_path, width):
    """Does typing "sender:ali" into Search offer Alice and "channel:sea" offer #sealife, as
    options of a listbox, and does a search list only the matching messages, each matched word
    inside a <mark>?"""
    word = f"octopus{width}"
    site.api("POST", "messages", auth=site.alice[1], type="stream", to="sealife", topic="ink", content=f"an {word} waved")
    site.api("POST", "messages", auth=site.alice[1], type="stream", to="sealife", topic="ink", content="a squid waved")
    page = pages(ALICE, viewport=WIDTHS[width])
    search = page.get_by_role("textbox", name="Search")

    search.fill("sender:ali")
    options = page.get_by_role("listbox").get_by_role("option")
    expect(options.filter(has_text="Alice Liddell")).to_have_count(1)
    page.screenshot(path=str(tmp_path / f"search-sender-{width}.png"))
    assert serious(page) == []
    search.fill("channel:sea")
    expect(options.filter(has_text="#sealife")).to_have_count(1)
    options.filter(has_text="#sealife").click()
    expect(page.get_by_role("heading", name=re.compile("^#sealife"))).to_be_visible()

    search.fill(word)
    search.press("Enter")
    articles = page.get_by_role("article")
    expect(articles).to_have_count(1)
    expect(articles.first.locator("mark")).to_have_text(word)
    page.screenshot(path=str(tmp_path / f"search-results-{width}.png"))
    assert serious(page) == []


def views_nav(page, width):
    """The "Views" navigation; at phone width it is in the drawer behind "Show channels"."""
    if width == "phone":
        page.get_by_role("button", name="Show channels").click()
    nav = page.get_by_role("navigation", name="Views")
    expect(nav).to_be_visible()
    return nav


@pytest.mark.parametrize("width", WIDTHS)
def test_video_call_links_and_scheduled_messages(pages, site, tmp_path, width):
    """Does each click on "Add video call" insert a new Jitsi link ([Join video call.](URL), a
    new room each time); does "Send options" > "Schedule message" > "Tomorrow at ..." schedule
    the message (POST /scheduled_messages) without sending it; and does the "Scheduled messages"
    view list it with a Delete button that deletes it?"""
    topic = f"plans {width}"
    site.api("POST", "messages", auth=site.alice[1], type="stream", to="sealife", topic=topic, content="agenda")
    page = pages(ALICE, viewport=WIDTHS[width])
    open_topic(page, site, "sealife", topic)
    box = page.get_by_role("textbox", name="Message")
    call = page.get_by_role("button", name="Add video call")
    call.click()
    call.click()
    links = re.findall(r"\[Join video call\.\]\((https://meet\.jit\.si/\w+)\)", box.input_value())
    assert len(links) == 2 and links[0] != links[1], box.input_value()

    text = f"reef survey at dawn {width}"
    box.fill(text)
    page.get_by_role("button", name="Send options").click()
    page.get_by_role("menuitem", name="Schedule message").click()
    tomorrow = page.get_by_role("menuitem", name=re.compile("^Tomorrow at"))
    expect(tomorrow.first).to_be_visible()
    page.screenshot(path=str(tmp_path / f"schedule-{width}.png"))
    assert serious(page) == []
    tomorrow.first.click()
    expect(box).to_have_value("")
    scheduled = site.api("GET", "scheduled_messages", auth=site.alice[1])["scheduled_messages"]
    assert [(s["content"], s["topic"]) for s in scheduled] == [(text, topic)]
    assert [m["content"] for m in topic_messages(site, "sealife", topic)] == ["<p>agenda</p>"]

    views_nav(page, width).get_by_role("link", name=re.compile("^Scheduled messages")).click()
    item = page.get_by_role("listitem").filter(has_text=text)
    expect(item).to_have_count(1)
    page.screenshot(path=str(tmp_path / f"scheduled-list-{width}.png"))
    assert serious(page) == []
    item.get_by_role("button", name=re.compile("^Delete")).click()
    expect(item).to_have_count(0)
    assert site.api("GET", "scheduled_messages", auth=site.alice[1])["scheduled_messages"] == []


def subscription(site, auth, name):
    return next(s for s in site.api("GET", "users/me/subscriptions", auth=auth)["subscriptions"] if s["name"] == name)


@pytest.mark.parametrize("width", WIDTHS)
def test_channel_notifications_and_read_receipts(pages, site, tmp_path, width):
    """In Settings' "Notifications" tab, is each channel's desktop, audible, mobile and email
    notification a checkbox ticked by its effective value, a click saving that one property of
    that one channel; and does "Message actions" > "View read receipts" open a dialog listing who
    read the message?"""
    page = pages(ALICE, viewport=WIDTHS[width])
    page.get_by_role("button", name="Settings").click()
    settings = page.get_by_role("dialog", name="Settings")
    settings.get_by_role("tab", name="Notifications").click()
    before = subscription(site, site.alice[1], "sealife")
    desktop = settings.get_by_role("checkbox", name="Desktop notifications for #sealife")
    email = settings.get_by_role("checkbox", name="Email notifications for #sealife")
    for kind in ("Audible", "Mobile"):
        expect(settings.get_by_role("checkbox", name=f"{kind} notifications for #sealife")).to_be_visible()
    expected = not before["desktop_notifications"] if before["desktop_notifications"] is not None else True
    desktop.set_checked(expected)
    page.screenshot(path=str(tmp_path / f"notifications-{width}.png"))
    assert serious(page) == []
    deadline_ok = False
    for _ in range(50):
        after = subscription(site, site.alice[1], "sealife")
        if after["desktop_notifications"] == expected:
            deadline_ok = True
            break
        page.wait_for_timeout(100)
    assert deadline_ok, after
    assert after["email_notifications"] == before["email_notifications"]
    assert after["audible_notifications"] == before["audible_notifications"]
    email.click()
    expect(email).to_be_checked(checked=not (before["email_notifications"] or False))
    settings.get_by_role("button", name="Close settings").click()

    text = f"read me {width}"
    site.api("POST", "messages", type="stream", to="sealife", topic="receipts", content=text)
    open_topic(page, site, "sealife", "receipts")
    article = page.get_by_role("article").filter(has_text=text)
    expect(article).to_be_visible()
    message_id = topic_messages(site, "sealife", "receipts")[-1]["id"]
    for _ in range(50):
        if "read" in site.api("GET", f"messages/{message_id}", auth=site.alice[1])["message"]["flags"]:
            break
        page.wait_for_timeout(100)
    article.click()
    article.get_by_role("button", name="Message actions").click()
    page.get_by_role("menuitem", name=re.compile("^View read receipts")).click()
    dialog = page.get_by_role("dialog", name="Read receipts")
    expect(dialog.get_by_role("listitem").filter(has_text="Alice Liddell")).to_have_count(1)
    page.screenshot(path=str(tmp_path / f"read-receipts-{width}.png"))
    assert serious(page) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_spoilers_hide_until_clicked(pages, site, tmp_path, width):
    """Does a spoiler show its header with its content hidden, the content showing after a click
    on "Show spoiler" and hiding again after "Hide spoiler"?"""
    topic = f"twists {width}"
    site.api("POST", "messages", auth=site.alice[1], type="stream", to="sealife", topic=topic,
             content="```spoiler Ending\nthe whale did it\n```")
    page = pages(ALICE, viewport=WIDTHS[width])
    open_topic(page, site, "sealife", topic)
    article = page.get_by_role("article").filter(has_text="Ending")
    secret = article.get_by_text("the whale did it")
    expect(article.get_by_text("Ending")).to_be_visible()
    expect(secret).to_be_hidden()
    article.get_by_role("button", name="Show spoiler").click()
    expect(secret).to_be_visible()
    page.screenshot(path=str(tmp_path / f"spoiler-open-{width}.png"))
    assert serious(page) == []
    article.get_by_role("button", name="Hide spoiler").click()
    expect(secret).to_be_hidden()


@pytest.mark.parametrize("width", WIDTHS)
def test_user_groups_create_and_add_members(pages, site, tmp_path, width):
    """In Settings' "Groups" tab, does "Create user group" make a group with its name,
    description and the members picked from the "Add members" suggestions, and does the group's
    own settings add a member with "Add members" and "Add"?"""
    name = f"divers {width}"
    page = pages(ALICE, viewport=WIDTHS[width])
    page.get_by_role("button", name="Settings").click()
    settings = page.get_by_role("dialog", name="Settings")
    settings.get_by_role("tab", name="Groups").click()
    settings.get_by_role("button", name="Create user group").click()
    dialog = page.get_by_role("dialog", name="Create user group")
    dialog.get_by_role("textbox", name="User group name").fill(name)
    dialog.get_by_role("textbox", name="User group description").fill("People who dive")
    dialog.get_by_role("textbox", name="Add members").fill("ali")
    dialog.get_by_role("option", name=re.compile("Alice Liddell")).click()
    expect(dialog.get_by_role("list", name="Members to add").get_by_role("listitem")).to_have_count(1)
    page.screenshot(path=str(tmp_path / f"create-group-{width}.png"))
    assert serious(page) == []
    dialog.get_by_role("button", name="Create", exact=True).click()
    expect(dialog).to_have_count(0)
    group = next(g for g in site.api("GET", "user_groups")["user_groups"] if g["name"] == name)
    assert (group["description"], group["members"]) == ("People who dive", [site.alice[2]])

    settings.get_by_role("button", name=name, exact=True).click()
    own = page.get_by_role("dialog", name=re.compile(f"^User group settings: {name}"))
    own.get_by_role("textbox", name="Add members").fill("bob")
    own.get_by_role("option", name=re.compile("Bob Builder")).click()
    own.get_by_role("button", name="Add", exact=True).click()
    expect(own.get_by_role("list", name="Members").get_by_role("listitem").filter(has_text="Bob Builder")).to_have_count(1)
    page.screenshot(path=str(tmp_path / f"group-settings-{width}.png"))
    assert serious(page) == []
    group = next(g for g in site.api("GET", "user_groups")["user_groups"] if g["name"] == name)
    assert sorted(group["members"]) == sorted([site.alice[2], site.bob[2]])


def test_organization_chooses_the_video_call_provider(pages, site):
    """Does the owner's "Video call provider" in Settings > Organization save the provider
    (PATCH /realm), a member's compose box then offering no "Add video call" once it is None?"""
    owner = pages(site.server.email, site.owner_password)
    owner.get_by_role("button", name="Settings").click()
    settings = owner.get_by_role("dialog", name="Settings")
    settings.get_by_role("tab", name="Organization", exact=True).click()
    settings.get_by_role("combobox", name="Video call provider").select_option(label="None")
    settings.get_by_role("button", name="Save video call settings").click()
    state = lambda: site.api("POST", "register", fetch_event_types=["realm"])["realm_video_chat_provider"]  # noqa: E731
    for _ in range(50):
        if state() == 0:
            break
        owner.wait_for_timeout(100)
    assert state() == 0
    member = pages(ALICE)
    expect(member.get_by_role("textbox", name="Message")).to_be_visible()
    expect(member.get_by_role("button", name="Add video call")).to_have_count(0)
    site.api("PATCH", "realm", video_chat_provider=1)


@pytest.mark.parametrize("width", WIDTHS)
def test_message_sent_outside_the_view_says_where_it_went(pages, site, tmp_path, width):
    """Does a message sent to a topic other than the one in view say "Sent! Your message is
    outside your current view." with a link to where it went?"""
    here, there = f"here {width}", f"there {width}"
    site.api("POST", "messages", auth=site.alice[1], type="stream", to="sealife", topic=here, content="anchor")
    page = pages(ALICE, viewport=WIDTHS[width])
    open_topic(page, site, "sealife", here)
    page.get_by_role("textbox", name="Topic").fill(there)
    box = page.get_by_role("textbox", name="Message")
    box.fill("over there")
    box.press("Enter")
    expect(page.get_by_text("Sent! Your message is outside your current view.")).to_be_visible()
    link = page.get_by_role("link", name=f"Go to #sealife > {there}")
    expect(link).to_be_visible()
    page.screenshot(path=str(tmp_path / f"sent-elsewhere-{width}.png"))
    assert serious(page) == []
    assert [m["content"] for m in topic_messages(site, "sealife", there)] == ["<p>over there</p>"]


@pytest.mark.parametrize("width", WIDTHS)
def test_theme_choice_is_saved_and_applied(pages, site, tmp_path, width):
    """Does Settings > Preferences > Theme save Dark, Light or Automatic as color_scheme
    (PATCH /settings: 2, 3, 1), the page taking the chosen colours at once whatever the
    system's scheme?"""
    page = pages(ALICE, viewport=WIDTHS[width], color_scheme="light")
    background = lambda: page.evaluate("getComputedStyle(document.body).backgroundColor")  # noqa: E731
    light = background()
    page.get_by_role("button", name="Settings").click()
    settings = page.get_by_role("dialog", name="Settings")
    settings.get_by_role("tab", name="Preferences").click()
    saved = lambda: site.api("POST", "register", auth=site.alice[1], fetch_event_types=["user_settings"],  # noqa: E731
                             client_capabilities={"user_settings_object": True})["user_settings"]["color_scheme"]
    for choice, value in (("Dark", 2), ("Light", 3), ("Automatic", 1)):
        settings.get_by_role("radio", name=choice).check()
        for _ in range(50):
            if saved() == value:
                break
            page.wait_for_timeout(100)
        assert saved() == value, choice
        # The page applies the choice once the server's answer reaches it, which may come just
        # after the server has stored it.
        if choice == "Dark":
            assert on_page_until(page, lambda: background() != light), choice
            page.screenshot(path=str(tmp_path / f"theme-dark-{width}.png"))
            assert serious(page) == []
        else:
            assert on_page_until(page, lambda: background() == light), (choice, background())


@pytest.mark.parametrize("width", WIDTHS)
def test_mentions_suggest_wildcards_and_groups(pages, site, tmp_path, width):
    """Does typing "@al" in the message box suggest the wildcard mention "all", and "@cre" a
    user group named crew, inserting @*crew ...* when picked?"""
    group = f"crew {width}"
    site.api("POST", "user_groups/create", name=group, description="The boat's crew", members=[site.alice[2]])
    page = pages(ALICE, viewport=WIDTHS[width])
    box = page.get_by_role("textbox", name="Message")
    options = page.get_by_role("listbox", name="Suggestions").get_by_role("option")
    box.fill("@al")
    expect(options.filter(has_text=re.compile("^all"))).to_have_count(1)
    box.fill("hello @cre")
    expect(options.filter(has_text=group)).to_have_count(1)
    page.screenshot(path=str(tmp_path / f"mention-group-{width}.png"))
    assert serious(page) == []
    options.filter(has_text=group).click()
    expect(box).to_have_value(f"hello @*{group}* ")


@pytest.mark.parametrize("width", WIDTHS)
def test_muted_topics_are_left_out_of_the_feed_and_channel_view(pages, site, tmp_path, width):
    """Are a muted topic's messages left out of the Combined feed and of its channel's view, as
    in Zulip, while the topic's own view still shows them?"""
    hush, loud = f"hush {width}", f"loud {width}"
    site.api("POST", "user_topics", auth=site.alice[1], stream_id=site.stream_id("sealife"), topic=hush, visibility_policy=1)
    site.api("POST", "messages", auth=site.bob[1], type="stream", to="sealife", topic=hush, content=f"quiet words {width}")
    site.api("POST", "messages", auth=site.bob[1], type="stream", to="sealife", topic=loud, content=f"loud words {width}")
    page = pages(ALICE, viewport=WIDTHS[width])
    for hash_ in ("#feed", f"#narrow/channel/{site.stream_id('sealife')}-sealife"):
        page.goto(f"{site.url}/{hash_}")
        expect(page.get_by_role("article").filter(has_text=f"loud words {width}")).to_be_visible()
        expect(page.get_by_role("article").filter(has_text=f"quiet words {width}")).to_have_count(0)
    page.screenshot(path=str(tmp_path / f"muted-left-out-{width}.png"))
    assert serious(page) == []
    open_topic(page, site, "sealife", hush)
    expect(page.get_by_role("article").filter(has_text=f"quiet words {width}")).to_be_visible()


# Records every uploaded-image preview the feed shows, as it is added: class, src and box.
PREVIEW_RECORDER = """() => {
    window.__previews = [];
    const note = (img) => {
        const box = img.getBoundingClientRect();
        window.__previews.push({cls: img.className, src: img.getAttribute("src"), width: box.width, height: box.height});
    };
    new MutationObserver((changes) => {
        for (const change of changes) for (const node of change.addedNodes) {
            if (node.nodeType === 1) node.querySelectorAll(".message_inline_image img").forEach(note);
        }
    }).observe(document.body, {childList: true, subtree: true});
}"""


@pytest.mark.parametrize("width", WIDTHS)
def test_uploaded_image_shows_a_sized_placeholder_until_its_thumbnail(pages, site, tmp_path, width):
    """While an uploaded image's thumbnail is being made, does its message show a box of the
    thumbnail's proportions with the spinner (Zulip's placeholder markup), and does the
    thumbnail take its place when the rendering-only update_message arrives, without a reload
    and without the message being marked edited?"""
    import io

    import requests
    from PIL import Image

    def upload(name, image, kind):
        data = io.BytesIO()
        image.save(data, kind)
        answer = requests.post(f"{site.url}/api/v1/user_uploads", auth=site.owner_auth, timeout=30,
                               files={"file": (name, data.getvalue())}).json()
        assert answer["result"] == "success", answer
        return answer["url"]

    topic = f"photos {width}"
    site.api("POST", "messages", type="stream", to="sealife", topic=topic, content="photos follow")
    page = pages(ALICE, viewport=WIDTHS[width])
    open_topic(page, site, "sealife", topic)
    page.evaluate(PREVIEW_RECORDER)
    # Large images queued ahead keep the worker busy for a few seconds (each is decoded whole):
    # the message goes out while its own thumbnail is still to be made.
    for number in range(3):
        upload(f"wall-{number}.png", Image.new("RGB", (5000, 5000), (number * 60, 90, 160)), "PNG")
    url = upload("photo.jpg", Image.new("RGB", (1680, 1120), (20, 120, 200)), "JPEG")
    message_id = site.api("POST", "messages", type="stream", to="sealife", topic=topic,
                          content=f"[photo.jpg]({url})")["id"]
    article = page.get_by_role("article").filter(has_text="photo.jpg")
    waiting = article.locator(".message_inline_image img.image-loading-placeholder")
    expect(waiting).to_be_visible()
    page.screenshot(path=str(tmp_path / f"thumbnail-pending-{width}.png"))
    assert serious(page) == []
    thumb = article.locator(".message_inline_image img")
    expect(thumb).to_have_attribute("src", re.compile(r"^/user_uploads/thumbnail/.+/840x560\.webp$"), timeout=60_000)
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=thumb.element_handle())
    shown = [entry for entry in page.evaluate("window.__previews") if "image-loading-placeholder" in entry["cls"]]
    assert shown and shown[0]["src"] == "/static/images/loading/loader-black.svg", shown
    assert 0 < shown[0]["width"] <= 302 and abs(shown[0]["width"] / shown[0]["height"] - 1.5) < 0.05, shown
    final = thumb.bounding_box()
    assert abs(final["width"] - shown[0]["width"]) <= 3 and abs(final["height"] - shown[0]["height"]) <= 3  # nothing moved
    expect(article.locator(".mark", has_text="edited")).to_have_count(0)
    page.screenshot(path=str(tmp_path / f"thumbnail-ready-{width}.png"))
    assert serious(page) == []
    stored = site.api("GET", f"messages/{message_id}")["message"]
    assert "/user_uploads/thumbnail/" in stored["content"] and "image-loading-placeholder" not in stored["content"]
    assert "last_edit_timestamp" not in stored
