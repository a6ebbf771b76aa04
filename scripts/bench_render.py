#!/usr/bin/env python3
"""Benchmark Markdown rendering against plain markdown.markdown() on the same text.

Renders a typical ~1 KB message and a ~10 KB message with code blocks the way the
server does -- `rendering.render_message` in an organization on a scratch SQLite
instance, so the render context (users, channels, linkifiers, the sender's
settings) is included -- and plain Python-Markdown `markdown.markdown()` on the
same text, alternately, in the same run; it prints the median of each and the
ratio (CPU time of the rendering thread, so that other work on a shared
machine does not skew it). Highlighted code blocks are memoised by the renderer, so the code-heavy
message is also timed with that cache cleared before every run ("cold"), which
is the cost of a never-seen message. Targets: both ratios (typical; code, cold)
at most 2x. A typical message with five TeX formulas is timed as well (target at most 3x); KaTeX
runs in V8's own thread, so that row counts the process's CPU time, not the thread's. It also prints the pass rate on Zulip's rendering cases
(../shared/zulip/markdown_cases.json), as tests/markdown/test_zulip_cases.py counts it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import markdown  # noqa: E402

from chat_appliance.markdown import MentionTarget, RenderContext, render  # noqa: E402
from chat_appliance.markdown.blocks import highlight_code  # noqa: E402

TARGET = 2.0
TEX_TARGET = 3.0

SMALL = """Hey @**King Hamlet**, I looked at the deploy for #**Verona>release 2.1** today.

The **staging** box is fine, but the *canary* shows a spike in 5xx errors
after 14:00 -- see https://grafana.example.com/d/abc123?from=now-6h and
the ticket #4321 :thumbs_up:

* restart the workers
* bump the pool size to `32`
* check `/var/log/app/error.log`

> Ship it once the dashboards are green again.

