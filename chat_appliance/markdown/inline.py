"""Inline processors: code spans, TeX, timestamps, links, bare URLs,
linkifiers, mentions, channel links, emoji and emphasis."""

from __future__ import annotations

import datetime
import functools
import re
import xml.etree.ElementTree as etree
from typing import Any, Iterator, Optional

from markdown import util
from markdown.inlinepatterns import InlineProcessor
from markdown.serializers import _escape_attrib_html, _escape_cdata
from markdown.treeprocessors import InlineProcessor as InlineTreeprocessor

from chat_appliance.markdown import budget, linkifier_regex
from chat_appliance.markdown.katex import stash_tex
from chat_appliance.markdown.previews import href_token, may_preview, note_link
from chat_appliance.markdown.urls import AUTOLINK_RE, autolink_href, channel_narrow, expand_template, relative_to_realm, sanitize_url, topic_narrow

NOT_HANDLED = (None, None, None)
_NEVER = re.compile(r"(?!x)x")


def _trigger_test(trigger: Any):
    """A pattern's ``TRIGGER`` as a test on a text: a substring or compiled
    regex that every match contains, ``False`` when the pattern cannot match
    in this render, or ``None`` (always run)."""
    if trigger is None:
        return None
    if trigger is False:
        return False
    if isinstance(trigger, str):
        return lambda data: trigger in data
    return trigger.search


def _strip_leading_lookbehind(pattern: str) -> Optional[str]:
    """``pattern`` without the lookbehind it starts with, or None if it has none."""
    if not pattern.startswith(("(?<!", "(?<=")):
        return None
    depth = 0
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            # Skip a character class (a "]" right after "[" or "[^" is literal).
            i += 1
            if i < len(pattern) and pattern[i] == "^":
                i += 1
            if i < len(pattern) and pattern[i] == "]":
                i += 1
            while i < len(pattern) and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return pattern[i + 1 :]
        i += 1
    return None


_GAP_RE = re.compile(r"[ \t]*")
_NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")
_NAME_WITH_ID_RE = re.compile(r"(?P<full>.*)\|(?P<id>\d+)")
_COMPILED: dict = {}


def _compiled(pattern: str, flags: int = 0) -> "re.Pattern[str]":
    """re.compile with a cache of our own: Pygments compiles hundreds of
    patterns, which pushes ours out of the re module's cache, and some of
    ours (the emoji character class) are expensive to compile."""
    key = (pattern, flags)
    rx = _COMPILED.get(key)
    if rx is None:
        if len(_COMPILED) > 512:
            _COMPILED.clear()
        rx = _COMPILED[key] = re.compile(pattern, flags)
    return rx


def _is_leaf(node: Any, quiet: Any) -> bool:
    """An element whose content no later pattern or tree pass looks at, or a plain link (which
    the inline pass then does the link passes' work for: see _flush_run). `quiet(text)` says
    whether no pattern at all can match in a text."""
    if not isinstance(node, etree.Element) or len(node) or node.tail:
        return False
    if node.tag == "a":
        return _is_plain_link(node, quiet)
    return node.text is None or isinstance(node.text, util.AtomicString)


def _is_plain_link(node: etree.Element, quiet: Any) -> bool:
    """A link with a target and nothing else, whose text no pattern would change even read on
    its own (as Python-Markdown reads it again when the link ends up inside emphasis), and that
    gets no preview: nothing after the inline pass needs it as an element (linkifiers, bare
    URLs and [text](url) give thousands of these in one long message)."""
    href = node.get("href")
    text = node.text
    return (href is not None and len(node.attrib) == 1
            and (text is None or isinstance(text, util.AtomicString) or quiet(text))
            and not may_preview(href))


_LEAF_HTML_CACHE: dict = {}


def _leaf_html(node: etree.Element) -> str:
    """The element as Python-Markdown's serializer would write it (memoised:
    runs repeat the same emoji and mentions)."""
    key = (node.tag, node.text, tuple(node.attrib.items()))
    cached = _LEAF_HTML_CACHE.get(key)
    if cached is None:
        if len(_LEAF_HTML_CACHE) > 4096:
            _LEAF_HTML_CACHE.clear()
        cached = _LEAF_HTML_CACHE[key] = _leaf_html_uncached(node)
    return cached


