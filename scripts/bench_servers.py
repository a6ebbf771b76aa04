#!/usr/bin/env python3
"""REST API through `serve` (uvicorn, Flask in its worker pool) against the same app under waitress.

Starts, on one fresh instance and at the same time: `chat-appliance serve` (default options), the
same Flask app under waitress with 64 threads (the server `serve` used before), and, if tornado is
installed, under tornado's WSGIContainer with a 64-thread executor (the other candidate). Then it
measures POST /messages (a channel message to the instance's #general) and GET /messages (newest
100 of #general) at concurrency 1 and 8, round-robin between the servers for several rounds, so
that all of them see the same machine load. Prints median latency, p99 and requests per second, and
each server's figure relative to waitress. The client (`requests` threads) shares the 2 cores.

With tornado installed it first compares the two event loops' own HTTP cost: a loop-native
handler answering a fixed long-poll-sized JSON body under uvicorn (httptools) and under tornado,
driven over 200 keep-alive connections; that is the per-poll price of a fan-out.
"""

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.support.serve_process import free_port  # noqa: E402


def launch(kind, instance):
    """Start one server on the instance; returns (process, base URL)."""
    port = free_port()
    env = dict(os.environ, PYTHONUNBUFFERED="1", CHAT_APPLIANCE_RATE_LIMITING="false")
    if kind == "serve":
        cmd = [sys.executable, "-m", "chat_appliance", "serve", "--instance", str(instance), "--create", "--host", "127.0.0.1",
               "--port", str(port), "--quiet"]
    else:
        cmd = [sys.executable, __file__, "--run-server", kind, "--instance", str(instance), "--port", str(port)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT)
    url = f"http://127.0.0.1:{port}/api/v1"
    output = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            requests.get(url + "/server_settings", timeout=1).raise_for_status()
            return proc, url, output
        except requests.RequestException:
            if proc.poll() is not None:
                raise SystemExit(f"{kind} exited:\n{proc.stdout.read()}")
            time.sleep(0.1)
    raise SystemExit(f"{kind} did not answer")


def run_server(kind, instance, port):
    """The baseline servers: the same Flask app and instance, under waitress or tornado."""
    import logging

    from chat_appliance.app import create_app
    from chat_appliance.config import load_config

    logging.basicConfig(level=logging.WARNING)
    app = create_app(load_config(Path(instance), {"LOG_REQUESTS": False}))
    if kind == "waitress":
        import waitress

        waitress.serve(app, host="127.0.0.1", port=port, threads=64, connection_limit=1000, _quiet=True)
    elif kind == "tornado":
        import asyncio
        from concurrent.futures import ThreadPoolExecutor

        from tornado.httpserver import HTTPServer
        from tornado.wsgi import WSGIContainer

        async def main():
            server = HTTPServer(WSGIContainer(app, executor=ThreadPoolExecutor(64)), max_body_size=27 * 2**20)
            server.listen(port, "127.0.0.1")
            await asyncio.Event().wait()

        asyncio.run(main())


def run_bare_server(kind, port):
    """A loop-native handler answering a fixed JSON body: the HTTP cost every answered long poll
    pays, without the application (uvicorn with httptools, as `serve` runs it, or tornado)."""
    import asyncio

    body = b'{"result":"success","msg":"","events":[{"type":"heartbeat","id":0}],"queue_id":"q"}\n'
    if kind == "bare-uvicorn":
        import uvicorn

        async def app(scope, receive, send):
            if scope["type"] != "http":
                return
            await send({"type": "http.response.start", "status": 200, "headers": [
                (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})

        uvicorn.run(app, host="127.0.0.1", port=port, loop="asyncio", http="httptools", lifespan="off",
                    access_log=False, log_level="warning", proxy_headers=False)
    else:
        from tornado.httpserver import HTTPServer
        from tornado.web import Application, RequestHandler

        class Handler(RequestHandler):
            def get(self):
                self.set_header("Content-Type", "application/json")
                self.write(body)

        async def main():
            HTTPServer(Application([(r".*", Handler)])).listen(port, "127.0.0.1")
            await asyncio.Event().wait()

        asyncio.run(main())


def bare_rate(port, connections=200, seconds=3.0):
    """Requests per second over `connections` keep-alive connections from one asyncio client."""
    import asyncio

    async def run():
        count, stop = [0], time.monotonic() + seconds

        async def client():
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            request = f"GET /api/v1/events?queue_id=q&last_event_id=-1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n" \
                      f"Authorization: Basic b3duZXJAbG9jYWxob3N0OmtleQ==\r\n\r\n".encode()
            while time.monotonic() < stop:
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))
                await reader.readexactly(length)
                count[0] += 1
            writer.close()

        started = time.monotonic()
        await asyncio.gather(*(client() for _ in range(connections)))
        return count[0] / (time.monotonic() - started)

    return asyncio.run(run())


