"""Assembles the Zulip-flavoured Python-Markdown engine and runs it.

Building a ``markdown.Markdown`` instance is comparatively expensive, so one
is kept per thread and reset between messages.  Per-message state (the
context and the result being filled in) hangs off that instance while a
conversion runs.
"""

from __future__ import annotations

import html as html_module
import logging
import re
import secrets
import threading
import xml.etree.ElementTree as etree
from typing import Optional

import markdown
from markdown.blockprocessors import ListIndentProcessor, OListProcessor, UListProcessor
from markdown.extensions import Extension
from markdown.extensions.tables import TableExtension
from markdown.serializers import _escape_attrib_html, _escape_cdata
from markdown import util
from markdown.treeprocessors import Treeprocessor, UnescapeTreeprocessor

from chat_appliance.markdown import budget, inline, katex, linkifier_regex
from chat_appliance.markdown.blocks import (
    FencedBlockPreprocessor,
    IndentedCodeTreeprocessor,
    LinearTableProcessor,
    ZulipBlockQuoteProcessor,
    ZulipHashHeaderProcessor,
    depth_limited,
)
from chat_appliance.markdown.context import RenderContext, RenderResult
from chat_appliance.markdown.previews import (
    NAVIGATION_CLASSES,
    HrefStashTreeprocessor,
    ImagePreviewTreeprocessor,
    note_link,
    restore_hrefs,
)
from chat_appliance.markdown.sanitize import restore_code_blocks, sanitize_html
from chat_appliance.markdown.urls import autolink_href, find_bare_urls, sanitize_url

class LinkCollector(Treeprocessor):
    """Records the hrefs of all links for has:link / has:image narrows."""

    def run(self, root: etree.Element) -> None:
        result = self.md.zulip_result
        for a in root.iter("a"):
            href = a.get("href")
            if href and a.get("class") not in NAVIGATION_CLASSES:
                note_link(result, href)


class ZulipExtension(Extension):
    def extendMarkdown(self, md: markdown.Markdown) -> None:
        # Raw HTML is text, not markup; reference links do not exist.
        md.preprocessors.deregister("html_block")
        md.preprocessors.register(FencedBlockPreprocessor(md), "zulip_fences", 25)

        bp = md.parser.blockprocessors
        for name in ("setextheader", "hr", "reference"):
            bp.deregister(name)
        table = bp["table"]
        bp.register(LinearTableProcessor(md.parser, table.config), "table", 75)
        bp.register(budget.BudgetProcessor(md.parser), "zulip_budget", 1000)
        bp.register(ZulipHashHeaderProcessor(md.parser), "hashheader", 70)
        bp.register(ZulipBlockQuoteProcessor(md.parser), "quote", 20)
        # Lists nest with two-space indentation in Zulip.
        saved = md.tab_length
        md.tab_length = 2
        try:
            bp.register(depth_limited(ListIndentProcessor(md.parser)), "indent", 90)
            olist = depth_limited(OListProcessor(md.parser))
            olist.LAZY_OL = False  # "3. a" starts the list at 3
            bp.register(olist, "olist", 40)
            bp.register(depth_limited(UListProcessor(md.parser)), "ulist", 30)
        finally:
            md.tab_length = saved

        ip = md.inlinePatterns
        for name in list(n.name for n in ip._priority):
            if name not in ("escape", "entity"):
                ip.deregister(name)
        ip["escape"].TRIGGER = "\\"
        ip["entity"].TRIGGER = "&"
        ip.register(inline.CodeSpanProcessor(md), "backtick", 190)
        ip.register(inline.TexInlineProcessor(md), "tex", 185)
        ip.register(inline.TimestampProcessor(md), "timestamp", 175)
        ip.register(inline.ZulipLinkProcessor(md), "link", 160)
        ip.register(inline.AutoLinkProcessor(md), "autolink", 150)
        ip.register(inline.LinkifierProcessor(md), "linkifiers", 145)
        ip.register(inline.ChannelLinkProcessor(md), "channel_link", 140)
        ip.register(inline.UserMentionProcessor(md), "user_mention", 135)
        ip.register(inline.GroupMentionProcessor(md), "group_mention", 130)
        ip.register(inline.EmojiNameProcessor(md), "emoji", 120)
        ip.register(inline.EmoticonProcessor(md), "emoticon", 115)
        ip.register(inline.UnicodeEmojiProcessor(md), "unicode_emoji", 110)
        ip.register(inline.TagProcessor(inline.STRONG_EM_RE, "strong,em", md), "strong_em", 75)
        ip.register(inline.TagProcessor(inline.STRONG_RE, "strong", md), "strong", 70)
        ip.register(inline.TagProcessor(inline.EM_RE, "em", md), "em", 65)
        ip.register(inline.TagProcessor(inline.DEL_RE, "del", md), "del", 60)
        ip.register(inline.NewlineProcessor(md), "nl", 5)

        md.treeprocessors.register(inline.FastInlineTreeprocessor(md), "inline", 20)
        md.treeprocessors.register(IndentedCodeTreeprocessor(md), "zulip_indented_code", 30)
        md.treeprocessors.register(ImagePreviewTreeprocessor(md), "zulip_image_previews", 15)
        md.treeprocessors.register(LinkCollector(md), "zulip_links", 17)
        md.treeprocessors.register(HrefStashTreeprocessor(md), "zulip_href_stash", 0.5)


