"""Vimeo previews (workers/link_previews.py): with INLINE_URL_EMBED_PREVIEW on, a Vimeo link's
data come from the oEmbed endpoint (VIMEO_OEMBED_URL, here a local server standing in for
Vimeo's), become Zulip's embed-video markup, and a bare link is retitled "Vimeo - <title>" only
while INLINE_IMAGE_PREVIEW is on."""

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from chat_appliance.workers import link_previews

from ..support.helpers import content_of, get_events, local_http_server, ok, register, wait_for

PLAYER = '<iframe src="https://player.vimeo.com/video/1084537?app_id=1" width="640" title="A & B"></iframe>'


@pytest.fixture
def oembed():
    asked = []
    answers = {"/oembed.json": {"type": "video", "title": 'Big "Buck" <Bunny>', "html": PLAYER,
                                "thumbnail_url": "https://i.vimeocdn.com/video/1-d_640"},
               "/link.json": {"type": "link", "title": "not a video"}}

    def answer(path):
        parts = urlsplit(path)
        asked.append((parts.path, parse_qs(parts.query)))
        return "application/json", json.dumps(answers[parts.path]).encode()

    with local_http_server(answer) as base:
        yield base, asked


def _configure(app, base, path="/oembed.json"):
    app.config["INLINE_URL_EMBED_PREVIEW"] = True
    app.config["OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES"] = True
    app.config["VIMEO_OEMBED_URL"] = base + path


EXPECTED_PREVIEW = (
    '<div class="embed-video message_inline_image"><a data-id="&lt;iframe src=&quot;https://player.vimeo.com/'
    'video/1084537?app_id=1&quot; width=&quot;640&quot; title=&quot;A &amp; B&quot;&gt;&lt;/iframe&gt;" '
    'href="https://vimeo.com/1084537" title="Big &quot;Buck&quot; &lt;Bunny&gt;">'
    '<img src="/thumbnail?url=https%3A%2F%2Fi.vimeocdn.com%2Fvideo%2F1-d_640&amp;size=thumbnail"></a></div>')


def test_vimeo_link_gets_video_preview_and_title(org, app, oembed):
    """Does a bare Vimeo link get Zulip's embed-video preview (player HTML escaped in data-id,
    thumbnail through the image proxy), its text become "Vimeo - <title>" (not in a quote), and the recipients a
    rendering-only update_message; was the endpoint asked with Zulip's url/maxwidth/maxheight?"""
    base, asked = oembed
    _configure(app, base)
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    queue_id = register(othello, event_types='["update_message"]')["queue_id"]
    msg_id = ok(hamlet.post("messages", type="stream", to="Denmark", topic="videos",
                            content="see https://vimeo.com/1084537\n> https://vimeo.com/1084537"))["id"]
    html = wait_for(lambda: next((c for c in [content_of(hamlet, msg_id)] if "embed-video" in c), None))
    assert html == ('<p>see <a href="https://vimeo.com/1084537">Vimeo - Big "Buck" &lt;Bunny&gt;</a></p>\n'
                    '<blockquote>\n<p><a href="https://vimeo.com/1084537">https://vimeo.com/1084537</a></p>\n'
                    '</blockquote>\n' + EXPECTED_PREVIEW), html
    assert asked == [("/oembed.json", {"url": ["https://vimeo.com/1084537"], "maxwidth": ["640"],
                                       "maxheight": ["480"]})]
    events = wait_for(lambda: [e for e in get_events(othello, queue_id) if e["type"] == "update_message"])
    assert events[0]["rendering_only"] is True and events[0]["rendered_content"] == html


def test_named_link_and_image_previews_off_keep_their_text(org, app, oembed):
    """A Vimeo link with its own text keeps it; with INLINE_IMAGE_PREVIEW off the preview still
    comes (Zulip's oEmbed embed does not depend on it) but the bare link is not retitled."""
    base, _ = oembed
    _configure(app, base)
    hamlet = org.client(org.hamlet)
    named = ok(hamlet.post("messages", type="stream", to="Denmark", topic="videos",
                           content="[the film](https://vimeo.com/1084537)"))["id"]
    html = wait_for(lambda: next((c for c in [content_of(hamlet, named)] if "embed-video" in c), None))
    assert html == '<p><a href="https://vimeo.com/1084537">the film</a></p>\n' + EXPECTED_PREVIEW, html
    app.config["INLINE_IMAGE_PREVIEW"] = False
    bare = ok(hamlet.post("messages", type="stream", to="Denmark", topic="videos",
                          content="https://vimeo.com/1084537"))["id"]
    html = wait_for(lambda: next((c for c in [content_of(hamlet, bare)] if "embed-video" in c), None))
    assert html and html.startswith('<p><a href="https://vimeo.com/1084537">https://vimeo.com/1084537</a></p>\n'), html


def test_no_preview_when_off_or_not_a_video(org, app, oembed, monkeypatch):
    """Previews off: is the endpoint never asked? A non-video answer: no embed-video, the link
    text untouched, and the page's Open Graph data asked instead (recorded here rather than
    fetched from the real Vimeo). A non-Vimeo link is not sent to the endpoint."""
    base, asked = oembed
    hamlet = org.client(org.hamlet)
    app.config["VIMEO_OEMBED_URL"] = base + "/oembed.json"
    first = ok(hamlet.post("messages", type="stream", to="Denmark", topic="videos",
                           content="https://vimeo.com/1084537"))["id"]
    app.extensions["chat_appliance"].workers["link_previews"].close()
    assert asked == [] and "embed-video" not in content_of(hamlet, first)
    pages = []
    monkeypatch.setattr(link_previews, "fetch_open_graph", lambda url, allow_private: pages.append(url))
    _configure(app, base, "/link.json")
    second = ok(hamlet.post("messages", type="stream", to="Denmark", topic="videos",
                            content="https://player.vimeo.com/video/7 and https://example.invalid/x"))["id"]
    wait_for(lambda: len(pages) == 2)
    app.extensions["chat_appliance"].workers["link_previews"].close()
    assert [path for path, _ in asked] == ["/link.json"]
    assert asked[0][1]["url"] == ["https://player.vimeo.com/video/7"]
    assert pages == ["https://player.vimeo.com/video/7", "https://example.invalid/x"]
    html = content_of(hamlet, second)
    assert "embed-video" not in html and "Vimeo - " not in html
