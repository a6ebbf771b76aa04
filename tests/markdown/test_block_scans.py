"""The renderer's single-scan stand-ins for Python-Markdown's per-line block work (which made
some messages quadratic) give exactly the original answers, on generated lines of quote markers,
hashes, spaces and text.

Each test's docstring is the question it answers."""

import random
import re

from markdown.blockprocessors import BlockQuoteProcessor

from chat_appliance.markdown.blocks import _QUOTE_CONTENT_RE, ZulipBlockQuoteProcessor, ZulipHashHeaderProcessor

PIECES = [" ", "  ", "   ", "    ", ">", "> ", "a", "\t", "\r", "\n", "\f", "\v", "\u00a0", "#", "##", "\\", "|"]
STRIP_RE = re.compile(r"^[ ]{0,3}>[ ]?")


def generated(count, seed):
    rnd = random.Random(seed)
    return ["".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 14))) for _ in range(count)]


def test_clean_lines_is_python_markdowns_clean_on_every_line():
    """Does one clean_lines call leave every line as BlockQuoteProcessor.clean leaves it line by line?"""
    original = BlockQuoteProcessor.__new__(BlockQuoteProcessor)
    for text in generated(50_000, 1):
        assert ZulipBlockQuoteProcessor.clean_lines(text) == "\n".join(original.clean(line) for line in text.split("\n")), repr(text)


def test_quote_content_scan_finds_what_the_line_by_line_test_found():
    """Is there content after the quote markers exactly when some line, its marker stripped, is not blank?"""
    for text in generated(50_000, 2):
        expected = any(STRIP_RE.sub("", line).strip() for line in text.split("\n"))
        assert (_QUOTE_CONTENT_RE.search(text) is not None) == expected, repr(text)


def test_heading_search_finds_the_same_first_heading():
    """Does the heading test's str.find search return the first match that re's search returns, with the same groups?"""
    search = ZulipHashHeaderProcessor.RE
    for text in generated(50_000, 3):
        want, got = search.rx.search(text), search.search(text)
        assert (want is None) == (got is None), repr(text)
        if want is not None:
            assert (want.span(), want.groupdict()) == (got.span(), got.groupdict()), repr(text)