def _leaf_html_uncached(node: etree.Element) -> str:
    attrs = "".join(f' {k}="{_escape_attrib_html(v)}"' for k, v in sorted(node.attrib.items()))
    if node.tag == "br":
        return f"<br{attrs}>\n"  # the line break Python-Markdown's prettifier adds
    if node.tag == "img":
        return f"<img{attrs}>"
    return f"<{node.tag}{attrs}>{_escape_cdata(node.text or '')}</{node.tag}>"


def _first(regex: Any, data: str, pos: int):
    if isinstance(regex, re.Pattern):
        return regex.search(data, pos)
    if isinstance(regex, _MultiRegex):
        return regex.earliest(data, pos)
    return next(regex.finditer(data, pos), None)


class FastInlineTreeprocessor(InlineTreeprocessor):
    """Python-Markdown's inline pass with the same patterns, order and results,
    in time linear in the text:

    * each pattern handles all its matches in one pass over the text and the
      text is rebuilt once, where Python-Markdown rebuilt the whole text after
      every match (10,000 one-character emoji took seconds);
    * patterns whose trigger does not occur in the text are skipped, and all
      of them for a text with no trigger at all (Python-Markdown ran every
      pattern over every text node: 20 pattern calls per table cell).

    After a replaced match, Python-Markdown's next search sees the
    placeholder's last character (``\\x03``) before it, which every leading
    lookbehind here lets through; a search right at the end of a replaced
    match therefore uses the pattern without its leading lookbehind."""

    def run(self, tree, ancestors=None):
        self._pattern_list = list(self.inlinePatterns)
        self._tests = [_trigger_test(getattr(p, "TRIGGER", None)) for p in self._pattern_list]
        self._heads: dict[int, Any] = {}
        self._plain_extra: list = []  # trigger tests that are not one regex (the linkifiers)
        if any(t is None for t in self._tests):
            self._plain = None
        else:
            # One pass that proves no pattern can match.
            parts = []
            for p, test in zip(self._pattern_list, self._tests):
                trig = getattr(p, "TRIGGER", None)
                if isinstance(trig, str):
                    parts.append(re.escape(trig))
                elif isinstance(trig, re.Pattern):
                    parts.append(trig.pattern)
                elif trig is not False:
                    self._plain_extra.append(test)
            self._plain = _compiled("|".join(parts)) if parts else _NEVER
            # Element texts no pattern can match are passed over by Python-Markdown's loop when
            # marked atomic (the same text, as the inline pass would have left it): a table's
            # thousands of plain cells each cost that loop's whole bookkeeping otherwise.
            for element in tree.iter():
                text = element.text
                if text and type(text) is str and self._untriggered(text):
                    element.text = util.AtomicString(text)
        return super().run(tree, ancestors)

    def _untriggered(self, data: str) -> bool:
        """Whether no pattern can match in `data` (every one's trigger is absent); only when
        every pattern has a trigger (self._plain)."""
        return self._plain.search(data) is None and not any(t(data) for t in self._plain_extra)

    def _quiet(self, text: str) -> bool:
        """Whether no pattern at all can match in `text` read on its own. Python-Markdown reads
        the text after each element inside another element (emphasis, a link's text) again
        from the first pattern, with the text's ends as boundaries ("e.co" between two emoji
        inside ** ** becomes a link then), so text that joins a run must be inert even so.
        (Stashed markup of an earlier pattern, \x02...\x03, is never inert.)"""
        return self._plain is not None and "\x02" not in text and self._untriggered(text)

    def _head(self, regex: Any) -> Any:
        """``regex`` without its leading lookbehind (memoised), or None."""
        key = id(regex)
        if key not in self._heads:
            head = None
            if isinstance(regex, re.Pattern):
                stripped = _strip_leading_lookbehind(regex.pattern)
                if stripped is not None:
                    head = _compiled(stripped, regex.flags)
            elif hasattr(regex, "patterns"):
                heads = [_strip_leading_lookbehind(r.pattern) for r in regex.patterns]
                if all(h is not None for h in heads):
                    head = type(regex)([_compiled(h, r.flags) for h, r in zip(heads, regex.patterns)])  # type: ignore[arg-type]  # all() above ruled out None
            self._heads[key] = (regex, head)
        return self._heads[key][1]

    def _apply_all(self, pattern: Any, data: str, pattern_index: int) -> str:
        budget.check(self.md)  # once per pattern and text node: the inline pass's unit of work
        for exclude in pattern.ANCESTOR_EXCLUDES:
            if exclude.lower() in self.ancestors:
                return data
        regex = pattern.getCompiledRegExp()
        out: list[str] = []
        run: list = []  # consecutive leaf results: (text before, element)
        last = 0  # data[last:] is not in out yet
        pos = 0  # where the next search starts
        after_replacement = False
        size = len(data)
        while pos <= size:
            m = None
            if after_replacement:
                head = self._head(regex)
                if head is not None:
                    m = head.match(data, pos) if isinstance(head, re.Pattern) else _first(head, data, pos)
                    if m is not None and m.start() != pos:
                        m = None
            if m is None:
                m = _first(regex, data, pos)
                if m is None:
                    break
            after_replacement = False
            node, start, end = pattern.handleMatch(m, data)
            if start is None or end is None:
                pos = m.end() if m.end() > m.start() else m.start() + 1
                continue
            if node is None:
                pos = end
                continue
            if not isinstance(node, str) and not isinstance(node.text, util.AtomicString):
                for child in [node] + list(node):
                    if child.text:
                        self.ancestors.append(child.tag.lower())
                        child.text = self._InlineProcessor__handleInline(child.text, pattern_index + 1)
                        self.ancestors.pop()
                    if child.tail:
                        child.tail = self._InlineProcessor__handleInline(child.tail, pattern_index)
            if _is_leaf(node, self._quiet):
                if run and (_GAP_RE.fullmatch(data, last, start) or self._quiet(data[last:start])):
                    run.append((data[last:start], node))
                    last = pos = end
                    after_replacement = True
                    continue
                self._flush_run(run, out, pattern)
                run = [(data[last:start], node)]
            else:
                self._flush_run(run, out, pattern)
                run = []
                out.append(data[last:start])
                out.append(self._InlineProcessor__stashNode(node, pattern.type()))
            last = pos = end
            after_replacement = True
        self._flush_run(run, out, pattern)
        if not out:
            return data
        out.append(data[last:])
        return "".join(out)

    def _flush_run(self, run: list, out: list[str], pattern: Any) -> None:
        """Stash a run of leaf results, apart only by spaces or by text no pattern touches
        (_quiet): the first and the last as themselves, everything between as one piece of
        HTML, so that a text of thousands of emoji or links costs a few placeholders rather
        than thousands. The ends stay elements because the text on their outer sides is read
        against an element's edge, as it would be without the run (see _quiet)."""
        if not run:
            return
        stash = self._InlineProcessor__stashNode
        out.append(run[0][0])
        out.append(stash(run[0][1], pattern.type()))
        if len(run) > 2:
            html_text = "".join(
                _escape_cdata(gap) + (self._link_html(node) if node.tag == "a" else _leaf_html(node))
                for gap, node in run[1:-1]
            ) + _escape_cdata(run[-1][0])
            out.append(stash(self.md.htmlStash.store(html_text), pattern.type()))
        elif len(run) == 2:
            out.append(run[1][0])
        if len(run) > 1:
            out.append(stash(run[-1][1], pattern.type()))
        run.clear()

    def _link_html(self, node: etree.Element) -> str:
        """A plain link written out as HTML, with what the link passes would have done for it as
        an element: recorded for has:link, counted toward the preview limit, and its target set
        aside until after sanitising (previews.HrefStashTreeprocessor)."""
        href = node.get("href") or ""  # _is_plain_link: a link in a run has a target
        note_link(self.md.zulip_result, href)
        if "blockquote" not in self.ancestors:
            self.md.zulip_unquoted_link_html.add(href)
        token = href_token(self.md, href)
        text = _escape_cdata(node.text or "")
        if token is None:
            return f"<a>{text}</a>"
        return f'<a href="{_escape_attrib_html(token)}">{text}</a>'

    # Overrides the name-mangled private method of the base class.
    def _InlineProcessor__handleInline(self, data: str, patternIndex: int = 0) -> str:
        if isinstance(data, util.AtomicString):
            return data
        if self._plain is not None and self._untriggered(data):
            return data
        patterns = self._pattern_list
        tests = self._tests
        for index in range(patternIndex, len(patterns)):
            test = tests[index]
            if test is False or (test is not None and not test(data)):
                continue
            data = self._apply_all(patterns[index], data, index)
        return data


