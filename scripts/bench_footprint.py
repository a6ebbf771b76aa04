#!/usr/bin/env python3
"""Footprint benchmark: start-up time and resident memory of `chat-appliance serve`.

Starts, in the same run and alternately, the baseline (scripts/bare_flask.py: a bare Flask app
under `serve`'s own server, uvicorn and the same loop-to-thread bridge), `serve` on a fresh
instance, and `serve` again on the instance just made (a restart on existing data). For each it
prints the time from launch until GET /api/v1/server_settings answers, the resident memory
SETTLE_SECONDS later (idle) and after 100 requests, and the ratios to the baseline.
It also starts the design's floor (bare_flask.py --floor on the restarted instance's database:
the bare app plus peewee, the SQLite file opened, the same URL map and a read of the
organization, nothing of ours), to show how much of a restart's time over the baseline any
server built this way pays. With --instance, it also restarts on a copy of that instance
(bench_messages.py's, say, with its history), so that what grows with the data shows.
Targets: start on existing data within 1.2x the baseline and idle RSS at most 45 MiB.
The package is compiled to bytecode first, as `pip install` does.
"""

import argparse
import compileall
import os
import shutil
import subprocess
import sys
import tempfile
import time

import psutil
import requests

from benchlib import free_port

BASELINE_APP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bare_flask.py")
# Idle memory is read this long after the first answer: `serve` defers work past its first answer
# (the scheduler's first pass, which loads the models, comes a second later), and idle means
# after it.
SETTLE_SECONDS = 2.0


def measure(command, port, requests_count):
    """(seconds until server_settings answers, RSS in MiB then, RSS in MiB after the requests)."""
    url = f"http://127.0.0.1:{port}/api/v1/server_settings"
    started = time.perf_counter()
    # Rate limits off: the benchmark sends many unauthenticated requests from one address.
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, CHAT_APPLIANCE_RATE_LIMITING="false"))
    try:
        while True:
            try:
                requests.get(url, timeout=1)
                break
            except requests.ConnectionError:
                if proc.poll() is not None:
                    raise SystemExit(f"server exited: {' '.join(command)}")
                time.sleep(0.01)
        startup = time.perf_counter() - started
        time.sleep(SETTLE_SECONDS)
        idle = psutil.Process(proc.pid).memory_info().rss / 2**20
        with requests.Session() as session:
            for _ in range(requests_count):
                session.get(url)
        rss = psutil.Process(proc.pid).memory_info().rss / 2**20
        return startup, idle, rss
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=100, help="requests before reading memory (default 100)")
    # One launch of the same program can run 1.7x slower than the next on a shared machine:
    # a median of three starts is a coin toss between the two.
    parser.add_argument("--rounds", type=int, default=15, help="repetitions; the median is reported (default 15)")
    parser.add_argument("--instance", help="also restart on a copy of this existing instance folder, e.g. "
                                           "bench_messages.py's (/tmp/chat-appliance-bench/instance-5000)")
    args = parser.parse_args()

    # An installed server starts from bytecode (pip compiles it on install; this checkout may run
    # with PYTHONDONTWRITEBYTECODE, which would make every start compile 170 modules, about
    # 150 ms). Compile it here, as pip would, so that start-up is measured as users get it.
    import chat_appliance
    compileall.compile_dir(os.path.dirname(chat_appliance.__file__), quiet=1)

    results = {"baseline": [], "chat-appliance": [], "chat-appliance restart": [], "floor (bare + db, routes)": []}
    if args.instance:
        results["restart, --instance"] = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.instance:
            given = os.path.join(tmp, "given")
            shutil.copytree(args.instance, given, ignore=shutil.ignore_patterns("serve.lock"))
        for round_number in range(args.rounds):
            port = free_port()
            results["baseline"].append(measure([sys.executable, BASELINE_APP, str(port)], port, args.requests))
            port = free_port()
            instance = os.path.join(tmp, f"instance{round_number}")
            command = [sys.executable, "-m", "chat_appliance", "serve", "--instance", instance, "--create", "--port", str(port),
                       "--quiet"]
            results["chat-appliance"].append(measure(command, port, args.requests))
            # A restart on the instance just made: what an operator's upgrade or reboot costs.
            port = free_port()
            command[command.index("--port") + 1] = str(port)
            results["chat-appliance restart"].append(measure(command, port, args.requests))
            port = free_port()
            floor = [sys.executable, BASELINE_APP, str(port), "--floor", os.path.join(instance, "chat.sqlite3")]
            results["floor (bare + db, routes)"].append(measure(floor, port, args.requests))
            if args.instance:
                port = free_port()
                command[command.index("--port") + 1] = str(port)
                command[command.index("--instance") + 1] = given
                results["restart, --instance"].append(measure(command, port, args.requests))

    def median(values):
        values = sorted(values)
        return values[len(values) // 2]

    base_start = median(r[0] for r in results["baseline"])
    base_idle = median(r[1] for r in results["baseline"])
    print(f"{'':26}{'start-up':>10}{'idle RSS':>12}{'RSS, 100 req':>14}{'start ratio':>13}{'idle ratio':>12}")
    for name, rows in results.items():
        start, idle, rss = (median(r[i] for r in rows) for i in range(3))
        print(f"{name:26}{start * 1000:>8.0f}ms{idle:>8.1f}MiB{rss:>10.1f}MiB{start / base_start:>12.2f}x"
              f"{idle / base_idle:>11.2f}x")
    print("targets: a restart on existing data answers within 1.2x the baseline's start-up; "
          "idle RSS at most 45 MiB")


if __name__ == "__main__":
    main()
