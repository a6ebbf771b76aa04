"""A per-message budget of rendering time, against messages crafted to render slowly.

The renderer's known paths are linear in the message (tests/markdown/test_linear_time.py and
scripts/bench_markdown_worst.py hold the corpus), but a path nobody found yet must not let one
message hold a worker thread for seconds. The block parser and the inline pass check the clock
between steps; past the deadline rendering stops with RenderBudgetExceeded, and the engine stores
the message as escaped plain text, with a log line. The clock is the thread's CPU time, so that a
busy machine, where a thread waits for a core, does not turn ordinary messages into plain text.
Work the process does once (a Pygments lexer's module and tables, on their first use) is not
the message's and does not count (`once`): the first PHP block after a start took half the
budget in it, and a loaded machine then stored a six-block message as plain text.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager

from markdown.blockprocessors import BlockProcessor

# This thread's CPU seconds of one-time work (`once`) since its current message's start().
_once = threading.local()


class RenderBudgetExceeded(Exception):
    """Rendering went past its deadline."""


def start(md, seconds: float | None) -> None:
    md.zulip_deadline = None if seconds is None else time.thread_time() + seconds
    _once.spent = 0.0


def remaining(md) -> float | None:
    """Seconds left of the message's budget (None: no budget)."""
    deadline = getattr(md, "zulip_deadline", None)
    if deadline is None:
        return None
    return deadline - (time.thread_time() - getattr(_once, "spent", 0.0))


def check(md) -> None:
    deadline = getattr(md, "zulip_deadline", None)
    if deadline is not None and time.thread_time() - getattr(_once, "spent", 0.0) > deadline:
        raise RenderBudgetExceeded()


@contextmanager
def once():
    """Around work the process does once and caches (loading and preparing a lexer): its CPU
    time is not charged to the message being rendered."""
    began = time.thread_time()
    try:
        yield
    finally:
        _once.spent = getattr(_once, "spent", 0.0) + time.thread_time() - began


class BudgetProcessor(BlockProcessor):
    """First in the block parser's list, so its test runs once per block step: it checks the
    deadline and never claims a block."""

    def test(self, parent, block) -> bool:
        check(self.parser.md)
        return False

    def run(self, parent, blocks) -> None:  # never called: test() is always False
        raise AssertionError("BudgetProcessor.run")