class _Base(InlineProcessor):
    """Gives processors access to the per-render state on the Markdown object."""

    @property
    def ctx(self):  # RenderContext
        return self.md.zulip_context

    @property
    def result(self):  # RenderResult
        return self.md.zulip_result


class CodeSpanProcessor(InlineProcessor):
    """Backtick code spans; unlike stock Markdown the content is kept verbatim
    (no trimming)."""

    TRIGGER = "`"

    def __init__(self, md: Any):
        super().__init__(r"(?<![\\`])(?P<ticks>`+)(?!`)(?P<code>.+?)(?<!`)(?P=ticks)(?!`)", md)
        self.compiled_re = re.compile(self.pattern, re.DOTALL)

    def handleMatch(self, m, data):
        el = etree.Element("code")
        el.text = util.AtomicString(util.code_escape(m.group("code")))
        return el, m.start(0), m.end(0)


class TexInlineProcessor(InlineProcessor):
    """``$$...$$`` on one line: a token that the engine replaces with KaTeX's HTML (or
    Zulip's error markup, which shows the source) after sanitising."""

    TRIGGER = "$$"

    def __init__(self, md: Any):
        super().__init__(r"(?<!\$)\$\$(?P<body>[^\n_$](?:\\\$|[^$\n])*)\$\$(?!\$)", md)

    def handleMatch(self, m, data):
        # The token goes into the HTML stash, so that the text around it never reads it as
        # part of a word: a string result is put back into the text as it is, and an e-mail
        # address right after it (inside emphasis) took the token into its link.
        return self.md.htmlStash.store(stash_tex(self.md, m.group("body"), False)), m.start(0), m.end(0)


