#!/usr/bin/env python3
"""Linkifier patterns against a real `serve`: what a member's messages cost everyone else.

An administrator saves the patterns that backtrack exponentially under a backtracking engine,
`(?P<id>(a+)+)c` and `(?P<id>(\\w+\\s?)+)c`; a member then sends messages (and topics) of 40
`a`s, 10 a second (three times a member's rate limit), and the same messages of `b`s as a control. Meanwhile another member's GET /users/me is timed, beside a baseline measured in
the same run with nothing else running. Target: p99 under 50 ms while the sends run.

    python scripts/bench_linkifiers.py [--seconds 5]
"""

import argparse
import sys
import tempfile
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchlib import latencies_while, report, serve_with_member  # noqa: E402

PATTERNS = [r"(?P<id>(a+)+)c", r"(?P<id>(\w+\s?)+)c"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server, owner, member = serve_with_member(Path(tmp) / "instance")
        try:
            for index, pattern in enumerate(PATTERNS):
                response = requests.post(f"{server.url}/api/v1/realm/filters", auth=owner,
                                         data={"pattern": pattern, "url_template": f"https://t{index}.example.com/{{id}}"})
                print(f"save {pattern!r}: {response.status_code} {response.json().get('msg', '')}")
            session = requests.Session()
            session.auth = owner
            worst = "a" * 40

            def send():
                return session.post(f"{server.url}/api/v1/messages", data={
                    "type": "stream", "to": "general", "topic": worst, "content": f"{worst} {worst} aac"})

            first = send()
            first.raise_for_status()
            print("rendered:", session.get(f"{server.url}/api/v1/messages/{first.json()['id']}").json()["message"]["content"][:120])
            baseline = report("baseline (nothing else running)", *latencies_while(server.url, member, args.seconds)[:1])
            # A member may send 200 messages a minute (the rate limit); the sends here go at 10 a
            # second, three times that, and the control sends the same messages with no pattern
            # that can match them.
            times, calls = latencies_while(server.url, member, args.seconds, send, per_second=10)
            loaded = report("while sends of 40 'a's run (10/s)", times, calls)
            control = "b" * 40

            def send_control():
                return session.post(f"{server.url}/api/v1/messages", data={
                    "type": "stream", "to": "general", "topic": control, "content": f"{control} {control} bbd"})

            times, calls = latencies_while(server.url, member, args.seconds, send_control, per_second=10)
            report("control: the same sends, nothing to match", times, calls)
            print(f"target < 50 ms while the sends run: p50 {'ok' if loaded[0] < 50 else 'OVER'}, "
                  f"p99 {'ok' if loaded[1] < 50 else 'OVER'} (baseline p50 {baseline[0]:.1f}, p99 {baseline[1]:.1f} ms)")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
