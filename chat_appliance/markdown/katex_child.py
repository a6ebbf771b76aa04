"""The KaTeX engine's own process: V8 (``mini-racer``) with KaTeX loaded, typesetting what the
server sends it. markdown/katex.py starts it with the first formula and ends it once idle.

Run as a script, by path (``python katex_child.py KATEX_JS HEAP_LIMIT_BYTES``): it imports
nothing of the server, so it starts in the time Python and V8 take, and holds only them. V8's
library and its ICU data are some 60 MB of mappings that a process cannot give back once they
are loaded; here they go when the process does.

One request per line on stdin, one answer per line on stdout, in JSON:

* first, before any request, ``{"ready": true}``, or ``{"unavailable": "why"}`` and the process
  ends (no ``mini-racer``, no wheel for the platform, no KaTeX file);
* a request: ``{"items": [[tex, display], ...], "budget_ms": n, "timeout": s, "check_after": s,
  "restart_above": bytes}``;
* its answer: ``{"out": [html or null, ...] or null, "failed": null or "why", "seconds": s,
  "generation": n}``. ``generation`` counts the V8 contexts this process has made: after a call
  that ran ``check_after`` seconds or more, or failed, a heap above ``restart_above`` bytes (V8
  keeps what a costly formula took) or at the hard limit is dropped for a fresh context.

End of stdin (the server closed it, or exited) ends the process.
"""

import json
import signal
import sys
import time

# All the formulas of a message in one call: KaTeX starts no formula past the budget.
RENDER_FN = """
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


def start(katex_js, heap_limit):
    from py_mini_racer import MiniRacer

    ctx = MiniRacer()
    ctx.set_hard_memory_limit(heap_limit)
    with open(katex_js, encoding="utf-8") as source:
        ctx.eval(source.read())
    ctx.eval(RENDER_FN)
    return ctx


def grown(ctx, restart_above):
    try:
        return ctx.was_hard_memory_limit_reached() or ctx.heap_stats().get("used_heap_size", 0) > restart_above
    except Exception:
        return True


def answer(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    # Ctrl-C at the server's terminal reaches its whole process group: the server ends this
    # process itself (by closing its stdin), and a traceback from here would only be noise.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    katex_js, heap_limit = sys.argv[1], int(sys.argv[2])
    try:
        ctx = start(katex_js, heap_limit)
    except Exception as error:  # ImportError, a missing file, an engine that fails to start
        answer({"unavailable": f"{type(error).__name__}: {error}"})
        return
    generation = 1
    answer({"ready": True})
    for line in sys.stdin:
        request = json.loads(line)
        began = time.monotonic()
        failed = None
        try:
            out = ctx.call("__chatApplianceTex", request["items"], request["budget_ms"],
                           timeout_sec=request["timeout"])
        except Exception as error:  # a timeout or an engine error: these formulas only
            out, failed = None, type(error).__name__
        seconds = time.monotonic() - began
        if (failed or seconds >= request["check_after"]) and grown(ctx, request["restart_above"]):
            ctx.close()
            ctx = start(katex_js, heap_limit)
            generation += 1
        answer({"out": out, "failed": failed, "seconds": seconds, "generation": generation})
    ctx.close()


if __name__ == "__main__":
    main()
