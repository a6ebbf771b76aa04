#!/usr/bin/env python3
"""Rate-limit overhead: GET /api/v1/users/me through the Flask test client with rate limiting on
(limits high enough never to refuse) beside the same app with it off, in the same run.

Prints the median time per request of each and their ratio; the limiter's work is one token
bucket update under a lock and three response headers.

    python scripts/bench_rate_limit.py [--requests 3000] [--rounds 5]
"""

import argparse
import base64
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FAST_HASH = "pbkdf2:sha256:1000"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=3000, help="requests per round and setting")
    parser.add_argument("--rounds", type=int, default=5, help="rounds (the median of the rounds' means is reported)")
    args = parser.parse_args()

    from chat_appliance.actions.realm import do_create_realm
    from chat_appliance.app import create_app
    from chat_appliance.models import database

    with tempfile.TemporaryDirectory() as tmp:
        app = create_app({"INSTANCE_PATH": tmp, "PASSWORD_HASH_METHOD": FAST_HASH, "LOG_REQUESTS": False,
                          "RATE_LIMITING_RULES": {"api_by_user": [[1, 10**9]]}})
        with database.connection_context():
            _realm, owner = do_create_realm("Bench", "bench.example", "http://bench.example", "o@bench.example",
                                            "Owner", "password", password_method=FAST_HASH)
        headers = {"Authorization": "Basic " + base64.b64encode(f"{owner.email}:{owner.api_key}".encode()).decode()}
        client = app.test_client()
        for _ in range(200):  # warm-up
            client.get("/api/v1/users/me", headers=headers)
        # Requests alternate between the two settings, so that drift in the machine's load hits
        # both alike; each round's mean per request is one sample.
        results = {True: [], False: []}
        for _round in range(args.rounds):
            spent = {True: 0.0, False: 0.0}
            for index in range(2 * args.requests):
                enabled = bool(index % 2)
                app.config["RATE_LIMITING"] = enabled
                started = time.perf_counter()
                response = client.get("/api/v1/users/me", headers=headers)
                spent[enabled] += time.perf_counter() - started
                assert response.status_code == 200
            for enabled in (True, False):
                results[enabled].append(spent[enabled] / args.requests * 1000)
        off, on = statistics.median(results[False]), statistics.median(results[True])
        print(f"GET /users/me, {args.requests} requests x {args.rounds} rounds, median per request:")
        print(f"  rate limiting off (baseline): {off:.3f} ms")
        print(f"  rate limiting on:             {on:.3f} ms   ratio {on / off:.3f}x")


if __name__ == "__main__":
    main()
