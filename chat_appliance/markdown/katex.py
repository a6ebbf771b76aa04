"""TeX to HTML with KaTeX, run in an embedded V8 (the ``mini-racer`` package).

Zulip typesets ``$$...$$`` and ```` ```math ```` at send time with KaTeX and stores the HTML;
clients only need KaTeX's stylesheet and fonts. The KaTeX release is vendored inside this
package (``vendor/katex/``: ``katex.min.js`` for the renderer, ``katex.min.css`` and ``fonts/``
for the browser), so the renderer reads it without reaching into any other part of the server,
and the web client serves the stylesheet and fonts of the same folder at /static/katex/
(webclient/views.py), so markup and styles always agree.

One JavaScript engine per process, started on the first formula (loading KaTeX takes tens of
milliseconds, a formula then well under one). V8 isolates are single-threaded, so calls are
serialised by a lock. The engine is shared by everyone, so one person's formulas must not cost
another's:

* a message's formulas get at most FORMULA_SECONDS of engine time, and no more than what is
  left of the message's render budget (markdown/budget.py): a formula still running then is
  stopped, and the message's formulas get the error markup;
* each person (``RenderContext.tex_owner``) has ENGINE_SECONDS_PER_MINUTE of engine time a
  minute; past it their formulas get the error markup until it refills;
* a message whose formulas find the engine busy waits at most BUSY_WAIT_SECONDS for it and
  then gets the error markup: no request thread queues behind the lock;
* a message's typeset output is at most MAX_OUTPUT_CHARS (KaTeX's markup of a formula can be a
  hundred times its source); formulas past it get the error markup;
* V8's heap is capped (HEAP_LIMIT_BYTES), and the engine is started afresh when a call leaves
  it above HEAP_RESTART_BYTES or reached the cap. Without the engine (``mini-racer`` missing, or no wheel for the platform) ``render_tex``
returns ``FALLBACK`` and the renderer keeps Zulip's error markup, which shows the source; the
first such call logs it once.

KaTeX runs with its defaults (``trust`` off: no ``\\href``, ``\\url`` or HTML extensions; user
text is escaped by KaTeX). Its output is spliced into text positions only and then goes through
the HTML sanitiser with the rest of the message (its MathML, SVG and styles are allowed inside
KaTeX's span only, and come out as KaTeX wrote them: sanitize.py).
"""

from __future__ import annotations

import atexit
import html as html_module
import logging
import re
import threading
import time
from pathlib import Path
from typing import Any, Hashable, Optional

KATEX_DIR = Path(__file__).resolve().parent / "vendor" / "katex"
KATEX_JS = KATEX_DIR / "katex.min.js"
# Longest TeX source handed to KaTeX; a longer formula gets the error markup (Zulip's cap on a
# message is far larger, but a formula this long is not maths anyone reads).
MAX_TEX_LENGTH = 10_000
# Engine time (wall clock: V8 runs on its own thread) for one message's formulas.
FORMULA_SECONDS = 0.25
# Each person's engine time per minute, refilled continuously.
ENGINE_SECONDS_PER_MINUTE = 3.0
# How long a message waits for an engine busy with another message's formulas.
BUSY_WAIT_SECONDS = 0.02
# Typeset HTML per message (20 ordinary formulas are about 85,000 characters).
MAX_OUTPUT_CHARS = 300_000
# V8's heap: a hard cap, and the size past which the engine is started afresh after a call.
HEAP_LIMIT_BYTES = 256 * 1024 * 1024
HEAP_RESTART_BYTES = 64 * 1024 * 1024
# A call this long is followed by a look at the heap (which costs about 2 ms).
HEAP_CHECK_AFTER_SECONDS = 0.05

FALLBACK = object()  # no engine: keep today's markup
BUSY = object()  # the engine was busy with another message's formulas

log = logging.getLogger("chat_appliance.markdown.katex")

# All the formulas of a message in one call: each call crosses into the engine's thread.
_RENDER_FN = """
function __chatApplianceTex(items, budgetMs) {
  var deadline = Date.now() + budgetMs;
  return items.map(function (item) {
    if (Date.now() > deadline) return null;
    try {
      return katex.renderToString(item[0], {displayMode: item[1], maxExpand: 1000, maxSize: 100});
    } catch (e) {
      return null;
    }
  });
}
"""