_TZ_OFFSETS = {
    "UTC": 0, "GMT": 0, "Z": 0,
    "IST": 19800, "PST": -28800, "PDT": -25200, "MST": -25200, "MDT": -21600,
    "CST": -21600, "CDT": -18000, "EST": -18000, "EDT": -14400,
    "CET": 3600, "CEST": 7200, "EET": 7200, "EEST": 10800, "BST": 3600,
    "JST": 32400, "KST": 32400, "AEST": 36000, "AEDT": 39600,
}


def parse_timestamp(text: str) -> Optional[datetime.datetime]:
    text = text.strip()
    if not text:
        return None
    try:
        if _NUMBER_RE.fullmatch(text):
            return datetime.datetime.fromtimestamp(float(text), tz=datetime.timezone.utc)
        with budget.once():  # dateutil (with zoneinfo behind it) loads with the first timestamp
            from dateutil import parser as date_parser

        parsed = date_parser.parse(text, tzinfos=_TZ_OFFSETS)
    except (ValueError, OverflowError, TypeError):
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    return parsed.astimezone(datetime.timezone.utc)


class TimestampProcessor(InlineProcessor):
    TRIGGER = "<time:"

    def __init__(self, md: Any):
        # Bounded so that many unclosed "<time:" cannot go quadratic.
        super().__init__(r"<time:(?P<time>[^>]{0,200}?)>", md)

    def handleMatch(self, m, data):
        raw = m.group("time")
        when = parse_timestamp(raw)
        if when is None:
            el = etree.Element("span", {"class": "timestamp-error"})
            el.text = util.AtomicString(f"Invalid time format: {raw}")
        else:
            el = etree.Element("time", {"datetime": when.strftime("%Y-%m-%dT%H:%M:%SZ")})
            el.text = util.AtomicString(raw)
        return el, m.start(0), m.end(0)


# ``[text](url)`` and ``[text](<url> "title")`` in one regex, anchored at
# the "[".  Every part is bounded by a character it may not contain (the
# text by brackets, with one level of nesting; the URL by whitespace and
# parentheses, with two levels of nesting; a title by its own quote), so a
# failed attempt stops at the next bracket, parenthesis or quote and all
# attempts together stay linear in the input.  (Python-Markdown's own link
# parser scans to the end of the text from every "[" that finds no closing
# parenthesis: "[](" * 3333 took seconds.)
LINK_RE = (
    r"\[(?P<text>(?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]"
    r"\([ ]*(?:<(?P<bracketed>[^<>\n]*)>"
    r"|(?P<url>(?:[^\s()]|\((?:[^\s()]|\([^\s()]*\))*\))*))"
    r"(?:[ ]+(?:\"[^\"\n]*\"|'[^'\n]*'))?[ ]*\)"
)


