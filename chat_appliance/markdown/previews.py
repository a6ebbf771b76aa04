"""Tree passes after inline parsing: image previews below the links that
point at images, and setting link targets aside before sanitising."""

from __future__ import annotations

import re
import xml.etree.ElementTree as etree
from typing import Optional
from urllib.parse import unquote, urlencode, urlsplit

from markdown.treeprocessors import Treeprocessor

from chat_appliance.markdown.upload_previews import UPLOAD_PREFIX, upload_image_attributes
from chat_appliance.markdown.urls import sanitize_url, thumbnail_url

_STASH_RE = re.compile("\x02wzxhzdk:([0-9]+)\x03")

# What Zulip previews as an image: the URL's path ends in one of these.
PREVIEW_IMAGE_SUFFIXES = (".bmp", ".gif", ".jpe", ".jpeg", ".jpg", ".png", ".webp")
# More distinct previewable URLs than this in one message: no previews at all.
MAX_PREVIEWS = 24
PREVIEW_CLASSES = {"message_inline_image", "message_inline_ref", "inline-preview-twitter"}


def is_preview_image(url: str) -> bool:
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    # Only images on other servers, through the /thumbnail proxy URL.
    return parts.scheme in ("http", "https") and parts.path.lower().endswith(PREVIEW_IMAGE_SUFFIXES)


# Uploads are thumbnailed by the server, so types browsers do not show preview too.
UPLOAD_IMAGE_SUFFIXES = PREVIEW_IMAGE_SUFFIXES + (".tif", ".tiff")


def upload_path_id(url: str) -> Optional[str]:
    """The path_id of a link to an uploaded image (relative, as the renderer makes links into
    the organization), else None."""
    if "?" in url or "#" in url:
        return None
    if url.startswith(UPLOAD_PREFIX):
        path_id = unquote(url[len(UPLOAD_PREFIX):])
    elif url.startswith(UPLOAD_PREFIX[1:]):  # a link to the organization's own URL, made relative
        path_id = unquote(url[len(UPLOAD_PREFIX) - 1:])
    else:
        return None
    if not re.fullmatch(r"[0-9]+/[^/]+/[^/]+", path_id) or not path_id.lower().endswith(UPLOAD_IMAGE_SUFFIXES):
        return None
    return path_id


_YOUTUBE_ID = r"(?P<id>[0-9A-Za-z_-]{11})"
_YOUTUBE_RES = (
    re.compile(rf"https?://youtu\.be/{_YOUTUBE_ID}(?:[?#].*)?"),
    re.compile(rf"https?://(?:[\w-]+\.)?youtube(?:-nocookie)?\.com/(?:embed|v|shorts|live)/{_YOUTUBE_ID}(?:[?#/].*)?"),
    re.compile(rf"https?://(?:[\w-]+\.)?youtube\.com/watch(?:_popup)?(?:\.php)?\?(?:.*&)?v={_YOUTUBE_ID}(?:[&#].*)?"),
)


def youtube_id(url: str) -> Optional[str]:
    """The video id of a YouTube video link, else None (a playlist or channel link has none)."""
    for rx in _YOUTUBE_RES:
        m = rx.fullmatch(url)
        if m:
            return m.group("id")
    return None


def youtube_image(video_id: str) -> str:
    """The video site's own still for the video, as Zulip uses it (the browser loads it through
    the /thumbnail proxy URL, as for other images from elsewhere)."""
    return thumbnail_url(f"https://i.ytimg.com/vi/{video_id}/mqdefault.jpg", "thumbnail")


# What every URL that may_preview accepts contains: a quick test for the thousands of links a
# long message can hold.
_MAY_PREVIEW_RE = re.compile(r"youtu|user_uploads/|\.(?:bmp|gif|jpe|jpeg|jpg|png|webp|tif|tiff)", re.IGNORECASE)


