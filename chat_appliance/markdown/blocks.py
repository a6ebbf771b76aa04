"""Block-level pieces: fenced blocks (code, quote, spoiler, math), the
list-spacing fix and Zulip-flavoured variants of Python-Markdown's block
processors."""

from __future__ import annotations

import functools
import html
import re
import threading
import xml.etree.ElementTree as etree
from typing import TYPE_CHECKING

from markdown.blockprocessors import BlockQuoteProcessor, HashHeaderProcessor
from markdown.extensions.tables import PIPE_LEFT, PIPE_NONE, PIPE_RIGHT, TableProcessor
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor

from chat_appliance.markdown import budget
from chat_appliance.markdown.katex import stash_tex

if TYPE_CHECKING:
    from pygments.formatters import HtmlFormatter

# Pygments (and fastlex.py, which speeds its lexers up) loads with the first code block: most
# messages have none, and the process then holds a few MiB less. Its first load, like a lexer's,
# is the process's work and is not charged to the message (budget.once).

# An opening fence: three or more backticks or tildes, then optionally a
# language (which may be written ".py" or "{.py}") and, after spaces, a header
# (used by spoilers; ignored by code blocks).  Anything with a backtick or
# tilde after the fence is not a fence at all but text.
FENCE_OPEN_RE = re.compile(
    r"^(?P<indent>[ ]*)(?P<fence>~{3,}|`{3,})[ ]*"
    r"(?:\{?\.?(?P<lang>[a-zA-Z0-9_+\-./#]+)[ ]*(?P<header>[^ ~`][^~`]*)?\}?)?$"
)
LIST_ITEM_RE = re.compile(r"^[ ]*(?:[*+-]|\d+\.)[ ]+\S")
_LIST_ITEM_LINE_RE = re.compile(LIST_ITEM_RE.pattern, re.MULTILINE)

@functools.lru_cache(maxsize=256)
def _lexer_class(lang: str):
    with budget.once():  # may import Pygments, and the lexer's module
        from pygments.lexers import find_lexer_class_by_name
        from pygments.util import ClassNotFound

        try:
            return find_lexer_class_by_name(lang)
        except ClassNotFound:
            return None


@functools.lru_cache(maxsize=256)
def _lexer(lexer_cls):
    # Lexers keep only their options: one instance per class serves all threads. The first
    # instance of a class compiles its token tables.
    with budget.once():
        from chat_appliance.markdown.fastlex import speed_up

        return speed_up(lexer_cls(startinline=True, stripnl=False))


_formatters = threading.local()


def _formatter() -> HtmlFormatter:
    # Building an HtmlFormatter computes a stylesheet; keep one per thread.
    fmt = getattr(_formatters, "html", None)
    if fmt is None:
        from pygments.formatters import HtmlFormatter

        fmt = _formatters.html = HtmlFormatter(cssclass="codehilite", wrapcode=True)
    return fmt


# Without a fence language, a first line "#!lang", "#!/path/to/lang" or
# ":::lang" picks the lexer; the line itself stays in the code.
SHEBANG_RE = re.compile(r"(?:^::+|^#!)(?:(?:/\w+)*[/ ])?(?P<lang>[\w#.+-]*)")


@functools.lru_cache(maxsize=512)
def highlight_code(code: str, lang: str = "") -> str:
    """Pygments-highlight a code block into Zulip's ``div.codehilite`` markup.

    ``lang`` is the fence's language: a Pygments name or alias (case does
    not matter) highlights and is recorded, canonicalised, as
    ``data-code-language``; an unknown one is recorded as written (lower
    case) and the code is shown plain.  Results are memoised: re-renders
    (edits, previews) repeat code blocks."""
    with budget.once():  # Pygments' first load
        import pygments
        from pygments.lexers.special import TextLexer
        from pygments.token import Text, Whitespace
    lang = lang.lower()
    lexer_cls = _lexer_class(lang) if lang else None
    code = code.strip("\n")
    if not lang:
        m = SHEBANG_RE.match(code)
        if m and m.group("lang"):
            lexer_cls = _lexer_class(m.group("lang").lower())
    lexer = _lexer(lexer_cls or TextLexer)
    # Whitespace tokens are written as plain text (Zulip's markup has no
    # <span class="w">), the same as formatting them and unwrapping the spans.
    tokens = ((Text if ttype is Whitespace else ttype, value) for ttype, value in lexer.get_tokens(code))
    out = pygments.format(tokens, _formatter())
    if lang:
        label = html.escape(lexer_cls.name if lexer_cls else lang, quote=True)
        out = out.replace('<div class="codehilite">', f'<div class="codehilite" data-code-language="{label}">', 1)
    return out.strip()


