"""Website previews added to a message: Zulip's ``message_embed`` markup (a page's Open Graph
title, description and image) and its ``embed-video message_inline_image`` markup (an oEmbed
video answer, the player's HTML kept escaped in ``data-id`` for the client), appended to the
message's stored HTML. Everyone who has the message gets an ``update_message`` event with
``rendering_only: true``, as Zulip sends. With INLINE_IMAGE_PREVIEW on, a Vimeo link written as
the bare URL is retitled "Vimeo - <title>", as Zulip does only then.

The pages are fetched off the request path by the link preview worker (workers/link_previews.py).
"""

from __future__ import annotations

import html as html_module
import re

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.messages import flags_to_names
from chat_appliance.lib import event_catalogue
from chat_appliance.markdown.urls import thumbnail_url
from chat_appliance.models import Message, UserMessage

# The links Zulip calls a Vimeo video (whose bare-URL link text becomes the video's title).
_VIMEO_VIDEO_RE = re.compile(r"(?:https?)?://(?:www\.)?vimeo.com/(?:channels/(?:\w+/)?|groups/[^/]*/videos/)?(\d+)(?:/\?)?")


def is_vimeo_video(url: str) -> bool:
    """Whether Zulip treats the link as a Vimeo video (its text may become the video's title)."""
    return _VIMEO_VIDEO_RE.fullmatch(url) is not None


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