def may_preview(url: str) -> bool:
    """Whether a link to `url` may get a preview below its paragraph (an image elsewhere, an
    uploaded image, a YouTube video): such links stay elements until the preview pass."""
    if _MAY_PREVIEW_RE.search(url) is None:
        return False
    return is_preview_image(url) or upload_path_id(url) is not None or youtube_id(url) is not None


# Links whose target ends in one of these count for has:image.
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".svg")
# Links with these classes are navigation (channel, topic and message links), not links for has:link.
NAVIGATION_CLASSES = ("stream", "stream-topic", "message-link")


def note_link(result, href: str) -> None:
    """Record a link's target in the RenderResult, for has:link and has:image."""
    result.links.append(href)
    if href.split("?", 1)[0].lower().endswith(IMAGE_SUFFIXES):
        result.has_image = True


def href_token(md, href: str) -> Optional[str]:
    """The opaque token that stands for `href` until after sanitising (restore_hrefs puts the
    target back), or None when the target is refused and the link keeps no href. Every target
    was checked by sanitize_url when its link was made, and is checked again here."""
    tokens = md.zulip_href_tokens  # one token per distinct target
    token = tokens.get(href)
    if token is not None:
        return token
    if href not in md.zulip_checked_hrefs and sanitize_url(href) is None and not href.startswith(("/", "#")):
        return None
    hrefs = md.zulip_hrefs
    token = tokens[href] = f"#zhref{md.zulip_nonce}n{len(hrefs)}"
    hrefs.append(href)
    return token


