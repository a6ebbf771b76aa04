"""Website previews (INLINE_URL_EMBED_PREVIEW, workers/link_previews.py): fetched after the send
from a local HTTP server, appended as Zulip's message_embed markup, announced by a rendering-only
update_message; off by default, and refused for private addresses unless allowed."""

import pytest

from ..support.helpers import content_of, get_events, local_http_server, ok, register, wait_for

PAGE = b"""<!doctype html><html><head><title>Fallback</title>
<meta property="og:title" content="The &quot;Site&quot; <Title>">
<meta property="og:description" content="About <b>things</b> & more">
<meta property="og:image" content="/img/cover.png">
</head><body>hello</body></html>"""


@pytest.fixture
def site():
    hits = []
    answers = {"/page": ("text/html; charset=utf-8", PAGE), "/plain": ("text/plain", b"just text")}

    def answer(path):
        hits.append(path)
        return answers.get(path)

    with local_http_server(answer) as base:
        yield base, hits


def test_preview_appended_and_announced(org, app, site):
    """With previews on (and loopback allowed for the test server), does a sent link get Zulip's
    message_embed (escaped title and description, image through the proxy) and its recipients a
    rendering_only update_message event with the new HTML?"""
    base, hits = site
    app.config["INLINE_URL_EMBED_PREVIEW"] = True
    app.config["OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES"] = True
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    queue_id = register(othello, event_types='["update_message"]')["queue_id"]
    msg_id = ok(hamlet.post("messages", type="stream", to="Denmark", topic="links",
                            content=f"look at {base}/page and {base}/plain"))["id"]
    html = wait_for(lambda: next((c for c in [content_of(hamlet, msg_id)] if "message_embed" in c), None))
    assert html, content_of(hamlet, msg_id)
    image = f"/thumbnail?url=http%3A%2F%2F127.0.0.1%3A{base.rsplit(':', 1)[1]}%2Fimg%2Fcover.png&amp;size=thumbnail"
    assert (f'<div class="message_embed"><a class="message_embed_image" href="{base}/page" '
            f'style="background-image: url(&quot;{image}&quot;)"></a><div class="data-container">'
            f'<div class="message_embed_title"><a href="{base}/page" title="The &quot;Site&quot; &lt;Title&gt;">'
            f'The "Site" &lt;Title&gt;</a></div><div class="message_embed_description">'
            f'About &lt;b&gt;things&lt;/b&gt; &amp; more</div></div></div>') in html
    assert html.count("message_embed_title") == 1  # the text/plain page has no preview
    assert "<script" not in html
    events = wait_for(lambda: [e for e in get_events(othello, queue_id) if e["type"] == "update_message"])
    assert events and events[0]["rendering_only"] is True and events[0]["message_id"] == msg_id
    assert events[0]["rendered_content"] == html and "flags" in events[0]
    assert sorted(hits) == ["/page", "/plain"]


def test_off_by_default_and_private_addresses_refused(org, app, site):
    """Off by default, is nothing fetched? On, but without the private-address allowance, is the
    loopback server never contacted?"""
    base, hits = site
    assert app.config["INLINE_URL_EMBED_PREVIEW"] is False
    hamlet = org.client(org.hamlet)
    first = ok(hamlet.post("messages", type="stream", to="Denmark", topic="links", content=f"{base}/page"))["id"]
    app.config["INLINE_URL_EMBED_PREVIEW"] = True
    app.config["OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES"] = False
    second = ok(hamlet.post("messages", type="stream", to="Denmark", topic="links", content=f"{base}/page"))["id"]
    app.extensions["chat_appliance"].workers["link_previews"].close()  # wait for the background work to finish
    assert hits == []
    assert "message_embed" not in content_of(hamlet, first) + content_of(hamlet, second)