def stash_code_block(md, block_html: str) -> str:
    """Set highlighted code aside until after sanitising (see sanitize.py);
    Markdown only carries an opaque per-render token in its place."""
    blocks = md.zulip_code_blocks
    token = f"ZCODEBLOCK{md.zulip_nonce}N{len(blocks)}Z"
    blocks.append((token, block_html))
    return md.htmlStash.store(token)


def space_out_lists(lines: list[str]) -> list[str]:
    """Let a list start right after a paragraph line by inserting the blank
    line Python-Markdown otherwise requires."""
    if not lines or _LIST_ITEM_LINE_RE.search("\n".join(lines)) is None:
        return list(lines)  # no list item: nothing to space out (one C-level scan per fence level)
    out: list[str] = []
    in_list = False
    for line in lines:
        if LIST_ITEM_RE.match(line):
            if not in_list and out and out[-1].strip():
                out.append("")
            in_list = True
        elif not line.strip():
            in_list = False
        out.append(line)
    return out


# Deeper fences are left as text: each level re-prefixes every line inside it.
MAX_FENCE_DEPTH = 16


class _Fence:
    def __init__(self, kind: str, fence: str, lang: str = "", header: str = "", indent: str = ""):
        self.kind = kind  # "code", "math", "quote", "spoiler"
        self.fence = fence
        self.indent = indent  # a fence indented inside a list item stays there
        self.lang = lang
        self.header = header
        self.lines: list[str] = []


def _dedent(line: str, width: int) -> str:
    """Remove up to ``width`` leading spaces."""
    stripped = line.lstrip(" ")
    return line[min(width, len(line) - len(stripped)) :]


class FencedBlockPreprocessor(Preprocessor):
    """Handles ``` and ~~~ fences line by line with a stack, as Zulip does:
    quotes and spoilers nest, code and math take their content verbatim,
    and an unclosed fence runs to the end of the message."""

    def run(self, lines: list[str]) -> list[str]:
        stack: list[_Fence] = []
        top_out: list[str] = []

        def sink() -> list[str]:
            return stack[-1].lines if stack else top_out

        for line in lines:
            if stack and line.rstrip() == stack[-1].indent + stack[-1].fence:
                done = stack.pop()
                sink().extend(self._finish(done))
                continue
            if stack and stack[-1].kind in ("code", "math"):
                # Trailing whitespace in code only makes lines scroll.
                stack[-1].lines.append(_dedent(line, len(stack[-1].indent)).rstrip())
                continue
            m = FENCE_OPEN_RE.match(line) if len(stack) < MAX_FENCE_DEPTH else None
            if m:
                # A fence without a language takes the organization's default_code_block_language.
                lang = m.group("lang") or self.md.zulip_context.default_code_block_language or ""
                low = lang.lower()
                if low in ("quote", "quoted"):
                    kind = "quote"
                elif low in ("spoiler", "math"):
                    kind = low
                else:
                    kind = "code"
                stack.append(_Fence(kind, m.group("fence"), lang, m.group("header") or "", m.group("indent")))
                continue
            if stack and stack[-1].indent:
                line = _dedent(line, len(stack[-1].indent))
            sink().append(line)
        while stack:
            done = stack.pop()
            sink().extend(self._finish(done))
        while top_out and not top_out[-1].strip():
            top_out.pop()
        return space_out_lists(top_out)

    def _stash(self, html_text: str) -> str:
        return self.md.htmlStash.store(html_text)

    def _finish(self, block: _Fence) -> list[str]:
        out = self._render(block)
        if block.indent:
            out = [(block.indent + line) if line.strip() else line for line in out]
        return out

    def _render(self, block: _Fence) -> list[str]:
        if not any(line.strip() for line in block.lines) and block.kind in ("code", "math"):
            return [""]  # an empty code block renders as nothing
        if block.kind == "code":
            code = "\n".join(block.lines)
            return ["", stash_code_block(self.md, highlight_code(code, block.lang)), ""]
        if block.kind == "math":
            tex = "\n".join(block.lines).strip()
            return ["", self._stash(stash_tex(self.md, tex, display=True)), ""]
        body = space_out_lists(block.lines)
        while body and not body[0].strip():
            body.pop(0)
        while body and not body[-1].strip():
            body.pop()
        if block.kind == "quote":
            return [""] + [("> " + line) if line.strip() else ">" for line in body] + [""]
        # spoiler
        out = ["", self._stash('<div class="spoiler-block"><div class="spoiler-header">'), ""]
        if block.header.strip():
            out += [block.header, ""]
        out += [self._stash('</div><div class="spoiler-content" aria-hidden="true">'), ""]
        out += body
        out += ["", self._stash("</div></div>"), ""]
        return out


