"""Website previews (Open Graph), Zulip's INLINE_URL_EMBED_PREVIEW: off by default.

When on, a listener on committed message events takes the links of a new message by a person
(bots' messages get none, as on Zulip), off the request path on a small worker pool, fetches each
page through lib/safe_fetch (the private-address guard of outgoing webhooks, no redirects
followed) with a time and a size limit, reads its Open Graph title, description and image, and
appends Zulip's ``message_embed`` markup to the message's stored HTML. Everyone who has the
message gets an ``update_message`` event with ``rendering_only: true``, as Zulip sends.

Links that already get a preview (images, uploads, YouTube), links into the organization and
links inside quotes are left alone; at most MAX_EMBEDS links per message are fetched.
"""

from __future__ import annotations

import contextvars
import html as html_module
import logging
import re
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from typing import Any, Optional
from urllib.parse import urljoin, urlsplit

from chat_appliance import __version__
from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib import safe_fetch
from chat_appliance.markdown.previews import thumbnail_url
from chat_appliance.models import Message, UserMessage, UserProfile, database
from chat_appliance.lib.messages import flags_to_names

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
_PREVIEWED_CLASSES = ("message_inline_image", "youtube-video", "message_embed")


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


def do_add_link_previews(message_id: int, previews: list[tuple[str, dict[str, str]]]) -> None:
    """Append the previews to the stored HTML and tell the message's recipients."""
    with write_transaction():
        message = Message.get_or_none(Message.id == message_id)
        if message is None:
            return
        message.rendered_content = message.rendered_content + "\n" + "\n".join(
            embed_html(url, data) for url, data in previews)
        message.save()
        flags = {row.user_profile_id: row.flags for row in UserMessage.select().where(UserMessage.message == message_id)}
    event = {"type": "update_message", "user_id": None, "edit_timestamp": message.last_edit_time or message.date_sent,
             "message_id": message.id, "message_ids": [message.id], "rendering_only": True,
             "content": message.content, "rendered_content": message.rendered_content,
             "is_me_message": message.is_me_message,
             "user_flags": {uid: flags_to_names(bits) for uid, bits in flags.items()}}
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
            data = fetch_open_graph(url, allow_private=allow_private)
            if data is not None:
                previews.append((url, data))
        if previews:
            do_add_link_previews(message_id, previews)