class ZulipLinkProcessor(_Base):
    """``[text](url)`` with an allow-list of URL schemes; refused links stay
    as literal text so the rest of the pipeline still sees it.  Link text is
    inline Markdown (emphasis, emoji...); empty text shows the URL."""

    TRIGGER = "]("

    def __init__(self, md: Any):
        super().__init__(LINK_RE, md)

    def handleMatch(self, m, data):
        raw = m.group("bracketed")
        if raw is None:
            raw = m.group("url")
        href = sanitize_url(self.unescape(raw))
        if href is None:
            return NOT_HANDLED
        href = relative_to_realm(href, self.ctx.realm_url)
        el = etree.Element("a", {"href": href})
        text = m.group("text")
        if text.strip():
            el.text = text
        else:
            el.text = util.AtomicString(href)
        return el, m.start(0), m.end(0)


def _link(href: str, text: str) -> etree.Element:
    el = etree.Element("a", {"href": href})
    el.text = util.AtomicString(text)
    return el


class AutoLinkProcessor(_Base):
    """Bare URLs, www./domain names and e-mail addresses."""

    TRIGGER = re.compile(r"[.@]|://")

    ANCESTOR_EXCLUDES = ("a",)

    def __init__(self, md: Any):
        super().__init__(AUTOLINK_RE.pattern, md)
        self.compiled_re = AUTOLINK_RE

    def handleMatch(self, m, data):
        href = relative_to_realm(autolink_href(m), self.ctx.realm_url)
        return _link(href, m.group("url")), m.start("url"), m.end("url")


_LINKIFIER_CACHE: dict[tuple[tuple[str, str], ...], list[tuple[Any, str]]] = {}


def compile_linkifiers(linkifiers) -> list[tuple[Any, str]]:
    """[(RE2 pattern, template)] for (pattern, template) pairs, memoised per list: the same
    list gets the same answer object (LinkifierProcessor rebuilds only when it changes)."""
    key = tuple((p, t) for p, t in linkifiers)
    compiled = _LINKIFIER_CACHE.get(key)
    if compiled is None:
        compiled = []
        for pattern, template in key:
            rx = linkifier_regex.compile_wrapped(pattern)
            if rx is not None:
                compiled.append((rx, template))
        if len(_LINKIFIER_CACHE) > 256:
            _LINKIFIER_CACHE.clear()
        _LINKIFIER_CACHE[key] = compiled
    return compiled


def linkifier_url(m: Any, template: str) -> str:
    return expand_template(template, linkifier_regex.pattern_values(m))


class _MultiRegex:
    """Looks like a compiled regex to Python-Markdown; yields the earliest
    match among several patterns (earlier patterns win ties)."""

    def __init__(self, patterns: list[Any]):
        self.patterns = patterns
        self._text: Optional[str] = None
        self._last: list[Any] = []

    def search(self, data: str, pos: int = 0) -> Optional["re.Match[str]"]:
        """Whether any of the patterns matches (a trigger test): the first found, not the earliest."""
        for rx in self.patterns:
            m = rx.search(data, pos)
            if m is not None:
                return m
        return None

    def earliest(self, data: str, pos: int = 0) -> Optional["re.Match[str]"]:
        if len(self.patterns) == 1:
            return self.patterns[0].search(data, pos)
        # A search from `pos` finds the match an earlier search from before `pos` found, when
        # that one starts at `pos` or later: keep each pattern's last answer for this text, so
        # the searches are one per match, not one per match and pattern.
        if self._text is not data:
            self._text, self._last = data, [None] * len(self.patterns)
        best = None
        for i, rx in enumerate(self.patterns):
            last = self._last[i]
            if last is not None and last[0] <= pos and (last[1] is None or last[1].start() >= pos):
                m = last[1]
            else:
                m = rx.search(data, pos)
                self._last[i] = (pos, m)
            if m and (best is None or m.start() < best.start()):
                best = m
        return best

    def finditer(self, data: str, pos: int = 0) -> Iterator["re.Match[str]"]:
        while pos <= len(data):
            best = self.earliest(data, pos)
            if best is None:
                return
            yield best
            pos = max(best.end(), best.start() + 1)