class _Engine:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ctx: Any = None
        self.started = False
        self.unavailable = False

    def _start(self) -> None:
        self.started = True
        try:
            from py_mini_racer import MiniRacer  # type: ignore[import-not-found,import-untyped,unused-ignore]

            ctx = MiniRacer()
            ctx.set_hard_memory_limit(HEAP_LIMIT_BYTES)
            ctx.eval(KATEX_JS.read_text(encoding="utf-8"))
            ctx.eval(_RENDER_FN)
        except Exception as error:  # ImportError, a missing file, an engine that fails to start
            self.unavailable = True
            log.warning("KaTeX is not available (%s: %s): TeX is shown as its source, as for invalid TeX. "
                        "Install the mini-racer package to typeset it.", type(error).__name__, error)
            return
        self.ctx = ctx
        # V8's thread must be shut down before the interpreter's: left to garbage collection at
        # exit, the process can hang there.
        if not getattr(self, "_atexit", False):
            atexit.register(self.close)
            self._atexit = True

    def close(self) -> None:
        with self.lock:
            ctx, self.ctx = self.ctx, None
            if ctx is not None:
                self.unavailable = True
                ctx.close()

    def _restart_if_grown(self, seconds: float, failed: bool) -> None:
        """Start the engine afresh (on the next call) when its heap grew past the limit: V8 keeps
        the memory a costly formula took."""
        if seconds < HEAP_CHECK_AFTER_SECONDS and not failed:
            return
        try:
            grown = (self.ctx.was_hard_memory_limit_reached()
                     or self.ctx.heap_stats().get("used_heap_size", 0) > HEAP_RESTART_BYTES)
        except Exception:
            grown = True
        if grown:
            log.info("Restarting the KaTeX engine: its heap grew past %d bytes", HEAP_RESTART_BYTES)
            ctx, self.ctx, self.started = self.ctx, None, False
            ctx.close()

    def render(self, items: list[tuple[str, bool]], seconds: float) -> Any:
        """KaTeX's HTML for each item (None where it fails), BUSY when another message holds
        the engine, FALLBACK without an engine; at most `seconds` of engine time."""
        if not self.lock.acquire(timeout=BUSY_WAIT_SECONDS):
            return BUSY
        try:
            if not self.started:
                self._start()
            if self.unavailable or self.ctx is None:
                return FALLBACK
            began = time.monotonic()
            failed = False
            try:
                # KaTeX starts no formula past 80% of the time, so a timeout (which loses the whole
                # call) is left to a formula that runs away on its own.
                out = self.ctx.call("__chatApplianceTex", items, int(seconds * 800), timeout_sec=seconds)
            except Exception as error:  # a timeout or an engine error: these formulas only
                log.warning("KaTeX failed on %d formulas: %s", len(items), type(error).__name__)
                out, failed = None, True
            self._restart_if_grown(time.monotonic() - began, failed)
        finally:
            self.lock.release()
        if not isinstance(out, list) or len(out) != len(items):
            return [None] * len(items)
        return [html if isinstance(html, str) else None for html in out]


_engine = _Engine()


