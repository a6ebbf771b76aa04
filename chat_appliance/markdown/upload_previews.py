"""The preview markup of an uploaded image, Zulip's, in its two states, and the rewrite of stored
HTML from the first to the second.

While its thumbnail is being made, an uploaded image renders as a placeholder:

    <div class="message_inline_image"><a href="/user_uploads/{path_id}" title="..."><img
    class="image-loading-placeholder" data-original-content-type="image/png"
    data-original-dimensions="300x200" src="/static/images/loading/loader-black.svg"></a></div>

Once it exists, the img points at the thumbnail instead (no class; data-animated and
data-transcoded-image when they apply). An image that could not be thumbnailed after all loses
its whole preview div, as Zulip's worker drops it: what is left is the link.

The thumbnail worker rewrites the stored HTML of the messages linking the image (rather than
rendering their Markdown again, which would drop website previews added since and re-evaluate
mentions): only the placeholder's img, or its div, changes. Attributes are written in the order
the sanitiser writes them (sorted), so that a rewritten message is the HTML a message sent now
renders. No Python-Markdown here: the worker needs none of it.
"""

from __future__ import annotations

import html as html_module
import re
from typing import TYPE_CHECKING, Optional
from urllib.parse import unquote

if TYPE_CHECKING:
    from chat_appliance.markdown.context import UploadImage

# Zulip's placeholder while an upload's thumbnail is being made.
LOADING_PLACEHOLDER = "/static/images/loading/loader-black.svg"
PLACEHOLDER_CLASS = "image-loading-placeholder"
UPLOAD_PREFIX = "/user_uploads/"

# A preview div as the renderer stores it; its img a placeholder.
_PENDING_PREVIEW = re.compile(
    r'(?P<before>\n?)<div class="message_inline_image"><a href="(?P<href>[^"]*)"(?: title="[^"]*")?>'
    r'(?P<img><img class="image-loading-placeholder"[^>]*>)</a></div>')


def upload_image_attributes(upload: UploadImage) -> dict[str, str]:
    """The img's attributes for an uploaded image: its thumbnail, or the placeholder while it is
    not made yet."""
    attributes = {"data-original-content-type": upload.content_type,
                  "data-original-dimensions": f"{upload.width}x{upload.height}"}
    if upload.thumbnail_url is None:
        attributes.update({"class": PLACEHOLDER_CLASS, "src": LOADING_PLACEHOLDER})
        return attributes
    attributes["src"] = upload.thumbnail_url
    if upload.animated:
        attributes["data-animated"] = "true"
    if upload.transcoded_image:
        attributes["data-transcoded-image"] = upload.transcoded_image
    return attributes


def upload_image_tag(upload: UploadImage) -> str:
    """The img as stored: attributes sorted and escaped, as the sanitiser writes them."""
    attributes = upload_image_attributes(upload)
    return "<img " + " ".join(f'{name}="{html_module.escape(attributes[name], quote=True)}"'
                              for name in sorted(attributes)) + ">"


def _path_id(href: str) -> Optional[str]:
    """The path_id a preview's link names: /user_uploads/{path_id}, or user_uploads/{path_id}
    (the organization's own URL made relative)."""
    href = html_module.unescape(href)
    for prefix in (UPLOAD_PREFIX, UPLOAD_PREFIX[1:]):
        if href.startswith(prefix):
            return unquote(href[len(prefix):])
    return None


def pending_upload_previews(rendered: str) -> set[str]:
    """The path_ids of the uploads whose placeholder the HTML shows."""
    if PLACEHOLDER_CLASS not in rendered:
        return set()
    return {path_id for m in _PENDING_PREVIEW.finditer(rendered) if (path_id := _path_id(m.group("href")))}


def rewrite_upload_preview(rendered: str, path_id: str, upload: Optional[UploadImage]) -> str:
    """The HTML with the placeholders of upload `path_id` replaced: by the thumbnail's img when
    `upload` has one, or (`upload` None: not an image after all) by nothing, the link staying.
    A preview whose link was its only one (a link written as its own URL, which the preview
    replaced) gives its link back, as a render of the same message now would show it. Unchanged
    HTML when there is nothing to replace."""
    if PLACEHOLDER_CLASS not in rendered or (upload is not None and upload.thumbnail_url is None):
        return rendered

    def replace(m: re.Match[str]) -> str:
        if _path_id(m.group("href")) != path_id:
            return m.group(0)
        if upload is not None:
            start, end = m.span("img")
            return m.string[m.start():start] + upload_image_tag(upload) + m.string[end:m.end()]
        href = m.group("href")
        if rendered.count(f'href="{href}"') > 1:
            return ""
        # The link was the preview's alone (its paragraph or list item text was removed for it).
        link = f'<a href="{href}">{href}</a>'
        return link if m.string[:m.start()].endswith("<li>") else f'{m.group("before")}<p>{link}</p>'

    return _PENDING_PREVIEW.sub(replace, rendered)
