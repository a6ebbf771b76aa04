#!/usr/bin/env python3
"""Benchmark chat_appliance.markdown.render against plain markdown.markdown().

Renders a typical ~1 KB message and a ~10 KB message with code blocks, and
prints the median time of each beside plain Python-Markdown on the same text,
with the ratio between them.  Highlighted code blocks are memoised by the
renderer, so the code-heavy message is also timed with that cache cleared
before every run ("cold"), which is the cost of a never-seen message.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import markdown  # noqa: E402

from chat_appliance.markdown import MentionTarget, RenderContext, render  # noqa: E402
from chat_appliance.markdown.blocks import highlight_code  # noqa: E402

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


def median_seconds(fn, repeat: int) -> float:
    fn()  # warm-up (engine construction, lexer imports)
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def cold_median_seconds(fn, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        highlight_code.cache_clear()
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=200, help="timed runs per measurement (default 200)")
    args = parser.parse_args()

    ctx = context()
    large = make_large()
    print(f"{'message':<22}{'render':>12}{'markdown()':>14}{'ratio':>8}")
    for label, text in (("~1 KB typical", SMALL), (f"~{len(large) // 1000} KB code blocks", large)):
        ours = median_seconds(lambda: render(text, ctx), args.repeat)
        plain = median_seconds(lambda: markdown.markdown(text), args.repeat)
        print(f"{label:<22}{ours * 1000:>10.2f}ms{plain * 1000:>12.2f}ms{ours / plain:>7.2f}x")
        if "```" in text:
            cold = cold_median_seconds(lambda: render(text, ctx), args.repeat)
            print(f"{'  same, cold cache':<22}{cold * 1000:>10.2f}ms{plain * 1000:>12.2f}ms{cold / plain:>7.2f}x")


if __name__ == "__main__":
    main()