class _Allowance:
    """Each owner's engine time: a bucket of ENGINE_SECONDS_PER_MINUTE, refilled continuously."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.spent: dict[Hashable, tuple[float, float]] = {}  # owner -> (seconds in debt, at)

    def left(self, owner: Hashable) -> float:
        with self.lock:
            debt, at = self.spent.get(owner, (0.0, 0.0))
            debt = max(0.0, debt - (time.monotonic() - at) * ENGINE_SECONDS_PER_MINUTE / 60)
            return ENGINE_SECONDS_PER_MINUTE - debt

    def spend(self, owner: Hashable, seconds: float) -> None:
        with self.lock:
            now = time.monotonic()
            debt, at = self.spent.get(owner, (0.0, now))
            debt = max(0.0, debt - (now - at) * ENGINE_SECONDS_PER_MINUTE / 60)
            if len(self.spent) > 10_000:
                # Forget owners whose debt has been repaid by now (a bound on the table).
                self.spent = {o: (d, a) for o, (d, a) in self.spent.items()
                              if d - (now - a) * ENGINE_SECONDS_PER_MINUTE / 60 > 0}
            self.spent[owner] = (debt + seconds, now)


_allowance = _Allowance()


def render_tex(items: list[tuple[str, bool]], seconds: float = FORMULA_SECONDS, owner: Optional[Hashable] = None) -> Any:
    """KaTeX's HTML for each ``(tex, display)``, or None where KaTeX rejects it, runs out of
    time, finds the engine busy or would pass the output limit (the caller emits Zulip's error
    markup); FALLBACK when there is no engine on this platform. At most `seconds` of engine
    time, and no more than `owner`'s allowance."""
    wanted = [(i, item) for i, item in enumerate(items) if len(item[0]) <= MAX_TEX_LENGTH]
    if owner is not None:
        seconds = min(seconds, _allowance.left(owner))
    seconds = min(seconds, FORMULA_SECONDS)
    if not wanted or seconds <= 0.001:
        return [None] * len(items)
    began = time.monotonic()
    rendered = _engine.render([item for _, item in wanted], seconds)
    if owner is not None and rendered is not BUSY:
        _allowance.spend(owner, time.monotonic() - began)
    if rendered is FALLBACK:
        return FALLBACK
    out: list[Optional[str]] = [None] * len(items)
    if rendered is BUSY:
        return out
    total = 0
    for (i, _), html in zip(wanted, rendered):
        if html is not None:
            total += len(html)
            if total > MAX_OUTPUT_CHARS:
                break
        out[i] = html
    return out


def stash_tex(md: Any, tex: str, display: bool) -> str:
    """An opaque per-render token for a formula; all of a message's formulas are typeset in
    one call after the Markdown pass (``typeset``) and put in place of their tokens."""
    formulas = md.zulip_tex
    token = f"ZTEX{md.zulip_nonce}N{len(formulas)}Z"
    formulas.append((token, tex, display))
    return token


def typeset(html: str, formulas: list[tuple[str, str, bool]], seconds: float = FORMULA_SECONDS,
            owner: Optional[Hashable] = None) -> str:
    """Replace each formula's token in ``html`` with KaTeX's HTML, or with Zulip's error markup
    (the escaped source) where KaTeX rejects it or is not available. Only tokens in text are
    typeset: a token inside a tag (a link's text copied into a preview's ``title``) becomes the
    formula's source, since markup has no place in an attribute. One pass over the text, however
    many formulas (a message of thousands stays linear). The sanitiser runs after this."""
    if not formulas:
        return html
    rendered = render_tex([(tex, display) for _, tex, display in formulas], seconds, owner)
    if rendered is FALLBACK:
        rendered = [None] * len(formulas)
    by_token = {token: (out if out is not None else tex_fallback(tex, display))
                for (token, tex, display), out in zip(formulas, rendered)}
    source = {token: html_module.escape(tex if display else f"$${tex}$$", quote=True)
              for token, tex, display in formulas}
    prefix = formulas[0][0].split("N", 1)[0]  # "ZTEX<nonce>"
    token_re = re.compile(re.escape(prefix) + r"N[0-9]+Z")

    def in_text(m: "re.Match[str]") -> str:
        return by_token.get(m.group(0), m.group(0))

    def in_tag(m: "re.Match[str]") -> str:
        return source.get(m.group(0), m.group(0))

    pieces = _TAG_SPLIT_RE.split(html)
    for i, piece in enumerate(pieces):
        if prefix in piece:
            pieces[i] = token_re.sub(in_tag if i % 2 else in_text, piece)
    return "".join(pieces)


# Our serialiser escapes "<" and ">" inside attribute values, so a tag ends at its first ">".
_TAG_SPLIT_RE = re.compile(r"(<[^>]*>)")


def tex_fallback(tex: str, display: bool) -> str:
    """Zulip's markup for TeX that KaTeX could not render (or with no KaTeX): the source."""
    shown = tex if display else f"$${tex}$$"
    return f'<span class="tex-error">{html_module.escape(shown, quote=False)}</span>'