class LinkifierProcessor(_Base):
    """Realm linkifiers: regex -> URL template, applied to plain text only."""

    ANCESTOR_EXCLUDES = ("a", "code")

    def __init__(self, md: Any):
        super().__init__(r"(?!x)x", md)
        self._compiled: Any = None  # compile_linkifiers' answer the two below were made from
        self._templates: dict = {}
        self._multi = _MultiRegex([])
        self._urls: dict = {}  # (template, groups) -> the expanded URL, or None when refused

    def _prepare(self) -> _MultiRegex:
        # compile_linkifiers memoises per linkifier list, so the same list is the same object:
        # rebuild only when the realm's linkifiers change, not per text node.
        compiled = compile_linkifiers(self.ctx.linkifiers)
        if compiled is not self._compiled:
            self._templates = {rx: t for rx, t in compiled}
            self._multi = _MultiRegex([rx for rx, _ in compiled])
            self._compiled = compiled
        return self._multi

    @property
    def TRIGGER(self):
        # The patterns themselves: a text none of them matches skips the inline pass.
        return self._prepare() if self.ctx.linkifiers else False

    def getCompiledRegExp(self):
        return self._prepare()

    def handleMatch(self, m, data):
        template = self._templates.get(m.re)
        if template is None:
            return NOT_HANDLED
        # The same reference (an issue number) often comes back within one message.
        key = (template, tuple(m.groupdict().items()))
        url = self._urls.get(key, False)
        if url is False:
            url = linkifier_url(m, template)
            if sanitize_url(url) is None:
                url = None
            if len(self._urls) >= 4096:
                self._urls.clear()
            self._urls[key] = url
        if url is None:
            return NOT_HANDLED
        self.md.zulip_checked_hrefs.add(url)  # the link pass need not check it again
        start, end = linkifier_regex.match_span(m)
        return _link(url, data[start:end]), start, end


WILDCARDS_CHANNEL = {"all", "everyone", "channel", "stream"}


class UserMentionProcessor(_Base):
    TRIGGER = re.compile(r"@_?\*\*")

    def __init__(self, md: Any):
        super().__init__(r"@(?P<silent>_?)\*\*(?P<name>[^*\n]+?)\*\*", md)

    def handleMatch(self, m, data):
        silent = bool(m.group("silent"))
        name = m.group("name")
        at = "" if silent else "@"
        if name in WILDCARDS_CHANNEL:
            cls = "user-mention channel-wildcard-mention" + (" silent" if silent else "")
            el = etree.Element("span", {"class": cls, "data-user-id": "*"})
            el.text = util.AtomicString(at + name)
            if not silent:
                self.result.stream_wildcard = True
            return el, m.start(0), m.end(0)
        if name == "topic":
            el = etree.Element("span", {"class": "topic-mention" + (" silent" if silent else "")})
            el.text = util.AtomicString(at + name)
            if not silent:
                self.result.topic_wildcard = True
            return el, m.start(0), m.end(0)
        full_name: Optional[str] = name
        user_id: Optional[int] = None
        idm = _NAME_WITH_ID_RE.fullmatch(name)
        if idm:
            full_name = idm.group("full") or None
            user_id = int(idm.group("id"))
        user = self.ctx.find_user(full_name, user_id)
        if user is None:
            return NOT_HANDLED
        el = etree.Element("span", {"class": "user-mention" + (" silent" if silent else ""), "data-user-id": str(user.id)})
        el.text = util.AtomicString(at + user.name)
        if silent:
            self.result.silently_mentioned_user_ids.add(user.id)
        else:
            self.result.mentioned_user_ids.add(user.id)
        return el, m.start(0), m.end(0)


class GroupMentionProcessor(_Base):
    TRIGGER = re.compile(r"@_?\*")

    def __init__(self, md: Any):
        super().__init__(r"@(?P<silent>_?)\*(?P<name>[^*\n]+?)\*(?!\*)", md)

    def handleMatch(self, m, data):
        silent = bool(m.group("silent"))
        group = self.ctx.find_group(m.group("name"))
        if group is None:
            return NOT_HANDLED
        el = etree.Element(
            "span",
            {"class": "user-group-mention" + (" silent" if silent else ""), "data-user-group-id": str(group.id)},
        )
        el.text = util.AtomicString(("" if silent else "@") + group.name)
        if not silent:
            self.result.mentioned_group_ids.add(group.id)
        return el, m.start(0), m.end(0)


# Zulip's name for the topic whose name is empty.
EMPTY_TOPIC_NAME = "general chat"


