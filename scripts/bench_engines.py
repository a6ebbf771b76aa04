#!/usr/bin/env python3
"""Sends per second through one `chat-appliance serve` process: PostgreSQL against SQLite, same run.

    python scripts/bench_engines.py --postgres postgresql://postgres@127.0.0.1:5432/bench [--seconds 10]

Starts `serve` twice on fresh instances, once on SQLite (the instance's file) and once on a
fresh PostgreSQL database made from --postgres's server (named from its database name, dropped
at the end). Each gets a channel with 20 subscribers; then --clients threads each POST
/api/v1/messages in a loop for --seconds over real HTTP. Prints sends/s per engine at each
concurrency and the PostgreSQL/SQLite ratio. No target: the figure backs docs/scaling.md.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import requests

from benchlib import admin, free_port

ROOT = Path(__file__).resolve().parent.parent


def start(instance, database_url, threads):
    # Rate limits off: the load comes from a few accounts at one address (the brief's rule for load tests).
    env = dict(os.environ, PYTHONUNBUFFERED="1", CHAT_APPLIANCE_RATE_LIMITING="false")
    env.pop("CHAT_APPLIANCE_DATABASE_URL", None)
    if database_url:
        env["CHAT_APPLIANCE_DATABASE_URL"] = database_url
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "chat_appliance", "serve", "--instance", str(instance), "--create",
                             "--port", str(port), "--quiet", "--threads", str(threads)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT)
    output = []
    for line in proc.stdout:
        output.append(line)
        if line.startswith("Serving on"):
            break
    text = "".join(output)
    email = text.split("email:")[1].split()[0]
    key = text.split("API key:")[1].split()[0]
    return proc, f"http://127.0.0.1:{port}", (email, key)


def prepare(site, auth, subscribers=20):
    """A channel with `subscribers` members (the owner and new users)."""
    emails = [auth[0]]
    for i in range(subscribers - 1):
        email = f"bench{i}@example.com"
        requests.post(site + "/api/v1/users", auth=auth, timeout=30,
                      data={"email": email, "password": "bench-password-1", "full_name": f"Bench {i}"})
        emails.append(email)
    import json

    body = requests.post(site + "/api/v1/users/me/subscriptions", auth=auth, timeout=60,
                         data={"subscriptions": json.dumps([{"name": "bench"}]),
                               "principals": json.dumps(emails)}).json()
    assert body["result"] == "success", body


def measure(site, auth, clients, seconds):
    """Sends per second with `clients` threads sending in a loop."""
    stop = time.monotonic() + seconds
    counts = [0] * clients
    errors = []

    def loop(n):
        session = requests.Session()
        while time.monotonic() < stop:
            body = session.post(site + "/api/v1/messages", auth=auth, timeout=60,
                                data={"type": "stream", "to": "bench", "topic": f"t{n % 4}",
                                      "content": f"benchmark message from client {n}"}).json()
            if body["result"] != "success":
                errors.append(body)
                return
            counts[n] += 1

    started = time.monotonic()
    threads = [threading.Thread(target=loop, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(f"send failed: {errors[0]}")
    return sum(counts) / (time.monotonic() - started)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", required=True, help="postgresql://user@host:port/NAME (NAME_bench is made)")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--clients", default="1,8", help="concurrencies to measure (default: %(default)s)")
    args = parser.parse_args()
    concurrencies = [int(c) for c in args.clients.split(",")]
    parsed = urlparse(args.postgres)
    name = f"{parsed.path.lstrip('/') or 'chat'}_bench_{os.getpid()}"
    pg_url = urlunparse(parsed._replace(path="/" + name))
    admin(args.postgres, f'CREATE DATABASE "{name}"')
    results = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for engine, url in (("sqlite", None), ("postgres", pg_url)):
                proc, site, auth = start(Path(tmp) / engine, url, threads=max(concurrencies) + 8)
                try:
                    prepare(site, auth)
                    measure(site, auth, 1, 1)  # warm up
                    results[engine] = {c: measure(site, auth, c, args.seconds) for c in concurrencies}
                finally:
                    proc.terminate()
                    proc.wait(timeout=30)
    finally:
        admin(args.postgres, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    print(f"{'clients':>7}  {'SQLite sends/s':>14}  {'PostgreSQL sends/s':>18}  {'PG/SQLite':>9}")
    for c in concurrencies:
        sqlite, postgres = results["sqlite"][c], results["postgres"][c]
        print(f"{c:>7}  {sqlite:>14.1f}  {postgres:>18.1f}  {postgres / sqlite:>9.2f}")


if __name__ == "__main__":
    main()