_EMPTY_TAGS = frozenset({"br", "img", "hr", "input", "meta", "link", "col", "area", "base", "wbr"})


def _html_string(root: etree.Element) -> str:
    """Python-Markdown's HTML serializer, for the markup this renderer makes
    (no comments, processing instructions or namespaces), without its
    per-element overhead: an element-dense message (a table of thousands of
    rows) spent a third of its time there."""
    out: list[str] = []
    write = out.append
    escape_text = _escape_cdata
    escape_attr = _escape_attrib_html
    empty = _EMPTY_TAGS

    def walk(el: etree.Element) -> None:
        tag = el.tag
        attrib = el.attrib
        if attrib:
            write("<" + tag + "".join(f' {k}="{escape_attr(v)}"' for k, v in sorted(attrib.items())) + ">")
        else:
            write("<" + tag + ">")
        if el.text:
            write(escape_text(el.text))
        for child in el:
            walk(child)
        if tag not in empty:
            write("</" + tag + ">")
        if el.tail:
            write(escape_text(el.tail))

    walk(root)
    return "".join(out)


class _BlockLevelTags(dict):
    """tag -> whether Python-Markdown treats it as a block-level element, filled as tags are seen."""

    def __init__(self, names):
        super().__init__()
        self._names = frozenset(names)

    def __missing__(self, tag):
        value = self[tag] = isinstance(tag, str) and tag.lower().rstrip("/") in self._names
        return value


class FastUnescapeTreeprocessor(UnescapeTreeprocessor):
    """Python-Markdown's pass that puts backslash-escaped characters back, without a regex call
    for the texts and attributes that hold none (nearly all of them: a table of thousands of
    cells spent a tenth of its time here)."""

    def run(self, root: etree.Element) -> None:
        unescape = self.unescape
        for elem in root.iter():
            text = elem.text
            if text and util.STX in text and elem.tag != "code":
                elem.text = unescape(text)
            tail = elem.tail
            if tail and util.STX in tail:
                elem.tail = unescape(tail)
            for key, value in elem.items():
                if value is not None and util.STX in value:
                    elem.set(key, unescape(value))


def _build() -> markdown.Markdown:
    md = markdown.Markdown(
        output_format="html",
        extensions=[
            TableExtension(use_align_attribute=True),
            ZulipExtension(),
        ],
    )
    # Python-Markdown looks tags up in a list, several times per element: a dict's own lookup
    # answers without a Python call once a tag has been seen.
    md.is_block_level = _BlockLevelTags(md.block_level_elements).__getitem__
    md.treeprocessors.register(FastUnescapeTreeprocessor(md), "unescape", 0)
    md.serializer = _html_string
    _fast_list_items(md.parser)
    return md


# One line that no block processor but the paragraph one can claim.
_PLAIN_ITEM_RE = re.compile(r"[^\W\d_][^\n|]*")


def _fast_list_items(parser) -> None:
    """A tight list item that is one plain line becomes the item's text
    directly, as the paragraph processor would make it, instead of being
    offered to every block processor in turn (a list of thousands of short
    items spent most of its time there)."""
    parse_blocks = parser.parseBlocks

    def parseBlocks(parent, blocks):
        if (
            len(blocks) == 1
            and parent.tag == "li"
            and not parent.text
            and len(parent) == 0
            and parser.state
            and parser.state[-1] == "list"
            and _PLAIN_ITEM_RE.fullmatch(blocks[0])
        ):
            parent.text = blocks.pop()
            return
        parse_blocks(parent, blocks)

    parser.parseBlocks = parseBlocks


_local = threading.local()


def _engine() -> markdown.Markdown:
    md = getattr(_local, "md", None)
    if md is None:
        md = _local.md = _build()
    return md


MAX_CONTENT = 100_000
# CPU seconds one message may take to render before it is stored as escaped text (budget.py).
# scripts/bench_markdown_worst.py's target is 50 ms for any 10 KB message; ten times that leaves
# room for a slow machine and still bounds what one message costs.
RENDER_BUDGET_SECONDS = 0.5

log = logging.getLogger("chat_appliance.markdown")


