"""The link preview worker: website previews (Open Graph), Zulip's INLINE_URL_EMBED_PREVIEW, off
by default.

When on, it takes the links of each new message by a person (bots' messages get none, as on
Zulip), off the request path on a small thread pool, fetches each page through
clients/safe_fetch (the private-address guard of outgoing webhooks, no redirects followed) with a
time and a size limit, reads its Open Graph title, description and image, and hands them to
do_add_link_previews (actions/link_previews.py), which adds them to the message.

Links that already get a preview (images, uploads, YouTube), links into the organization and
links inside quotes are left alone; at most MAX_EMBEDS links per message are fetched.

Vimeo links get their data from Vimeo's oEmbed endpoint (VIMEO_OEMBED_URL) instead, as Zulip
asks its oEmbed providers first: a video answer (an embed HTML and a thumbnail) becomes a video
preview. Any other answer falls back to the page's Open Graph data.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
from concurrent.futures import ThreadPoolExecutor
from html import unescape
from html.parser import HTMLParser
from typing import Any, Optional
from urllib.parse import urlencode, urljoin, urlsplit

from chat_appliance import __version__
from chat_appliance.actions.link_previews import do_add_link_previews
from chat_appliance.clients import safe_fetch
from chat_appliance.lib.database_outage import log_failure
from chat_appliance.models import Message, UserProfile, database
from chat_appliance.workers.base import WorkerContext

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
# The links Vimeo's oEmbed endpoint answers for (its schemes in the oEmbed providers list).
_VIMEO_OEMBED_RE = re.compile(r"https?://(?:vimeo\.com/|player\.vimeo\.com/video/)")
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


def preview_candidates(rendered: str, realm_url: str) -> list[str]:
    """The message's links that may get a website preview, in order, at most MAX_EMBEDS."""
    previewed: set[str] = set()
    for cls in _PREVIEWED_CLASSES:
        for block in re.finditer(rf'<div class="{cls}[^"]*">(.*?)</div>', rendered, re.S):
            previewed.update(unescape(u) for u in re.findall(r'href="([^"]+)"', block.group(1)))
    without_quotes = re.sub(r"<blockquote>.*?</blockquote>", "", rendered, flags=re.S)
    out: list[str] = []
    own = realm_url.rstrip("/") + "/"
    for m in _LINK_RE.finditer(without_quotes):
        url = unescape(m.group(1))
        if url in previewed or url in out or url.startswith(own):
            continue
        out.append(url)
        if len(out) == MAX_EMBEDS:
            break
    return out


class LinkPreviewer:
    """The worker (workers/base.py); one per app, its threads stopped by close()."""

    def __init__(self, config: Any, workers: int = 2) -> None:
        self.config = config
        self._workers = workers
        self._pool: Optional[ThreadPoolExecutor] = None

    @classmethod
    def start(cls, context: WorkerContext) -> LinkPreviewer:
        return cls(context.config)

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
        except Exception as error:  # a worker must survive any page
            log_failure(log, error, "link preview failed for message %s", message_id)

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
