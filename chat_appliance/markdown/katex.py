"""TeX to HTML with KaTeX, run in an embedded V8 (the ``mini-racer`` package).

Zulip typesets ``$$...$$`` and ```` ```math ```` at send time with KaTeX and stores the HTML;
clients only need KaTeX's stylesheet and fonts. The KaTeX release is vendored inside this
package (``vendor/katex/``: ``katex.min.js`` for the renderer, ``katex.min.css`` and ``fonts/``
for the browser), so the renderer reads it without reaching into any other part of the server,
and the web client serves the stylesheet and fonts of the same folder at /static/katex/
(webclient/views.py), so markup and styles always agree.

One JavaScript engine per process, in a process of its own (markdown/katex_child.py), started
on the first formula and ended after IDLE_SECONDS without one: V8's library and its ICU data
are some 60 MB mapped into whatever process loads them, and a process cannot unload a library,
so an engine inside the server kept them for the server's life after a single formula. Starting
the process takes a few tenths of a second of the first formula's send. V8 isolates are
single-threaded, so calls are serialised by a lock. The engine is shared by everyone, so one
person's formulas must not cost another's:

* a message's formulas get at most FORMULA_SECONDS of engine time, and no more than what is
  left of the message's render budget (markdown/budget.py): a formula still running then is
  stopped, and the message's formulas get the error markup;
* each person (``RenderContext.tex_owner``) has ENGINE_SECONDS_PER_MINUTE of engine time a
  minute; past it their formulas get the error markup until it refills;
* a message whose formulas find the engine busy waits at most BUSY_WAIT_SECONDS for it and
  then gets the error markup: no request thread queues behind the lock;
* a message's typeset output is at most MAX_OUTPUT_CHARS (KaTeX's markup of a formula can be a
  hundred times its source); formulas past it get the error markup;
* V8's heap is capped (HEAP_LIMIT_BYTES), and the engine takes a fresh context when a call
  leaves it above HEAP_RESTART_BYTES or reached the cap; an engine process that does not answer
  in time is killed, and the next formula starts another. Without the engine (``mini-racer``
  missing, or no wheel for the platform) ``render_tex`` returns ``FALLBACK`` and the renderer
  keeps Zulip's error markup, which shows the source; the first such call logs it once.

KaTeX runs with its defaults (``trust`` off: no ``\\href``, ``\\url`` or HTML extensions; user
text is escaped by KaTeX). Its output is spliced into text positions only and then goes through
the HTML sanitiser with the rest of the message (its MathML, SVG and styles are allowed inside
KaTeX's span only, and come out as KaTeX wrote them: sanitize.py).
"""

from __future__ import annotations

import atexit
import html as html_module
import json
import logging
import os
import re
import select
import subprocess
import sys
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
# The engine's process ends after this long without a formula.
IDLE_SECONDS = 60.0
# How long the engine's process may take to start (Python, V8 and KaTeX loaded), and how much
# longer than its time limit a call may take to be answered, before the process is killed.
START_SECONDS = 15.0
ANSWER_GRACE_SECONDS = 2.0

CHILD = Path(__file__).resolve().parent / "katex_child.py"

FALLBACK = object()  # no engine: keep today's markup
BUSY = object()  # the engine was busy with another message's formulas

log = logging.getLogger("chat_appliance.markdown.katex")


