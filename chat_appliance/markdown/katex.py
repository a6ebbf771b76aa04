"""TeX to HTML with KaTeX, run in an embedded V8 (the ``mini-racer`` package).

Zulip typesets ``$$...$$`` and ```` ```math ```` at send time with KaTeX and stores the HTML;
clients only need KaTeX's stylesheet and fonts. The KaTeX release is vendored inside this
package (``vendor/katex/``: ``katex.min.js`` for the renderer, ``katex.min.css`` and ``fonts/``
for the browser), so the renderer reads it without reaching into any other part of the server,
and the web client serves the stylesheet and fonts of the same folder at /static/katex/
(webclient/views.py), so markup and styles always agree.

One JavaScript engine per process, started on the first formula (loading KaTeX takes tens of
milliseconds, a formula then well under one). V8 isolates are single-threaded, so calls are
serialised by a lock; a formula takes a fraction of a millisecond, so the lock is not a queue in
practice. Without the engine (``mini-racer`` missing, or no wheel for the platform) ``render_tex``
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
from pathlib import Path
from typing import Any, Optional

KATEX_DIR = Path(__file__).resolve().parent / "vendor" / "katex"
KATEX_JS = KATEX_DIR / "katex.min.js"
# Longest TeX source handed to KaTeX; a longer formula gets the error markup (Zulip's cap on a
# message is far larger, but a formula this long is not maths anyone reads).
MAX_TEX_LENGTH = 10_000
# Wall-clock limit for one message's formulas in the engine (a runaway expansion is stopped).
TIMEOUT_SECONDS = 2.0

FALLBACK = object()  # no engine: keep today's markup

log = logging.getLogger("chat_appliance.markdown.katex")

# All the formulas of a message in one call: each call crosses into the engine's thread.
_RENDER_FN = """
function __chatApplianceTex(items) {
  return items.map(function (item) {
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
        atexit.register(self.close)

    def close(self) -> None:
        with self.lock:
            ctx, self.ctx = self.ctx, None
            if ctx is not None:
                self.unavailable = True
                ctx.close()

    def render(self, items: list[tuple[str, bool]]) -> Any:
        with self.lock:
            if not self.started:
                self._start()
            if self.unavailable:
                return FALLBACK
            try:
                out = self.ctx.call("__chatApplianceTex", items, timeout_sec=TIMEOUT_SECONDS)
            except Exception as error:  # a timeout or an engine error: these formulas only
                log.warning("KaTeX failed on %d formulas: %s", len(items), type(error).__name__)
                return [None] * len(items)
        if not isinstance(out, list) or len(out) != len(items):
            return [None] * len(items)
        return [html if isinstance(html, str) else None for html in out]


_engine = _Engine()


def render_tex(items: list[tuple[str, bool]]) -> Any:
    """KaTeX's HTML for each ``(tex, display)``, or None where KaTeX rejects it (the caller
    emits Zulip's error markup); FALLBACK when there is no engine on this platform."""
    wanted = [(i, item) for i, item in enumerate(items) if len(item[0]) <= MAX_TEX_LENGTH]
    if not wanted:
        return [None] * len(items)
    rendered = _engine.render([item for _, item in wanted])
    if rendered is FALLBACK:
        return FALLBACK
    out: list[Optional[str]] = [None] * len(items)
    for (i, _), html in zip(wanted, rendered):
        out[i] = html
    return out


def stash_tex(md: Any, tex: str, display: bool) -> str:
    """An opaque per-render token for a formula; all of a message's formulas are typeset in
    one call after the Markdown pass (``typeset``) and put in place of their tokens."""
    formulas = md.zulip_tex
    token = f"ZTEX{md.zulip_nonce}N{len(formulas)}Z"
    formulas.append((token, tex, display))
    return token


def typeset(html: str, formulas: list[tuple[str, str, bool]]) -> str:
    """Replace each formula's token in ``html`` with KaTeX's HTML, or with Zulip's error markup
    (the escaped source) where KaTeX rejects it or is not available. Only tokens in text are
    typeset: a token inside a tag (a link's text copied into a preview's ``title``) becomes the
    formula's source, since markup has no place in an attribute. One pass over the text, however
    many formulas (a message of thousands stays linear). The sanitiser runs after this."""
    if not formulas:
        return html
    rendered = render_tex([(tex, display) for _, tex, display in formulas])
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