def bare_comparison(rounds):
    """Requests per second of the bare loop-native handlers, alternating, `rounds` times each."""
    rates = {"bare-uvicorn": [], "bare-tornado": []}
    for _ in range(rounds):
        for kind in rates:
            port = free_port()
            proc = subprocess.Popen([sys.executable, __file__, "--run-server", kind, "--port", str(port)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                for _ in range(100):
                    try:
                        with socket.create_connection(("127.0.0.1", port), timeout=1):
                            break
                    except OSError:
                        time.sleep(0.05)
                rates[kind].append(bare_rate(port))
            finally:
                proc.terminate()
                proc.wait(timeout=10)
    print("| loop-native handler, 200 keep-alive connections | req/s (median of rounds) | per request |")
    print("|---|---|---|")
    for kind, values in rates.items():
        rate = statistics.median(values)
        print(f"| {kind[5:]} | {rate:.0f} | {1e6 / rate:.0f} us |")


def timed_requests(call, concurrency, count):
    """Latencies (ms) of `count` calls spread over `concurrency` threads, and the wall time."""
    latencies, lock = [], threading.Lock()
    per_thread = count // concurrency

    def worker():
        session = requests.Session()
        mine = []
        for _ in range(per_thread):
            started = time.perf_counter()
            call(session)
            mine.append((time.perf_counter() - started) * 1000)
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return latencies, time.perf_counter() - started


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="round-robin rounds (default: 3)")
    parser.add_argument("--count", type=int, default=200, help="requests per measurement per round (default: 200)")
    parser.add_argument("--run-server", help=argparse.SUPPRESS)
    parser.add_argument("--instance", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_server in ("bare-uvicorn", "bare-tornado"):
        return run_bare_server(args.run_server, args.port)
    if args.run_server:
        return run_server(args.run_server, args.instance, args.port)

    kinds = ["waitress", "serve"]
    try:
        import tornado  # noqa: F401

        kinds.append("tornado")
    except ImportError:
        print("tornado not installed: measuring waitress and serve only")
    if "tornado" in kinds:
        bare_comparison(args.rounds)
    with tempfile.TemporaryDirectory() as tmp:
        instance = Path(tmp) / "instance"
        servers = {"serve": launch("serve", instance)}
        output = servers["serve"][0].stdout
        text = ""
        while "API key:" not in text:
            text += output.readline()
        email = re.search(r"email:\s+(\S+)", text).group(1)
        key = re.search(r"API key:\s+(\S+)", text).group(1)
        threading.Thread(target=lambda: [None for _ in output], daemon=True).start()
        for kind in kinds:
            if kind != "serve":
                servers[kind] = launch(kind, instance)
        auth = (email, key)

        def post_message(url):
            def call(session):
                response = session.post(url + "/messages", auth=auth, data={
                    "type": "stream", "to": "general", "topic": "bench", "content": "a **bench** message"})
                response.raise_for_status()
            return call

        def get_messages(url):
            def call(session):
                response = session.get(url + "/messages", auth=auth, params={
                    "anchor": "newest", "num_before": 100, "num_after": 0,
                    "narrow": '[{"operator": "channel", "operand": "general"}]'})
                response.raise_for_status()
            return call

        # History for the fetches, and a warm-up of every server.
        for kind in kinds:
            timed_requests(post_message(servers[kind][1]), 4, 60)
            timed_requests(get_messages(servers[kind][1]), 2, 20)
        cases = [("POST /messages", post_message, 1), ("POST /messages", post_message, 8),
                 ("GET /messages", get_messages, 1), ("GET /messages", get_messages, 8)]
        results = {(name, conc, kind): ([], 0.0) for name, _, conc in cases for kind in kinds}
        try:
            for _ in range(args.rounds):
                for name, factory, conc in cases:
                    for kind in kinds:
                        latencies, wall = timed_requests(factory(servers[kind][1]), conc, args.count)
                        previous, total = results[(name, conc, kind)]
                        results[(name, conc, kind)] = (previous + latencies, total + wall)
        finally:
            for proc, _url, _ in servers.values():
                proc.terminate()
                proc.wait(timeout=15)
        print("| request | concurrency | server | p50 | p99 | req/s | throughput vs waitress |")
        print("|---|---|---|---|---|---|---|")
        for name, _factory, conc in cases:
            base_latencies, base_wall = results[(name, conc, "waitress")]
            base_rate = len(base_latencies) / base_wall
            for kind in kinds:
                latencies, wall = results[(name, conc, kind)]
                rate = len(latencies) / wall
                print(f"| {name} | {conc} | {kind} | {statistics.median(latencies):.1f} ms | "
                      f"{percentile(latencies, 0.99):.1f} ms | {rate:.0f} | {rate / base_rate:.2f}x |")


if __name__ == "__main__":
    main()