class ImagePreviewTreeprocessor(Treeprocessor):
    """A link to an image gets a ``div.message_inline_image`` preview:

    * after the paragraph that holds the link (after earlier previews of the
      same paragraph), or at the end of the list item that holds it, or at
      the end of the message when the link sits inside other inline markup;
    * once per URL, and not for links inside quotes;
    * a paragraph (or list item text) that is nothing but the bare URL is
      replaced by the preview; a named link keeps its text, which becomes
      the preview link's title.
    """

    def run(self, root: etree.Element) -> None:
        if not self.md.zulip_context.inline_image_preview:
            return
        if not any(may_preview(a.get("href") or "") for a in root.iter("a")):
            return
        found: list[tuple[etree.Element, Optional[etree.Element], Optional[etree.Element], bool]] = []
        # (link, parent, grandparent, in_quote), in document order.
        stack: list[tuple[etree.Element, Optional[etree.Element], Optional[etree.Element], bool]] = [(root, None, None, False)]
        while stack:
            el, parent, grand, quoted = stack.pop()
            if el.tag == "a" and el.get("href"):
                found.append((el, parent, grand, quoted))
            in_quote = quoted or el.tag == "blockquote"
            for child in reversed(list(el)):
                stack.append((child, el, parent, in_quote))
        previewable = {a.get("href") for a, _p, _g, quoted in found if not quoted}
        # Links the inline pass wrote out as HTML (inline.py's runs) count toward the limit too.
        if not found or len(previewable | self.md.zulip_unquoted_link_html) > MAX_PREVIEWS:
            return
        done: set[str] = set()
        for a, parent, grand, _quoted in found:
            url = a.get("href")
            if url not in previewable or url in done:
                continue
            done.add(url)  # type: ignore[arg-type]  # a str: `found` holds links with an href
            path_id = upload_path_id(url)  # type: ignore[arg-type]  # as above
            if path_id is not None:
                image = self.md.zulip_context.find_upload_image(path_id)
                if image is not None:
                    self._inline_image(root, a, parent, grand, url, upload=image)
                continue
            video_id = youtube_id(url)  # type: ignore[arg-type]  # as above
            if video_id is not None:
                self._inline_image(root, a, parent, grand, url, video_id=video_id)
                continue
            if not is_preview_image(url):  # type: ignore[arg-type]  # as above
                continue
            self._inline_image(root, a, parent, grand, url)

    def _direct_text(self, a: etree.Element) -> Optional[str]:
        """The link's own text before any markup inside it (Zulip's ``a.text``):
        a run of emoji or mentions stashed as one piece of HTML counts as
        markup, so the text stops there."""
        text = a.text
        if not text:
            return None
        stash = self.md.htmlStash.rawHtmlBlocks
        for m in _STASH_RE.finditer(text):
            index = int(m.group(1))
            if index < len(stash) and "<" in str(stash[index]):
                return text[: m.start()] or None
        return text

    def _inline_image(self, root, a, parent, grand, url, upload=None, video_id=None) -> None:
        text = self._direct_text(a)
        # A video link keeps its paragraph, and its preview has no title (Zulip's markup).
        bare = video_id is None and (text is None or text == url)
        title = None if bare or video_id is not None else text
        target, index, remove = root, None, None
        if parent is not None and parent.tag == "li":
            target = parent
            if not parent.text and not a.tail and bare:
                remove = a
        elif parent is not None and parent.tag == "p" and grand is not None:
            target = grand
            if len(parent) == 1 and (not parent.text or parent.text == "\n") and not a.tail and bare:
                remove = parent
            index = self._index_after(grand, parent)
        if video_id is not None:
            div = etree.Element("div", {"class": "youtube-video message_inline_image"})
            link = etree.SubElement(div, "a", {"data-id": video_id, "href": url})
            etree.SubElement(link, "img", {"src": youtube_image(video_id)})
            if index is None:
                target.append(div)
            else:
                target.insert(index, div)
            return
        div = etree.Element("div", {"class": "message_inline_image"})
        link = etree.SubElement(div, "a", {"href": url})
        if title:
            link.set("title", title)
        if upload is None:
            etree.SubElement(
                link, "img", {"data-src-fullsize": thumbnail_url(url, "full"), "src": thumbnail_url(url, "thumbnail")}
            )
        else:
            # Zulip's markup for an uploaded image: its thumbnail, or a placeholder until it
            # exists (markdown/upload_previews.py, which the thumbnail worker rewrites with).
            etree.SubElement(link, "img", upload_image_attributes(upload))
        if index is None:
            target.append(div)
        else:
            target.insert(index, div)
        if remove is not None:
            target.remove(remove)

    @staticmethod
    def _index_after(grand: etree.Element, para: etree.Element) -> int:
        children = list(grand)
        index = children.index(para)
        links = {x.get("href") for x in para.iter("a")}
        while True:
            index += 1
            if index >= len(children):
                return index
            sibling = children[index]
            classes = set((sibling.get("class") or "").split())
            if sibling.tag != "div" or not classes & PREVIEW_CLASSES:
                return index
            inner = sibling.find("a")
            if inner is None or inner.get("href") not in links:
                return index


class HrefStashTreeprocessor(Treeprocessor):
    """Replace each link target by an opaque relative token, restored after
    sanitising.  Every target was checked by ``sanitize_url`` when the link
    was made (and is checked again here); the sanitiser's own URL parser
    would drop targets it cannot parse that browsers open fine (such as an
    odd port), where Zulip keeps them."""

    def run(self, root: etree.Element) -> None:
        for a in root.iter("a"):
            href = a.get("href")
            if href is None:
                continue
            token = href_token(self.md, href)
            if token is None:
                del a.attrib["href"]
            else:
                a.set("href", token)


def restore_hrefs(html_text: str, hrefs: list[str], nonce: str) -> str:
    if not hrefs:
        return html_text
    import html as html_module

    escaped = [html_module.escape(href, quote=True) for href in hrefs]

    def put_back(m: "re.Match[str]") -> str:
        if m.group(1) != nonce:
            return m.group(0)
        return 'href="' + escaped[int(m.group(2))] + '"'

    return _HREF_TOKEN_RE.sub(put_back, html_text)


_HREF_TOKEN_RE = re.compile(r'href="#zhref([0-9a-f]+)n(\d+)"')
