#!/usr/bin/env python3
"""Benchmark the ways of running KaTeX from Python, and the renderer's own.

Each candidate engine loads the vendored KaTeX (chat_appliance/markdown/vendor/katex/katex.min.js)
once, warms up, then renders 20 different inline formulas; the best of five rounds is printed
(wall-clock time: the engines run JavaScript on threads of their own). Candidates that are not
installed are reported as such; each runs in a subprocess with a time limit, so one that hangs
does not stop the others. Target: 20 inline formulas in under 20 ms through
chat_appliance.markdown.katex (one engine call per message), and the same through the chosen
engine per formula. Also checks that each engine's output for Zulip's `tex_inline` case is
Zulip's.

    python scripts/bench_katex.py
    python scripts/bench_katex.py --interference [--seconds 5] [--rate 3.3]

With --interference: against a real `serve`, a member sends messages of the costliest TeX
(a doubling macro that KaTeX takes about a second over, and 8 KB of `array`, whose markup is a
hundred times its size) from eight threads, at the API's rate limit for a member (200 a minute;
--rate 0 sends as fast as the threads can), while another member's `$$x^2$$` sends and
GET /users/me are timed, beside a baseline measured in the same run with nothing else running.
Target: GET /users/me p99 under 50 ms; the bystander's formula typeset.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KATEX_JS = ROOT / "chat_appliance" / "markdown" / "vendor" / "katex" / "katex.min.js"
TARGET_MS = 20.0
FN = "function __r(t, d) { try { return katex.renderToString(t, {displayMode: d}); } catch (e) { return null; } }"
EXPECTED_START = '<span class="katex"><span class="katex-mathml"><math xmlns="http://www.w3.org/1998/Math/MathML"><semantics><mrow><mn>1</mn><mo>⊕</mo>'


def formulas(round_no: int) -> list[str]:
    return [rf"\alpha_{{{i + 20 * round_no}}} + \frac{{a}}{{b}} = \sqrt{{x^2}}" for i in range(20)]


def run_candidate(name: str) -> None:
    src = KATEX_JS.read_text(encoding="utf-8")
    start = time.perf_counter()
    if name == "mini-racer":
        from py_mini_racer import MiniRacer

        ctx = MiniRacer()
        ctx.eval(src)
        ctx.eval(FN)
        call = lambda t, d: ctx.call("__r", t, d)  # noqa: E731
    elif name == "quickjs":
        import quickjs

        qctx = quickjs.Context()
        qctx.eval(src)
        qctx.eval(FN)
        fn = qctx.get("__r")
        call = lambda t, d: fn(t, d)  # noqa: E731
    elif name == "renderer":
        from chat_appliance.markdown import katex

        def call(t, d):
            return katex.render_tex([(t, d)])[0]
    else:
        raise SystemExit(f"unknown candidate {name}")
    first = call(r"1 \oplus 0 = 1", False)
    load = time.perf_counter() - start
    for i in range(50):
        call(rf"\beta_{{{i}}}", False)
    best = min(_round(call, r) for r in range(5))
    print(f"{name:<28}{load * 1000:>9.0f} ms{best * 1000:>10.1f} ms   "
          f"{'ok' if best * 1000 < TARGET_MS else 'OVER'}   Zulip's markup: {first.startswith(EXPECTED_START)}")


def _round(call, round_no: int) -> float:
    start = time.perf_counter()
    for formula in formulas(round_no):
        call(formula, False)
    return time.perf_counter() - start


def run_batched() -> None:
    """The renderer's way: one engine call for all of a message's formulas."""
    from chat_appliance.markdown import katex

    katex.render_tex([("x", False)])
    best = 1e9
    for r in range(5):
        start = time.perf_counter()
        katex.render_tex([(f, False) for f in formulas(r + 10)])
        best = min(best, time.perf_counter() - start)
    print(f"{'renderer (one call/message)':<28}{'':>12}{best * 1000:>10.1f} ms   {'ok' if best * 1000 < TARGET_MS else 'OVER'}")


WORST_TEX = [
    # A macro that doubles its argument, six deep: about a second of KaTeX's time in 1.2 KB
    # (400 nested fractions, the worst input once, take today's V8 70 ms).
    "$$\\def\\twice#1{#1#1}" + "\\twice{" * 6 + "x^2" * 400 + "}" * 6 + "$$",
    "$$\\begin{array}{" + "c" * 20 + "}" + (" & ".join(["x^2"] * 20) + " \\\\ ") * 60 + "\\end{array}$$",
]


# A member's sends are bounded by the API's rate limit (200 requests a minute): the attack runs
# at that rate, spread over its threads, unless --rate says otherwise (0: as fast as it can, as
# with CHAT_APPLIANCE_RATE_LIMITING=false).
MEMBER_RATE = 200 / 60


def run_interference(seconds: float, rate: float = MEMBER_RATE) -> None:
    import tempfile
    import threading

    import requests

    sys.path.insert(0, str(ROOT / "scripts"))
    from benchlib import latencies_while, report, serve_with_member

    with tempfile.TemporaryDirectory() as tmp:
        server, owner, member = serve_with_member(Path(tmp) / "instance")
        try:
            local = threading.local()

            def attack():
                session = getattr(local, "session", None)
                if session is None:
                    session = local.session = requests.Session()
                    session.auth = owner
                    local.turn = 0
                local.turn += 1
                session.post(f"{server.url}/api/v1/messages", data={
                    "type": "stream", "to": "general", "topic": "tex", "content": WORST_TEX[local.turn % 2]})

            bystander = requests.Session()
            bystander.auth = member

            def bystander_formula():
                start = time.perf_counter()
                answer = bystander.post(f"{server.url}/api/v1/messages", data={
                    "type": "stream", "to": "general", "topic": "tex", "content": "$$x^2$$"}).json()
                took = (time.perf_counter() - start) * 1000
                html = bystander.get(f"{server.url}/api/v1/messages/{answer['id']}").json()["message"]["content"]
                return took, 'class="katex"' in html

            bystander_formula()
            baseline = report("baseline (nothing else running)", latencies_while(server.url, member, seconds)[0])
            times, calls = latencies_while(server.url, member, seconds, attack, attackers=8,
                                           per_second=rate / 8 if rate else None)
            pace = f"{rate:.1f}/s" if rate else "unbounded"
            loaded = report(f"while 8 threads send the worst TeX ({pace})", times, calls)
            results = []
            stop = threading.Event()

            def flood():
                while not stop.is_set():
                    started = time.perf_counter()
                    attack()
                    if rate:
                        stop.wait(max(0.0, 8 / rate - (time.perf_counter() - started)))

            threads = [threading.Thread(target=flood, daemon=True) for _ in range(8)]
            for thread in threads:
                thread.start()
            time.sleep(0.5)
            for _ in range(5):
                results.append(bystander_formula())
            stop.set()
            for thread in threads:
                thread.join(timeout=30)
            sends = sorted(took for took, _ in results)
            print(f"the bystander's $$x^2$$ meanwhile: send {sends[len(sends) // 2]:.0f} ms median, "
                  f"{sends[-1]:.0f} ms worst; typeset {sum(ok for _, ok in results)} of {len(results)}")
            print(f"target < 50 ms while the TeX runs: p50 {'ok' if loaded[0] < 50 else 'OVER'}, "
                  f"p99 {'ok' if loaded[1] < 50 else 'OVER'} (baseline p50 {baseline[0]:.1f}, p99 {baseline[1]:.1f} ms)")
        finally:
            server.stop()


def main() -> None:
    if len(sys.argv) >= 2 and sys.argv[1] == "--interference":
        options = dict(zip(sys.argv[2::2], sys.argv[3::2]))
        unknown = set(options) - {"--seconds", "--rate"}
        if unknown or len(sys.argv) % 2:
            sys.exit("usage: bench_katex.py --interference [--seconds S] [--rate SENDS_PER_SECOND (0: unbounded)]")
        run_interference(float(options.get("--seconds", 5.0)), float(options.get("--rate", MEMBER_RATE)))
        return
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        if sys.argv[2] == "batched":
            run_batched()
        else:
            run_candidate(sys.argv[2])
        return
    print(f"{'engine':<28}{'load':>12}{'20 inline':>13}")
    for name in ("mini-racer", "quickjs", "renderer", "batched"):
        try:
            out = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            print(f"{name:<28}did not finish in 120 s")
            continue
        if out.returncode != 0:
            last = (out.stderr.strip().splitlines() or ["failed"])[-1]
            print(f"{name:<28}not available: {last}")
        else:
            print(out.stdout.rstrip())


if __name__ == "__main__":
    main()