class ChannelLinkProcessor(_Base):
    """``#**channel**``, ``#**channel>topic**`` and the message link ``#**channel>topic@id**``.
    Which channels resolve is the server's business (``find_channel``: those the sender may read)."""

    TRIGGER = "#**"

    ANCESTOR_EXCLUDES = ("a",)

    def __init__(self, md: Any):
        super().__init__(r"#\*\*(?P<channel>[^*>\n]+)(?:>(?P<topic>[^*\n]*?)(?:@(?P<message_id>[0-9]+))?)?\*\*", md)

    def handleMatch(self, m, data):
        channel = self.ctx.find_channel(m.group("channel"))
        if channel is None:
            return NOT_HANDLED
        topic = m.group("topic")
        message_id = m.group("message_id")
        if topic is None:
            el = etree.Element(
                "a", {"class": "stream", "data-stream-id": str(channel.id), "href": channel_narrow(channel.id, channel.name)}
            )
            el.text = util.AtomicString(f"#{channel.name}")
            return el, m.start(0), m.end(0)
        if message_id is None:
            el = etree.Element(
                "a",
                {
                    "class": "stream-topic",
                    "data-stream-id": str(channel.id),
                    "href": topic_narrow(channel.id, channel.name, topic),
                },
            )
            with_id = self.ctx.find_topic_message(channel.id, topic)
            if with_id is not None:
                el.set("href", f"{el.get('href')}/with/{with_id}")
            suffix = ""
        else:
            # No data-stream-id on a message link, as on Zulip.
            el = etree.Element(
                "a", {"class": "message-link", "href": f"{topic_narrow(channel.id, channel.name, topic)}/near/{message_id}"}
            )
            suffix = " @ \U0001f4ac"
        if topic == "":
            el.text = util.AtomicString(f"#{channel.name} > ")
            em = etree.SubElement(el, "em")
            em.text = util.AtomicString(EMPTY_TOPIC_NAME)
            if suffix:
                em.tail = util.AtomicString(suffix)
        else:
            el.text = util.AtomicString(f"#{channel.name} > {topic}{suffix}")
        return el, m.start(0), m.end(0)


def unicode_emoji_span(code: str, name: str, shown: str) -> etree.Element:
    label = name.replace("_", " ")
    el = etree.Element(
        "span", {"aria-label": label, "class": f"emoji emoji-{code}", "role": "img", "title": label}
    )
    el.text = util.AtomicString(shown)
    return el


def image_emoji(name: str, url: str) -> etree.Element:
    return etree.Element("img", {"alt": f":{name}:", "class": "emoji", "src": url, "title": name.replace("_", " ")})


# The emoji table (markdown/emoji.py: zulip-emoji-mapping, a few MiB once indexed) loads when a
# text first holds something that may be an emoji: a `:name:`, an emoticon to translate, or a
# character from U+2000 up. The syntax itself is here, so that building the renderer needs none
# of it.
EMOJI_NAME_SYNTAX_RE = r":(?P<emoji_name>[\w+-]+):"

# Emoticons translated when the sender enabled translate_emoticons.
EMOTICONS = {
    ":)": "smile",
    "(:": "upside_down",
    ":(": "frown",
    "<3": "heart",
    ":|": "expressionless",
    ":/": "confused",
    ":p": "stuck_out_tongue",
    ";)": "wink",
    ":D": "grinning",
    ":o": "open_mouth",
}
_EMOTICON_ALTERNATIVES = "|".join(re.escape(e) for e in sorted(EMOTICONS, key=len, reverse=True))
EMOTICON_RE = re.compile(rf"(?<![\w:;])({_EMOTICON_ALTERNATIVES})(?![\w:;])")


def _emoji_table():
    with budget.once():  # the table's first load is the process's work, not the message's
        import chat_appliance.markdown.emoji as emoji_data
    return emoji_data


class EmojiNameProcessor(_Base):
    TRIGGER = ":"

    def __init__(self, md: Any):
        super().__init__(EMOJI_NAME_SYNTAX_RE, md)

    def handleMatch(self, m, data):
        name = m.group("emoji_name")
        realm = self.ctx.realm_emoji.get(name)
        if realm is not None:
            return image_emoji(name, realm[1]), m.start(0), m.end(0)
        emoji_data = _emoji_table()
        if name in emoji_data.ZULIP_EXTRA_EMOJI:
            return image_emoji(name, emoji_data.ZULIP_EXTRA_EMOJI[name]), m.start(0), m.end(0)
        code = emoji_data.NAME_TO_CODE.get(name)
        if code is None:
            return NOT_HANDLED
        return unicode_emoji_span(code, name, f":{name}:"), m.start(0), m.end(0)