# One line of ASCII words, digits, spaces and sentence punctuation, not starting with a digit
# (an ordered list) and with no dot before a letter or digit (a domain): nothing in it can open
# any block, inline, link, mention, emoji or emoticon syntax, so it renders as one paragraph of
# itself. Most chat lines are like this; they skip the Markdown pipeline (a fifth of a send's
# work). tests/markdown/test_fast_path.py compares it with the full renderer.
_PLAIN_LINE_RE = re.compile(r"(?![0-9 ])(?:[A-Za-z0-9 ,;?!']|\.(?![A-Za-z0-9]))+(?<! )")


def render(content: str, context: Optional[RenderContext] = None) -> RenderResult:
    context = context or RenderContext()
    # Linkifier patterns may match any text: with any, every message takes the full path.
    if not context.linkifiers and _PLAIN_LINE_RE.fullmatch(content):
        return RenderResult(html=f"<p>{content}</p>")
    return render_markdown(content, context)


def render_markdown(content: str, context: RenderContext) -> RenderResult:
    """The full renderer (`render` takes a shortcut for plain lines)."""
    result = RenderResult()
    md = _engine()
    md.reset()
    md.zulip_context = context
    md.zulip_result = result
    md.zulip_code_blocks = []
    md.zulip_tex = []
    md.zulip_nonce = secrets.token_hex(8)
    hrefs: list[str] = []
    md.zulip_hrefs = hrefs
    md.zulip_checked_hrefs = set()  # hrefs sanitize_url already passed while rendering
    md.zulip_unquoted_link_html = set()  # hrefs of links outside quotes the inline pass wrote as HTML
    md.zulip_href_tokens = {}  # href -> its token (previews.href_token)
    budget.start(md, RENDER_BUDGET_SECONDS)
    try:
        html = md.convert(content[:MAX_CONTENT])
        code_blocks = md.zulip_code_blocks
        formulas = md.zulip_tex
        # KaTeX's engine time is the message's too: what is left of its budget, at most.
        left = budget.remaining(md)
        tex_seconds = katex.FORMULA_SECONDS if left is None else max(0.0, min(katex.FORMULA_SECONDS, left))
    except (RecursionError, budget.RenderBudgetExceeded) as error:
        # Pathologically nested or costly input: show it as plain text rather than fail.
        if isinstance(error, budget.RenderBudgetExceeded):
            log.warning("Rendering a message of %d characters took over %.2f s of CPU: it is shown as plain text. "
                        "Please report the shape of the message (not its text) as a renderer bug.",
                        len(content), RENDER_BUDGET_SECONDS)
        result = RenderResult()
        html = plain_text_html(content[:MAX_CONTENT])
        code_blocks = []
        formulas = []
        tex_seconds = 0.0
    finally:
        md.zulip_deadline = None
        md.zulip_context = None
        md.zulip_result = None
        md.zulip_code_blocks = []
        md.zulip_tex = []
        md.zulip_hrefs = []
        md.zulip_checked_hrefs = set()
        md.zulip_unquoted_link_html = set()
        md.zulip_href_tokens = {}
    # Every piece in place first, then the allow-list: sanitising is the last step, so nothing
    # spliced in afterwards can escape its position.
    html = katex.typeset(restore_code_blocks(restore_hrefs(html, hrefs, md.zulip_nonce), code_blocks), formulas,
                         tex_seconds, context.tex_owner)
    result.html = sanitize_html(html)
    # Zulip's rule: "/me " at the start of a one-line message that rendered
    # as a single paragraph.
    result.is_me_message = (
        content.startswith("/me ")
        and "\n" not in content.strip()
        and result.html.startswith("<p>/me ")
        and result.html.endswith("</p>")
    )
    return result


def plain_text_html(content: str) -> str:
    paragraphs = [p for p in content.replace("\r\n", "\n").split("\n\n") if p.strip()]
    return "\n".join("<p>" + html_module.escape(p.strip(), quote=False).replace("\n", "<br>\n") + "</p>" for p in paragraphs)


def topic_links(topic: str, context: Optional[RenderContext] = None) -> list[dict]:
    """Links Zulip would attach to a message for its topic name: linkifier
    matches and bare URLs, in order of appearance, without overlaps."""
    context = context or RenderContext()
    found: list[tuple[int, int, str, str]] = []
    for rx, template in inline.compile_linkifiers(context.linkifiers):
        for match in linkifier_regex.matches(rx, topic):
            start, end = linkifier_regex.match_span(match)
            found.append((start, end, topic[start:end], inline.linkifier_url(match, template)))
    for m in find_bare_urls(topic):
        found.append((m.start("url"), m.end("url"), m.group("url"), autolink_href(m)))
    found.sort(key=lambda item: item[0])
    out: list[dict] = []
    last_end = -1
    for start, end, text, url in found:
        if start < last_end:
            continue
        # Linkifiers stored before templates were checked may still expand to any scheme.
        if sanitize_url(url) is None:
            continue
        out.append({"text": text, "url": url})
        last_end = end
    return out