# Lists and quotes nested deeper than this are read as text.  Each level
# re-scans the rest of the message, so unbounded nesting ("1. 1. 1. ...")
# costs time quadratic in the depth; no real message nests this deep.
MAX_BLOCK_DEPTH = 24


def depth_limited(processor):
    """Make a list processor decline blocks nested MAX_BLOCK_DEPTH deep
    (Python-Markdown's parser state grows by one entry per level)."""
    test = processor.test

    def limited_test(parent, block):
        return len(processor.parser.state) < MAX_BLOCK_DEPTH and test(parent, block)

    processor.test = limited_test
    return processor


class LinearTableProcessor(TableProcessor):
    """Python-Markdown's table processor, deciding as it does, in time proportional to the block's
    first lines rather than to the whole block. Its test split the whole block into lines each
    time; as the heading processor takes a block one heading at a time, a 10 KB message of
    headings was tested 2,500 times at 10 KB each (0.5-2 s of CPU for one message)."""

    def test(self, parent: etree.Element, block: str) -> bool:
        lines = block.split("\n", 2)
        if len(lines) < 2:
            return False
        header0, second = lines[0].strip(" "), lines[1].strip(" ")
        self.border = PIPE_NONE
        if header0.startswith("|"):
            self.border |= PIPE_LEFT
        if self.RE_END_BORDER.search(header0) is not None:
            self.border |= PIPE_RIGHT
        row0_len = len(self._split_row(header0))
        if row0_len < 1 or (row0_len == 1 and not self.border):
            return False
        # The separator row first: it is two lines away, where the single-column rule below
        # reads the whole block; a block that fails here costs nothing more.
        row = self._split_row(second)
        if not (len(row) == row0_len and set("".join(row)) <= set("|:- ")):
            return False
        if row0_len == 1:
            # Each row of a single-column table needs at least one pipe. A block that passes
            # becomes a table, consumed whole; one that fails stops at its first pipeless row.
            for line in block.split("\n")[1:]:
                line = line.strip(" ")
                if not line.startswith("|") and self.RE_END_BORDER.search(line) is None:
                    return False
        self.separator = row
        return True


class _LineStartSearch:
    """A regex that starts with ``(?:^|\n)`` and then `first`, searched by finding the places
    where it can begin with str.find: `re` tries such an alternation at every position, and the
    heading test ran over the whole block at each level of a deeply nested quote."""

    def __init__(self, rx: "re.Pattern[str]", first: str):
        self.rx = rx
        self.first = first

    def search(self, text: str):
        if text.startswith(self.first):
            m = self.rx.match(text)
            if m is not None:
                return m
        marker = "\n" + self.first
        at = text.find(marker)
        while at != -1:
            m = self.rx.match(text, at)
            if m is not None:
                return m
            at = text.find(marker, at + 1)
        return None