For the record, the rollback plan is the usual one: flip the feature flag
`new_scheduler` off in the admin panel, wait for the queue to drain (about
five minutes at current load), then redeploy the previous tag. @_**Ophelia**
already wrote it up in [the runbook](https://wiki.example.com/runbooks/deploy)
so nobody has to remember the exact order of steps at 3am.

1. freeze merges to `main`
2. tag `v2.1.1` and push
3. announce in #**Verona** once the canary is clean

If anything looks off, ping me here or open a ticket (#4400 is the tracking
issue) -- I'm around until 18:00 UTC today :smile:

Thanks! 🎉
"""

CODE = '''Here is the patch we discussed:

```python
def retry(func, attempts=3, delay=0.5):
    """Call func until it succeeds or attempts run out."""
    for i in range(attempts):
        try:
            return func()
        except TimeoutError as exc:  # pragma: no cover
            last = exc
            time.sleep(delay * (2 ** i))
    raise last
```

and the config change:

```yaml
workers:
  pool_size: 32
  timeout: 30s
```

Let me know what you think, @**Ophelia**. Docs at https://docs.example.com/retry.

'''


FORMULAS = [r"E = mc^2", r"\frac{a}{b} + \sqrt{x^2 + y^2}", r"\sum_{i=1}^{n} i = \frac{n(n+1)}{2}",
            r"\alpha \le \beta_{k}", r"\int_0^1 f(t)\,dt"]


def with_formulas(text: str) -> str:
    """The typical message with five inline formulas in its prose (about 1.2 KB)."""
    lines = text.split("\n")
    for i, formula in enumerate(FORMULAS):
        lines[i * 3] += f" so $${formula}$$ holds"
    return "\n".join(lines)


def make_large() -> str:
    # Every copy differs so that no code block repeats within the message.
    parts = []
    while sum(len(p) for p in parts) < 10_000:
        n = len(parts)
        parts.append(CODE.replace("attempts=3", f"attempts={n + 3}").replace("pool_size: 32", f"pool_size: {n + 32}"))
    return "".join(parts)


def context() -> RenderContext:
    people = {"King Hamlet": MentionTarget(10, "King Hamlet"), "Ophelia": MentionTarget(11, "Ophelia")}
    return RenderContext(
        find_user=lambda name, uid: people.get(name or ""),
        find_channel=lambda name: MentionTarget(5, name) if name == "Verona" else None,
        linkifiers=[(r"#(?P<id>[0-9]+)", "https://tickets.example.com/{id}")],
    )


def server_renderer(instance: str):
    """render_message in a scratch organization with the users, channel and linkifier
    the sample messages mention (what the server does on send)."""
    from chat_appliance.actions.channels import do_create_streams
    from chat_appliance.actions.linkifiers import do_add_linkifier
    from chat_appliance.actions.realm import do_create_realm
    from chat_appliance.actions.users import do_create_user
    from chat_appliance.app import create_app
    from chat_appliance.config import Limits
    from chat_appliance.db.connection import write_transaction
    from chat_appliance.models import database
    from chat_appliance.lib.rendering import render_message

    app = create_app({"INSTANCE_PATH": instance, "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000", "LOG_REQUESTS": False})
    database.connect(reuse_if_open=True)
    realm, owner = do_create_realm("Bench", "bench.example", "http://bench.example", "owner@bench.example",
                                   "Owner", "Bench-passw0rd-long", password_method="pbkdf2:sha256:1000")
    for email, name in (("hamlet@bench.example", "King Hamlet"), ("ophelia@bench.example", "Ophelia")):
        do_create_user(realm, email, "Bench-passw0rd-long", name, password_method="pbkdf2:sha256:1000")
    with write_transaction():
        do_create_streams(realm, [("Verona", "A city")], invite_only=False,
                          history_public_to_subscribers=None, creator=owner,
                          limits=Limits.from_config(app.config))
    do_add_linkifier(realm.id, r"#(?P<id>[0-9]+)", "https://tickets.example.com/{id}")
    return lambda text: render_message(text, realm=realm, sender=owner)


CLOCK = time.thread_time


def timed(fn) -> float:
    # CPU time of this thread (or this process, for TeX): other processes on a shared machine do not count.
    start = CLOCK()
    fn()
    return CLOCK() - start


def measure(text: str, ours, repeat: int, cold: bool) -> tuple[float, float]:
    """Median seconds of ours(text) and markdown.markdown(text), run alternately."""
    ours(text)
    markdown.markdown(text)  # warm-up: engine construction, lexer imports
    mine, plain = [], []
    for _ in range(repeat):
        if cold:
            highlight_code.cache_clear()
        mine.append(timed(lambda: ours(text)))
        plain.append(timed(lambda: markdown.markdown(text)))
    return statistics.median(mine), statistics.median(plain)


def pass_rate_lines() -> list[str]:
    cases_path = ROOT.parent / "shared" / "zulip" / "markdown_cases.json"
    if not cases_path.exists():
        return [f"Zulip rendering cases: not found at {cases_path}"]
    from tests.markdown.test_zulip_cases import pass_rates

    rates = pass_rates(json.loads(cases_path.read_text(encoding="utf-8")))
    return [
        f"Zulip rendering cases (shared part, backend-only excluded): {rates['passed']}/{rates['total']} "
        f"({100 * rates['passed'] / rates['total']:.0f}%); not TeX: {rates['non_tex_passed']}/{rates['non_tex_total']} "
        f"({100 * rates['non_tex_passed'] / rates['non_tex_total']:.0f}%)",
        f"  misses: {', '.join(sorted(rates['failures'])) or 'none'}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=200, help="timed runs per measurement (default 200)")
    args = parser.parse_args()

    for line in pass_rate_lines():
        print(line)
    with tempfile.TemporaryDirectory() as instance:
        ours = server_renderer(instance)
        large = make_large()
        rows = [
            ("~1 KB typical, context included", SMALL, False),
            ("~1 KB typical + 5 TeX formulas", with_formulas(SMALL), False),
            (f"~{len(large) // 1000} KB code blocks, warm cache", large, False),
            (f"~{len(large) // 1000} KB code blocks, cold cache", large, True),
        ]
        print(f"{'message':<36}{'render':>10}{'markdown()':>12}{'ratio':>8}")
        global CLOCK
        for label, text, cold in rows:
            tex = "TeX" in label
            CLOCK = time.process_time if tex else time.thread_time
            mine, plain = measure(text, ours, args.repeat, cold)
            target = TEX_TARGET if tex else TARGET
            verdict = "" if label.endswith("warm cache") else ("  ok" if mine / plain <= target else f"  OVER {target:g}x")
            print(f"{label:<36}{mine * 1000:>8.2f}ms{plain * 1000:>10.2f}ms{mine / plain:>7.2f}x{verdict}")


if __name__ == "__main__":
    main()
