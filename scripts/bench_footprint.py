#!/usr/bin/env python3
"""Footprint benchmark: start-up time and resident memory of `chat-appliance serve`.

Starts `serve` on a fresh instance and, in the same run, a bare Flask + waitress app (the
baseline); for each prints the time until GET /api/v1/server_settings answers and the
resident memory after 100 requests, and the ratios to the baseline.
Targets: start under 1 s on a fresh instance (issue 2) and under 0.5 s on a restart (issue 15),
idle under 60 MB. The package is compiled to bytecode first, as `pip install` does.
"""

import argparse
import compileall
import os
import socket
import subprocess
import sys
import tempfile
import textwrap
import time

import psutil
import requests

BASELINE_APP = textwrap.dedent("""
    import sys
    from flask import Flask, jsonify
    import waitress
    app = Flask(__name__)
    @app.get("/api/v1/server_settings")
    def settings():
        return jsonify(result="success", msg="", zulip_version="baseline")
    waitress.serve(app, host="127.0.0.1", port=int(sys.argv[1]), threads=4, _quiet=True)
""")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def measure(command, port, requests_count):
    """(seconds until server_settings answers, RSS in MB after the requests)."""
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
        with requests.Session() as session:
            for _ in range(requests_count):
                session.get(url)
        rss = psutil.Process(proc.pid).memory_info().rss / 2**20
        return startup, rss
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=100, help="requests before reading memory (default 100)")
    parser.add_argument("--rounds", type=int, default=3, help="repetitions; the median is reported (default 3)")
    args = parser.parse_args()

    # An installed server starts from bytecode (pip compiles it on install; this checkout may run
    # with PYTHONDONTWRITEBYTECODE, which would make every start compile 170 modules, about
    # 150 ms). Compile it here, as pip would, so that start-up is measured as users get it.
    import chat_appliance
    compileall.compile_dir(os.path.dirname(chat_appliance.__file__), quiet=1)

    results = {"baseline": [], "chat-appliance": [], "chat-appliance restart": []}
    with tempfile.TemporaryDirectory() as tmp:
        baseline_file = os.path.join(tmp, "baseline.py")
        with open(baseline_file, "w") as handle:
            handle.write(BASELINE_APP)
        for round_number in range(args.rounds):
            port = free_port()
            results["baseline"].append(measure([sys.executable, baseline_file, str(port)], port, args.requests))
            port = free_port()
            instance = os.path.join(tmp, f"instance{round_number}")
            command = [sys.executable, "-m", "chat_appliance", "serve", "--instance", instance, "--port", str(port),
                       "--quiet"]
            results["chat-appliance"].append(measure(command, port, args.requests))
            # A restart on the instance just made: what an operator's upgrade or reboot costs.
            port = free_port()
            command[command.index("--port") + 1] = str(port)
            results["chat-appliance restart"].append(measure(command, port, args.requests))

    def median(values):
        values = sorted(values)
        return values[len(values) // 2]

    base_start = median(r[0] for r in results["baseline"])
    base_rss = median(r[1] for r in results["baseline"])
    print(f"{'':16}{'start-up':>12}{'RSS':>12}{'start ratio':>14}{'RSS ratio':>12}")
    for name, rows in results.items():
        start, rss = median(r[0] for r in rows), median(r[1] for r in rows)
        print(f"{name:16}{start * 1000:>10.0f}ms{rss:>10.1f}MB{start / base_start:>13.2f}x{rss / base_rss:>11.2f}x")
    print("targets: start under 1 s on a fresh instance (it creates the database and organization) and under "
          "0.5 s on a restart (issue 15); idle under 60 MB")


if __name__ == "__main__":
    main()
