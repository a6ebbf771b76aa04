"""Website previews (Open Graph), Zulip's INLINE_URL_EMBED_PREVIEW: off by default.

When on, a listener on committed message events takes the links of a new message by a person
(bots' messages get none, as on Zulip), off the request path on a small worker pool, fetches each
page through lib/safe_fetch (the private-address guard of outgoing webhooks, no redirects
followed) with a time and a size limit, reads its Open Graph title, description and image, and
appends Zulip's ``message_embed`` markup to the message's stored HTML. Everyone who has the
message gets an ``update_message`` event with ``rendering_only: true``, as Zulip sends.

Links that already get a preview (images, uploads, YouTube), links into the organization and
links inside quotes are left alone; at most MAX_EMBEDS links per message are fetched.

Vimeo links get their data from Vimeo's oEmbed endpoint (VIMEO_OEMBED_URL) instead, as Zulip
asks its oEmbed providers first: a video answer (an embed HTML and a thumbnail) becomes Zulip's
``embed-video message_inline_image`` preview, the player's HTML kept escaped in ``data-id`` for
the client, and a link written as the bare URL is retitled "Vimeo - <title>" when image previews
(INLINE_IMAGE_PREVIEW) are on, as Zulip does only then. Any other answer falls back to the page's
Open Graph data.
"""

from __future__ import annotations

import contextvars
import html as html_module
import json
import logging
import re
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from typing import Any, Optional
from urllib.parse import urlencode, urljoin, urlsplit

from chat_appliance import __version__
from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib import safe_fetch
from chat_appliance.markdown.urls import thumbnail_url
from chat_appliance.models import Message, UserMessage, UserProfile, database
from chat_appliance.lib.messages import flags_to_names
from chat_appliance.lib import event_catalogue

log = logging.getLogger(__name__)

MAX_EMBEDS = 3
FETCH_TIMEOUT_SECONDS = 5.0
# The head of a page is enough for its meta tags.
MAX_PAGE_BYTES = 512 * 1024
MAX_TITLE = 300
MAX_DESCRIPTION = 1000
USER_AGENT = f"Mozilla/5.0 (compatible; ChatApplianceLinkPreview/{__version__})"
# Links in the stored HTML that may get a website preview: plain http(s) links outside quotes.
_LINK_RE = re.compile(r'<a href="(https?://[^"]+)"(?: title="[^"]*")?>')
_PREVIEWED_CLASSES = ("message_inline_image", "youtube-video", "message_embed", "embed-video")
# The links Vimeo's oEmbed endpoint answers for (its schemes in the oEmbed providers list), and
# the ones Zulip calls a Vimeo video (whose bare-URL link text becomes the video's title).
_VIMEO_OEMBED_RE = re.compile(r"https?://(?:vimeo\.com/|player\.vimeo\.com/video/)")
_VIMEO_VIDEO_RE = re.compile(r"(?:https?)?://(?:www\.)?vimeo.com/(?:channels/(?:\w+/)?|groups/[^/]*/videos/)?(\d+)(?:/\?)?")
MAX_OEMBED_BYTES = 64 * 1024
MAX_OEMBED_HTML = 4000


class _OpenGraph(HTMLParser):
    """og:title, og:description, og:image (and <title>, meta description as fallbacks)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: dict[str, str] = {}
        self._in_title = False
        self._title: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attributes = {k.lower(): (v or "") for k, v in attrs}
        if tag == "meta":
            key = (attributes.get("property") or attributes.get("name") or "").lower()
            if key in ("og:title", "og:description", "og:image", "description") and key not in self.found:
                self.found[key] = attributes.get("content", "").strip()
        elif tag == "title":
            self._in_title = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self._title.append(data)

    def result(self) -> dict[str, str]:
        title = self.found.get("og:title") or "".join(self._title).strip()
        return {"title": title[:MAX_TITLE],
                "description": (self.found.get("og:description") or self.found.get("description") or "")[:MAX_DESCRIPTION],
                "image": self.found.get("og:image", "")}


def fetch_open_graph(url: str, *, allow_private: bool) -> Optional[dict[str, str]]:
    """The page's preview data, or None (refused address, error, not HTML, no title)."""
    try:
        response = safe_fetch.fetch(url, headers={"User-Agent": USER_AGENT, "Accept": "text/html"},
                                    timeout=FETCH_TIMEOUT_SECONDS, allow_private=allow_private,
                                    max_bytes=MAX_PAGE_BYTES)
    except (safe_fetch.UnsafeURLError, OSError) as error:
        log.info("No preview for a link: %s", error)
        return None
    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if response.status != 200 or content_type not in ("text/html", "application/xhtml+xml"):
        return None
    parser = _OpenGraph()
    try:
        parser.feed(response.body.decode("utf-8", "replace"))
    except Exception:  # a page no parser makes sense of has no preview
        return None
    data = parser.result()
    if not data["title"]:
        return None
    image = urljoin(url, data["image"]) if data["image"] else ""
    data["image"] = image if urlsplit(image).scheme in ("http", "https") else ""
    return data


