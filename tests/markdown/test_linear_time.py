"""Rendering time is linear in the message: no input up to the maximum message length costs
more than 10x a typical message of the same size.

Times are compared, never asserted absolutely: each pathological input is timed
alternately with the typical message, and the best of several runs of each is kept, in
CPU time of the rendering thread, so that other work on a loaded machine counts for
neither."""

import time

import pytest

from chat_appliance.config import DEFAULTS
from chat_appliance.markdown import MentionTarget, RenderContext, render

SIZE = DEFAULTS["MAX_MESSAGE_LENGTH"]
MAX_RATIO = 10.0

TYPICAL = """Morning @**Ada Lovelace**! The nightly build on #**ops>ci status** failed again :sad:

It looks like the **integration** suite times out on the *slow* runner, see
https://ci.example.org/builds/8812 and ticket #512 for the history.

* retry the job with `--jobs 2`
* check the disk usage on `runner-3`
* ping @_**Grace Hopper** if it is the cache again

> The cache was cleared on Friday, so it should not be that.

```python
def flaky(attempts=3):
    return any(run() for _ in range(attempts))
```

1. pin the old image
2. rerun, then compare [the logs](https://logs.example.org/run/8812)

Thanks, back after lunch 🍕
"""


def fill(unit, size=SIZE):
    return (unit * (size // len(unit) + 1))[:size]


def nested(make_line, size=SIZE):
    """Lines make_line(0), make_line(1), ... joined, cut at `size` characters."""
    lines, total, depth = [], 0, 0
    while total < size:
        lines.append(make_line(depth))
        total += len(lines[-1]) + 1
        depth += 1
    return "\n".join(lines)[:size]


PATHOLOGICAL = {
    "link openers": fill("[]("),
    "image link openers": fill("![]("),
    "unclosed link targets": fill("[a](b "),
    "nested brackets": "[" * (SIZE // 2) + "]" * (SIZE // 2),
    "brackets then parenthesis": "[" * (SIZE // 2 - 1) + "](" + ")" * (SIZE // 2 - 1),
    "emphasis run": fill("*"),
    "emphasis pairs": fill("*a"),
    "strong openers": fill("**a"),
    "strong-em openers": fill("***a"),
    "strikethrough openers": fill("~~a"),
    "backtick run": fill("`"),
    "code span openers": fill("`a"),
    "mixed backticks": fill("``a`"),
    "one long word": fill("a"),
    "one long line of colons": fill(":"),
    "emoji name openers": fill(":a"),
    "emoji": fill("\U0001F600"),
    "emoji names": fill(":smile: "),
    "mention openers": fill("@**"),
    "group mention openers": fill("@*"),
    "channel link openers": fill("#**"),
    "timestamp openers": fill("<time:"),
    "tex openers": fill("$$a"),
    "backslashes": fill("\\"),
    "escapes": fill("\\*"),
    "angle brackets": fill("<"),
    "entities": fill("&amp;"),
    "url-like": fill("http://"),
    "domain-like": fill("a.co "),
    "parenthesised url": "http://a.example/" + fill("(", SIZE - 17),
    "line breaks": fill("a\n"),
    "list items": fill("* a\n"),
    "numbered item chain": fill("1. "),
    "deep list": nested(lambda i: "  " * i + "* a"),
    "deep numbered list": nested(lambda i: "  " * i + "1. a"),
    "quote markers": fill(">"),
    "quote chain": fill("> ", SIZE - 1) + "a",
    "deep quote lines": nested(lambda i: "> " * i + "a"),
    "fences": fill("~~~\n"),
    "quote fences": fill("```quote\n"),
    "spoiler fences": fill("```spoiler x\n"),
    "table rows": "a|b\n-|-\n" + fill("|a\n", SIZE - 8),
    "pipes": fill("|"),
    "headings": fill("# "),
    # Each heading line once made the table processor split
    # the whole rest of the message, 0.5-2 s for 10 KB of "# " lines.
    "empty heading lines": fill("# \n"),
    "heading lines": fill("# a\n"),
    "heading lines ending in a pipe": fill("# a|\n"),
    "table rows after headings": "# a\n" * 100 + "|a|\n|-|\n" + fill("|a|\n", SIZE - 410),
    "wide table": "|" + fill("a|", SIZE // 2 - 2) + "\n|" + fill("-|", SIZE // 2 - 2) + "\n",
    "table of many rows": "|a|b|\n|-|-|\n" + fill("|a|b|\n", SIZE - 12),
    "quoted headings": fill("> # a\n"),
    "heading then quote lines": fill("# a\n> b\n"),
    "indented lines": fill("    a\n"),
    # Thousands of links in one message: each was an element through every later pass.
    "linkifier matches": fill("#1 "),
    "distinct linkifier matches": fill(" ".join(f"#{n}" for n in range(1, SIZE))),
    "markdown links": fill("[a](b) "),
    "bare links": fill("http://a.co "),
    "links in a quote": "> " + fill("[a](b) ", SIZE - 2),
    "emoji apart by letters": fill(":a:b"),
    "everything at once": fill("*[`~@#:$<_\\&>|!("),
}


def context():
    people = {"Ada Lovelace": MentionTarget(1, "Ada Lovelace"), "Grace Hopper": MentionTarget(2, "Grace Hopper")}
    return RenderContext(
        translate_emoticons=True,
        linkifiers=[(r"#(?P<id>[0-9]+)", "https://tickets.example.org/{id}")],
        find_user=lambda name, user_id: people.get(name or ""),
        find_group=lambda name: MentionTarget(3, name) if name == "ops" else None,
        find_channel=lambda name: MentionTarget(4, name) if name == "ops" else None,
    )


def best_time(text, ctx):
    start = time.thread_time()
    render(text, ctx)
    return time.thread_time() - start


def ratio(text, ctx, rounds=5):
    typical = fill(TYPICAL)
    best, base = float("inf"), float("inf")
    for _ in range(rounds):
        best = min(best, best_time(text, ctx))
        base = min(base, best_time(typical, ctx))
    return best / base


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_pathological_input_costs_at_most_ten_typical_messages(name):
    """Does this pathological input of the maximum message length render within 10x the time of a typical message of that size?"""
    text = PATHOLOGICAL[name]
    assert len(text) <= SIZE
    ctx = context()
    render(text, ctx)  # warm-up: lexers, caches
    measured = ratio(text, ctx)
    if measured > MAX_RATIO:
        # One more, longer look before failing: a busy machine can stall one series.
        measured = min(measured, ratio(text, ctx, rounds=9))
    assert measured <= MAX_RATIO, f"{name}: {measured:.1f}x a typical message"


def test_yardstick_is_steady():
    """Measured against itself, does the typical message come out near 1x (so a 10x verdict means something)?"""
    ctx = context()
    assert 0.33 < ratio(fill(TYPICAL), ctx) < 3


def test_size_counts_and_a_cheap_input_is_cheap():
    """Does a plain long paragraph cost no more than the typical message of the same size?"""
    ctx = context()
    assert ratio(fill("plain words and more plain words "), ctx) <= 1.5