class ZulipHashHeaderProcessor(HashHeaderProcessor):
    """ATX headings, but only with whitespace after the hashes."""

    RE = _LineStartSearch(re.compile(r"(?:^|\n)(?P<level>#{1,6})[ \t]+(?P<header>(?:\\.|[^\\])*?)#*(?:\n|$)"), "#")
    # The same heading, matched at a given position (where RE's ^ would not match).
    LINE_RE = re.compile(r"(?P<level>#{1,6})[ \t]+(?P<header>(?:\\.|[^\\])*?)#*(?:\n|$)")

    def run(self, parent: etree.Element, blocks: list[str]) -> None:
        """Python-Markdown's run, then the heading lines that directly follow, in one pass: one
        heading per parser step offered the rest of the block to every processor again and
        copied it once per heading. A following line with a pipe goes back to the parser (the
        table processor, tested first, may claim it)."""
        super().run(parent, blocks)
        if not blocks or self.parser.state.isstate("looselist"):
            return
        rest, pos = blocks[0], 0
        while True:
            m = self.LINE_RE.match(rest, pos)
            if m is None or ("|" in m.group(0) and self._may_open_table(parent, rest, pos, m.end())):
                break
            budget.check(self.parser.md)
            h = etree.SubElement(parent, f"h{len(m.group('level'))}")
            h.text = m.group("header").strip()
            pos = m.end()
            if pos >= len(rest):
                break
        if pos:
            if pos >= len(rest):
                blocks.pop(0)
            else:
                blocks[0] = rest[pos:]

    def _may_open_table(self, parent: etree.Element, rest: str, start: int, end: int) -> bool:
        """Whether the table processor could claim the block from this line on, judged on this
        line and the next (its test on the whole block passes only if it passes on these two)."""
        line_end = rest.find("\n", end)
        probe = rest[start:end] + (rest[end:line_end] if line_end != -1 else rest[end:])
        return self.parser.blockprocessors["table"].test(parent, probe)


# A line with something besides one leading quote marker ("   > ", as STRIP_RE takes it) and
# white space. The marker is taken whole, never given back, so that a line of only a marker does
# not count its ">" as content: a lookahead captures it and the backreference consumes it (an
# atomic group, which Python's re has only from 3.11).
_QUOTE_CONTENT_RE = re.compile(r"^(?=((?:[ ]{0,3}>[ ]?)?))\1[^\S\n]*\S", re.MULTILINE)
# clean_lines' two steps: a line that is only ">" and white space becomes empty; otherwise one
# leading marker goes (Python-Markdown's BlockQuoteProcessor.clean, on every line at once).
_QUOTE_ONLY_MARKER_RE = re.compile(r"^[^\S\n]*>[^\S\n]*$", re.MULTILINE)
_QUOTE_MARKER_RE = re.compile(r"^[ ]{0,3}>[ ]?", re.MULTILINE)


class ZulipBlockQuoteProcessor(BlockQuoteProcessor):
    """Quotes that never merge with a previous quote and that need some
    content (a lone ``>`` is just text)."""

    STRIP_RE = re.compile(r"^[ ]{0,3}>[ ]?")
    MAX_DEPTH = 30
    depth = 0  # quotes currently open (per engine instance, which is per thread)

    def test(self, parent: etree.Element, block: str) -> bool:
        if self.depth >= self.MAX_DEPTH or len(self.parser.state) >= MAX_BLOCK_DEPTH:
            return False
        m = self.RE.search(block)
        if not m:
            return False
        # Some line from the quote on holds more than its quote marker (STRIP_RE) and spaces.
        return _QUOTE_CONTENT_RE.search(block, m.start()) is not None

    def run(self, parent: etree.Element, blocks: list[str]) -> None:
        block = blocks.pop(0)
        m = self.RE.search(block)
        if m:
            before = block[: m.start()]
            self.parser.parseBlocks(parent, [before])
            block = self.clean_lines(block[m.start() :])
        quote = etree.SubElement(parent, "blockquote")
        self.parser.state.set("blockquote")
        self.depth += 1
        try:
            self.parser.parseChunk(quote, block)
        finally:
            self.depth -= 1
            self.parser.state.reset()

    @staticmethod
    def clean_lines(text: str) -> str:
        """Every line of `text` as Python-Markdown's `clean` leaves it, in two regex passes
        instead of a Python call per line (nested quotes clean each line once per level)."""
        return _QUOTE_MARKER_RE.sub("", _QUOTE_ONLY_MARKER_RE.sub("", text))


class IndentedCodeTreeprocessor(Treeprocessor):
    """Four-space indented code (``<pre><code>`` from Python-Markdown) gets
    the same highlighted markup as fenced code."""

    def run(self, root: etree.Element) -> None:
        if root.find(".//pre") is None:
            return
        for parent in list(root.iter()):
            for i, child in enumerate(list(parent)):
                if child.tag != "pre" or len(child) != 1 or child[0].tag != "code":
                    continue
                code = html.unescape(child[0].text or "")
                placeholder = etree.Element("p")
                placeholder.text = stash_code_block(self.md, highlight_code(code))
                placeholder.tail = child.tail
                parent.remove(child)
                parent.insert(i, placeholder)