class _Engine:
    """The engine's process (katex_child.py), started on demand and ended when idle."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.process: Optional[subprocess.Popen[bytes]] = None
        self.unavailable = False
        self.generation: Optional[tuple[int, int]] = None  # (pid, V8 context) of the last answer
        self.last_used = 0.0
        self._buffer = b""
        self._atexit = False

    def _start(self) -> bool:
        """Start the engine's process; False when it cannot typeset (said in the log)."""
        try:
            process = subprocess.Popen(
                [sys.executable, str(CHILD), str(KATEX_JS), str(HEAP_LIMIT_BYTES)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=True)
        except OSError as error:
            self._give_up(f"{type(error).__name__}: {error}")
            return False
        self.process, self._buffer = process, b""
        if not self._atexit:
            atexit.register(self.close)  # no engine process outlives the server
            self._atexit = True
        first = self._answer(START_SECONDS)
        if first is None or not first.get("ready"):
            self._stop(kill=first is None)
            if first is None:
                log.warning("The KaTeX engine did not start within %.0f s: this message's TeX is shown as its "
                            "source", START_SECONDS)
            else:
                self._give_up(str(first.get("unavailable")))
            return False
        self.last_used = time.monotonic()
        threading.Thread(target=self._end_when_idle, args=(process,), name="katex-idle", daemon=True).start()
        return True

    def _give_up(self, why: str) -> None:
        self.unavailable = True
        log.warning("KaTeX is not available (%s): TeX is shown as its source, as for invalid TeX. "
                    "Install the mini-racer package to typeset it.", why)

    def _answer(self, seconds: float) -> Optional[dict[str, Any]]:
        """The process's next line, or None if it ended or took longer than `seconds`."""
        assert self.process is not None and self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + seconds
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            answer = json.loads(line)
        except ValueError:  # not the process's own line (a library printing): not an answer
            return None
        return answer if isinstance(answer, dict) else None

    def _stop(self, kill: bool = False) -> None:
        """End the engine's process (see _end)."""
        process, self.process = self.process, None
        if process is not None:
            self._end(process, kill)

    @staticmethod
    def _end(process: subprocess.Popen[bytes], kill: bool = False) -> None:
        """End `process`: its stdin closed, which ends it, or killed if it lingers (at once with
        `kill`: one that did not answer may be running a formula still)."""
        try:
            if kill:
                process.kill()
            if process.stdin is not None:
                process.stdin.close()
            process.wait(timeout=1)
        except (OSError, subprocess.TimeoutExpired):
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def _end_when_idle(self, process: subprocess.Popen[bytes]) -> None:
        """End `process` once it has typeset nothing for IDLE_SECONDS; nothing once it is gone."""
        while True:
            # At least once a second: IDLE_SECONDS may be changed meanwhile (the tests shorten it).
            time.sleep(min(1.0, max(0.05, self.last_used + IDLE_SECONDS - time.monotonic())))
            with self.lock:
                if self.process is not process:
                    return
                if time.monotonic() - self.last_used < IDLE_SECONDS:
                    continue
                self.process = None
            # Waited for outside the lock: a formula arriving meanwhile starts a process of its
            # own rather than finding the engine busy while this one exits.
            self._end(process)
            return

    def close(self) -> None:
        with self.lock:
            self.unavailable = True
            self._stop()

    def render(self, items: list[tuple[str, bool]], seconds: float) -> tuple[Any, float]:
        """KaTeX's HTML for each item (None where it fails), BUSY when another message holds
        the engine, FALLBACK without an engine; at most `seconds` of engine time. With the
        engine time spent (a start of the process is not the formulas' time)."""
        if not self.lock.acquire(timeout=BUSY_WAIT_SECONDS):
            return BUSY, 0.0
        try:
            if self.unavailable:
                return FALLBACK, 0.0
            if self.process is not None and self.process.poll() is not None:
                self._stop()  # ended while idle (killed from outside): a fresh one for this message
            if self.process is None and not self._start():
                return (FALLBACK if self.unavailable else [None] * len(items)), 0.0
            assert self.process is not None and self.process.stdin is not None
            began = time.monotonic()
            # KaTeX starts no formula past 80% of the time, so a timeout (which loses the whole
            # call) is left to a formula that runs away on its own.
            request = {"items": items, "budget_ms": int(seconds * 800), "timeout": seconds,
                       "check_after": HEAP_CHECK_AFTER_SECONDS, "restart_above": HEAP_RESTART_BYTES}
            try:
                self.process.stdin.write(json.dumps(request).encode() + b"\n")
                self.process.stdin.flush()
                answer = self._answer(seconds + ANSWER_GRACE_SECONDS)
            except OSError:  # the process ended
                answer = None
            self.last_used = time.monotonic()
            spent = self.last_used - began
            if answer is None:
                log.warning("The KaTeX engine did not answer for %d formulas: it is started afresh", len(items))
                self._stop(kill=True)
                return [None] * len(items), spent
            if answer.get("failed"):
                log.warning("KaTeX failed on %d formulas: %s", len(items), answer["failed"])
            generation = (self.process.pid, answer.get("generation", 0))
            if self.generation is not None and generation[0] == self.generation[0] and generation != self.generation:
                log.info("Restarted the KaTeX engine: its heap grew past %d bytes", HEAP_RESTART_BYTES)
            self.generation = generation
            out = answer.get("out")
        finally:
            self.lock.release()
        if not isinstance(out, list) or len(out) != len(items):
            return [None] * len(items), spent
        return [html if isinstance(html, str) else None for html in out], spent


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
    rendered, spent = _engine.render([item for _, item in wanted], seconds)
    if owner is not None and rendered is not BUSY:
        _allowance.spend(owner, spent)
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