class EmoticonProcessor(_Base):
    # Every match contains one of the emoticons (the pattern's lookarounds aside).
    _TRIGGER_RE = re.compile(_EMOTICON_ALTERNATIVES)

    @property
    def TRIGGER(self):
        return self._TRIGGER_RE if self.ctx.translate_emoticons else False

    def __init__(self, md: Any):
        super().__init__(EMOTICON_RE.pattern, md)
        self.compiled_re = EMOTICON_RE

    def handleMatch(self, m, data):
        if not self.ctx.translate_emoticons:
            return NOT_HANDLED
        name = EMOTICONS[m.group(1)]
        code = _emoji_table().NAME_TO_CODE[name]
        return unicode_emoji_span(code, name, f":{name}:"), m.start(0), m.end(0)


class UnicodeEmojiProcessor(InlineProcessor):
    """Emoji typed as Unicode characters.  A run of adjacent emoji is one
    match, turned into one piece of HTML: a message of nothing but emoji
    would otherwise cost one element (and placeholder) per character.
    Its pattern, made from the emoji table, is compiled at the first text
    that passes the trigger."""

    TRIGGER = re.compile("[\u2000-\U0010ffff]")

    def __init__(self, md: Any):
        super().__init__("(?!)", md)  # stands in until getCompiledRegExp
        self.compiled_re = None

    def getCompiledRegExp(self):
        if self.compiled_re is None:
            self.compiled_re = _emoji_run_re()
        return self.compiled_re

    def handleMatch(self, m, data):
        emoji_data = _emoji_table()
        parts = []
        end = m.start(0)
        for part in emoji_data.UNICODE_EMOJI_SINGLE_RE.finditer(data, m.start(0), m.end(0)):
            code = emoji_data.code_for_unicode(part.group(0))
            if code is None:
                break
            parts.append(code)
            end = part.end()
        if not parts:
            # Not a known emoji: leave the first one as text, go on after it.
            first = emoji_data.UNICODE_EMOJI_SINGLE_RE.match(data, m.start(0))
            return None, m.start(0), first.end()
        if len(parts) == 1:
            name = emoji_data.CODE_TO_NAME[parts[0]]
            return unicode_emoji_span(parts[0], name, f":{name}:"), m.start(0), end
        html_text = "".join(_emoji_span_html(code) for code in parts)
        return self.md.htmlStash.store(html_text), m.start(0), end


@functools.lru_cache(maxsize=1)
def _emoji_run_re() -> re.Pattern[str]:
    """A run of adjacent emoji, as one match (compiled once per process, as InlineProcessor would)."""
    return re.compile(_emoji_table().UNICODE_EMOJI_RUN_RE, re.DOTALL | re.UNICODE)


@functools.lru_cache(maxsize=4096)
def _emoji_span_html(code: str) -> str:
    name = _emoji_table().CODE_TO_NAME[code]
    return _leaf_html(unicode_emoji_span(code, name, f":{name}:"))


class TagProcessor(InlineProcessor):
    """Wrap group ``body`` in ``tag`` (strong, em, del), or in nested tags
    for a comma-separated list ("strong,em" gives <strong><em>)."""

    def __init__(self, pattern: str, tag: str, md: Any):
        super().__init__(pattern, md)
        self.tags = tag.split(",")
        self.TRIGGER = "~~" if self.tags == ["del"] else "*"

    def handleMatch(self, m, data):
        outer = inner = etree.Element(self.tags[0])
        for tag in self.tags[1:]:
            inner = etree.SubElement(inner, tag)
        inner.text = m.group("body")
        return outer, m.start(0), m.end(0)


# Emphasis is written with asterisks only (underscores are left alone, as
# they are common in identifiers) and never spans lines.  "***x***" is strong
# and emphasised; "**x**" is strong, with anything but a line break inside
# (including single asterisks); "*x*" is emphasised when the text neither
# starts nor ends with whitespace and contains no asterisk, so "char *x =
# (char *)y" stays as written.  "~~x~~" strikes through when no other
# tilde touches either pair, so a row of tildes stays text.
STRONG_EM_RE = r"\*\*\*(?![\s*])(?P<body>[^*\n]+)(?<!\s)\*\*\*"
STRONG_RE = r"\*\*(?P<body>[^\n]+?)\*\*"
EM_RE = r"(?<!\*)\*(?![\s*])(?P<body>[^*\n]+?)(?<![\s*])\*(?!\*)"
DEL_RE = r"(?<!~)~~(?P<body>[^\n~]+?)~~(?!~)"


class NewlineProcessor(InlineProcessor):
    TRIGGER = "\n"

    def __init__(self, md: Any):
        super().__init__(r"\n", md)

    def handleMatch(self, m, data):
        el = etree.Element("br")
        return el, m.start(0), m.end(0)
