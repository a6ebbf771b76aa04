#!/usr/bin/env python3
"""Worst-case Markdown rendering: every input of the corpus below, 10 KB (the maximum message
length), must render in under 50 ms, since a message crafted to render slowly holds a worker
thread (10 KB of "# " lines cost 0.8-2 s while the table processor's test was not linear).

The corpus covers each construct that nests or pairs: headings, nested lists and quotes, emphasis
runs, tables (long and wide), mentions, channel links, fences, links, code spans, emoji, entities,
and their openers without closers. Times are CPU time of the rendering thread, best of --rounds,
so that other work on a shared machine does not count. Prints one line per input and exits 1 if
any input misses the target. tests/markdown/test_linear_time.py checks the same shapes for linearity
(relative to a typical message), which a timed test on a shared machine could not do reliably.

    python scripts/bench_markdown_worst.py [--size 10000] [--target-ms 50] [--rounds 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chat_appliance.markdown import MentionTarget, RenderContext, render


def corpus(size):
    def fill(unit, n=size):
        return (unit * (n // len(unit) + 1))[:n]

    def nested(make_line):
        lines, total, depth = [], 0, 0
        while total < size:
            lines.append(make_line(depth))
            total += len(lines[-1]) + 1
            depth += 1
        return "\n".join(lines)[:size]

    return {
        "empty headings": fill("# \n"),
        "headings": fill("# a\n"),
        "headings ending in a pipe": fill("# a|\n"),
        "nested list": nested(lambda i: "  " * i + "* a"),
        "nested numbered list": nested(lambda i: "  " * i + "1. a"),
        "list items": fill("* a\n"),
        "list markers on one line": fill("* ") + "a",
        "quote markers": fill(">"),
        "quote lines": fill("> a\n"),
        "nested quotes": nested(lambda i: ">" * i + " a"),
        "emphasis openers": fill("*a"),
        "strong openers": fill("**"),
        "mixed emphasis": fill("*_"),
        "strikethrough openers": fill("~~a"),
        "deep emphasis": "*" * (size // 2) + "a" + "*" * (size // 2 - 1),
        "table rows": "|a|b|\n|-|-|\n" + fill("|a|b|\n", size - 12),
        "wide table": "|" + fill("a|", size // 2 - 2) + "\n|" + fill("-|", size // 2 - 2) + "\n",
        "mention openers": fill("@**a"),
        "mentions": fill("@**a** "),
        "silent mention openers": fill("@_**"),
        "channel link openers": fill("#**a>"),
        "fences": fill("```\n"),
        "tilde fences": fill("~~~a\n"),
        "unclosed fence": "```\n" + fill("a\n", size - 4),
        "quote fences": fill("```quote\n"),
        "spoiler fences": fill("```spoiler a\n"),
        "link openers": fill("[a]("),
        "links": fill("[a](b) "),
        "nested brackets": "[" * (size // 2) + "]" * (size // 2),
        "urls": fill("http://a "),
        "code span openers": fill("`a"),
        "emoji name openers": fill(":a"),
        "emoji names": fill(":smile:"),
        "entities": fill("&"),
        "angle brackets": fill("<"),
        "timestamps": fill("<time:"),
        "linkifier matches": fill("#1 "),
        "distinct linkifier matches": fill(" ".join(f"#{n}" for n in range(1, size))),
        "links in a quote": "> " + fill("[a](b) ", size - 2),
        "emoji apart by letters": fill(":a:b"),
        "indented code": fill("    a\n"),
        "everything": fill("> * # a *b* _c_ [d](e) @**f** `g` :h: |i|\n"),
    }


def context():
    return RenderContext(
        realm_url="https://chat.example.com", translate_emoticons=True,
        linkifiers=[(r"#(?P<id>[0-9]+)", "https://tracker.example.com/{id}")],
        find_user=lambda name, user_id: MentionTarget(1, "A"), find_group=lambda name: None,
        find_channel=lambda name: MentionTarget(2, "a"), realm_emoji={})


def cpu_ms(text, ctx):
    start = time.thread_time()
    render(text, ctx)
    return (time.thread_time() - start) * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--target-ms", type=float, default=50.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    ctx = context()
    render("warm *up* `x` @**a**", ctx)
    missed = []
    for name, text in corpus(args.size).items():
        best = min(cpu_ms(text, ctx) for _ in range(args.rounds))
        verdict = "ok" if best < args.target_ms else "MISSED"
        if best >= args.target_ms:
            missed.append(name)
        print(f"{name:28} {len(text):6d} chars {best:8.1f} ms  {verdict}")
    print(f"\n{len(missed)} of {len(corpus(args.size))} inputs over {args.target_ms:g} ms"
          + (": " + ", ".join(missed) if missed else ""))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