def is_vimeo_video(url: str) -> bool:
    """Whether Zulip treats the link as a Vimeo video (its text may become the video's title)."""
    return _VIMEO_VIDEO_RE.fullmatch(url) is not None


def oembed_endpoint(url: str, vimeo_endpoint: str) -> Optional[str]:
    """The oEmbed endpoint that answers for the link (only Vimeo's here), or None."""
    parts = urlsplit(url)
    normalized = parts._replace(scheme=parts.scheme.lower(), netloc=parts.netloc.lower()).geturl()
    return vimeo_endpoint if _VIMEO_OEMBED_RE.match(normalized) else None


def fetch_oembed_video(url: str, endpoint: str, *, allow_private: bool) -> Optional[dict[str, str]]:
    """The endpoint's answer for the link when it is a video with a player and a thumbnail, else None."""
    query = urlencode({"url": url, "maxwidth": 640, "maxheight": 480})
    try:
        response = safe_fetch.fetch(f"{endpoint}{'&' if '?' in endpoint else '?'}{query}",
                                    headers={"User-Agent": USER_AGENT, "Accept": "application/json"},
                                    timeout=FETCH_TIMEOUT_SECONDS, allow_private=allow_private,
                                    max_bytes=MAX_OEMBED_BYTES)
    except (safe_fetch.UnsafeURLError, OSError) as error:
        log.info("No oEmbed data for a link: %s", error)
        return None
    if response.status != 200:
        return None
    try:
        data = json.loads(response.body.decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("type") != "video":
        return None
    player, thumbnail = data.get("html"), data.get("thumbnail_url")
    if not isinstance(player, str) or not player or not isinstance(thumbnail, str) or not thumbnail:
        return None
    if player.startswith("<![CDATA[") and player.endswith("]]>"):
        player = player[len("<![CDATA["):-len("]]>")]
    thumbnail = urljoin(endpoint, thumbnail)
    if urlsplit(thumbnail).scheme not in ("http", "https"):
        return None
    title = data.get("title")
    return {"html": player[:MAX_OEMBED_HTML], "image": thumbnail,
            "title": title[:MAX_TITLE] if isinstance(title, str) else ""}


def video_embed_html(url: str, data: dict[str, str]) -> str:
    """Zulip's embed-video markup: the player's HTML escaped in data-id, the thumbnail proxied."""
    href = html_module.escape(url, quote=True)
    player = html_module.escape(data["html"], quote=True)
    title = f' title="{html_module.escape(data["title"], quote=True)}"' if data["title"] else ""
    image = html_module.escape(thumbnail_url(data["image"], "thumbnail"), quote=True)
    return (f'<div class="embed-video message_inline_image"><a data-id="{player}" href="{href}"{title}>'
            f'<img src="{image}"></a></div>')


def retitle_bare_link(rendered: str, url: str, title: str) -> str:
    """The links written as the bare URL, outside quotes (which get no previews), get
    "Vimeo - <title>" as their text."""
    href = html_module.escape(url, quote=True)
    bare = f'<a href="{href}">{html_module.escape(url, quote=False)}</a>'
    titled = f'<a href="{href}">{html_module.escape("Vimeo - " + title, quote=False)}</a>'
    parts = re.split(r"(<blockquote>.*?</blockquote>)", rendered, flags=re.S)
    return "".join(part if part.startswith("<blockquote>") else part.replace(bare, titled) for part in parts)


def embed_html(url: str, data: dict[str, str]) -> str:
    """Zulip's message_embed markup; every value escaped, the image through the image proxy."""
    href = html_module.escape(url, quote=True)
    title = html_module.escape(data["title"], quote=True)
    parts = ['<div class="message_embed">']
    if data["image"]:
        proxied = html_module.escape(thumbnail_url(data["image"], "thumbnail"), quote=True)
        parts.append(f'<a class="message_embed_image" href="{href}" '
                     f'style="background-image: url(&quot;{proxied}&quot;)"></a>')
    parts.append(f'<div class="data-container"><div class="message_embed_title"><a href="{href}" title="{title}">'
                 f"{html_module.escape(data['title'], quote=False)}</a></div>")
    if data["description"]:
        parts.append(f'<div class="message_embed_description">{html_module.escape(data["description"], quote=False)}</div>')
    parts.append("</div></div>")
    return "".join(parts)


def preview_candidates(rendered: str, realm_url: str) -> list[str]:
    """The message's links that may get a website preview, in order, at most MAX_EMBEDS."""
    previewed: set[str] = set()
    for cls in _PREVIEWED_CLASSES:
        for block in re.finditer(rf'<div class="{cls}[^"]*">(.*?)</div>', rendered, re.S):
            previewed.update(html_module.unescape(u) for u in re.findall(r'href="([^"]+)"', block.group(1)))
    without_quotes = re.sub(r"<blockquote>.*?</blockquote>", "", rendered, flags=re.S)
    out: list[str] = []
    own = realm_url.rstrip("/") + "/"
    for m in _LINK_RE.finditer(without_quotes):
        url = html_module.unescape(m.group(1))
        if url in previewed or url in out or url.startswith(own):
            continue
        out.append(url)
        if len(out) == MAX_EMBEDS:
            break
    return out


def do_add_link_previews(message_id: int, previews: list[tuple[str, dict[str, str]]],
                         retitle_videos: bool = False) -> None:
    """Append the previews to the stored HTML and tell the message's recipients. A preview with
    "html" is a video's (oEmbed); with `retitle_videos`, its Vimeo link's bare text becomes its title."""
    with write_transaction():
        message = Message.get_or_none(Message.id == message_id)
        if message is None:
            return
        rendered = message.rendered_content
        for url, data in previews:
            if "html" in data and retitle_videos and data["title"] and is_vimeo_video(url):
                rendered = retitle_bare_link(rendered, url, data["title"])
        message.rendered_content = rendered + "\n" + "\n".join(
            video_embed_html(url, data) if "html" in data else embed_html(url, data) for url, data in previews)
        message.save()
        flags = {row.user_profile_id: row.flags for row in UserMessage.select().where(UserMessage.message == message_id)}
    event = event_catalogue.update_message_rendering(
        message.last_edit_time or message.date_sent, message.id, message.content, message.rendered_content,
        message.is_me_message, {uid: flags_to_names(bits) for uid, bits in flags.items()})
    publish(event, sorted(flags))


class LinkPreviewer:
    """The event listener; one per app, its workers stopped by close()."""

    def __init__(self, config: Any, workers: int = 2) -> None:
        self.config = config
        self._workers = workers
        self._pool: Optional[ThreadPoolExecutor] = None

    def __call__(self, event: dict, user_ids: Any) -> None:
        if event.get("type") != "message" or not self.config.get("INLINE_URL_EMBED_PREVIEW"):
            return
        message = event["message"]
        if 'href="http' not in message.get("content", ""):
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="link-preview")
        self._pool.submit(contextvars.copy_context().run, self._run_guarded, message["id"])

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _run_guarded(self, message_id: int) -> None:
        try:
            with database.connection_context():
                self.run(message_id)
        except Exception:  # a worker must survive any page
            log.exception("link preview failed for message %s", message_id)

    def run(self, message_id: int) -> None:
        message = Message.get_or_none(Message.id == message_id)
        if message is None:
            return
        sender = UserProfile.get_or_none(UserProfile.id == message.sender_id)
        if sender is None or sender.is_bot:
            return
        allow_private = bool(self.config.get("OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES"))
        previews = []
        for url in preview_candidates(message.rendered_content, sender.realm.url):
            endpoint = oembed_endpoint(url, self.config.get("VIMEO_OEMBED_URL") or "")
            data = fetch_oembed_video(url, endpoint, allow_private=allow_private) if endpoint else None
            if data is None:
                data = fetch_open_graph(url, allow_private=allow_private)
            if data is not None:
                previews.append((url, data))
        if previews:
            do_add_link_previews(message_id, previews, retitle_videos=bool(self.config.get("INLINE_IMAGE_PREVIEW")))
