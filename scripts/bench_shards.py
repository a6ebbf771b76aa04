#!/usr/bin/env python3
"""One shard against two and three, through nginx, in the same run (docs/scaling.md).

    python scripts/bench_shards.py --postgres postgresql://postgres@127.0.0.1:5432/bench_shards \\
        [--seconds 8] [--clients 16] [--polls 1000]

For each layout -- one process without --shard-id (today's server, the baseline), then 1, 2 and
3 `serve --shard-id` processes -- on a fresh PostgreSQL database (named from --postgres's, dropped
at the end) and a fresh instance folder, with nginx in front configured by `chat-appliance
proxy-config nginx` (started as a child process with its own prefix directory; the single
process gets the same proxy, one upstream). Rate limits are off. Through the proxy it measures:

* GET /messages (newest 50, no narrow) from --clients threads for --seconds: requests/s;
* POST /messages to #general (10 subscribers) from --clients threads for --seconds: sends/s;
* fan-out: --polls queues registered through the proxy (spread over the shards by nginx), each
  held by a raw keep-alive long poll through the proxy (queue id URL-encoded, as clients send
  it); one message per round, 3 rounds; latency from just before the send until each poll has it.

And where the time went during each phase: CPU seconds of the serve processes, of nginx and of
PostgreSQL's server processes (psutil). Ratios are against the single process of the same run.
Needs nginx (Debian's package) and psutil. No target: figures go to BENCHMARKS.md.
"""

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlparse, urlunparse

import psutil
import requests

from benchlib import admin, free_port, poll_rounds

ROOT = Path(__file__).resolve().parent.parent
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def start_serve(instance, database_url, shard, threads):
    env = dict(os.environ, PYTHONUNBUFFERED="1", CHAT_APPLIANCE_DATABASE_URL=database_url,
               CHAT_APPLIANCE_RATE_LIMITING="false", CHAT_APPLIANCE_TRUSTED_PROXIES='["127.0.0.1"]')
    port = free_port()
    args = [sys.executable, "-m", "chat_appliance", "serve", "--instance", str(instance), "--create", "--port", str(port),
            "--quiet", "--threads", str(threads)]
    if shard:
        args += ["--shard-id", shard]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT)
    output = []
    for line in proc.stdout:
        output.append(line)
        if line.startswith("Serving on"):
            break
    else:
        raise RuntimeError("serve did not start:\n" + "".join(output))
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # drain
    text = "".join(output)
    key = re.search(r"API key:\s+(\S+)", text)
    return proc, port, key.group(1) if key else None


def start_nginx(prefix, ports):
    prefix.mkdir(parents=True, exist_ok=True)
    listen = free_port()
    args = [sys.executable, "-m", "chat_appliance", "proxy-config", "nginx", "--listen", str(listen)]
    for name, port in ports.items():
        args += ["--shard", f"{name}=127.0.0.1:{port}"]
    config = subprocess.run(args, check=True, capture_output=True, text=True, cwd=ROOT).stdout
    (prefix / "nginx.conf").write_text(config.replace("access_log access.log;", "access_log off;"))
    proc = subprocess.Popen([NGINX, "-e", "stderr", "-p", str(prefix), "-c", str(prefix / "nginx.conf"),
                             "-g", "daemon off;"])
    url = f"http://127.0.0.1:{listen}"
    for _ in range(200):
        try:
            requests.get(url + "/api/v1/server_settings", timeout=2).raise_for_status()
            return proc, url
        except requests.RequestException:
            time.sleep(0.1)
    raise RuntimeError("nginx did not answer")


class CpuMeter:
    """CPU seconds of the serve processes, nginx (master and workers) and PostgreSQL's backends."""

    def __init__(self, serve_pids, nginx_pid):
        self.serve = [psutil.Process(pid) for pid in serve_pids]
        nginx = psutil.Process(nginx_pid)
        self.nginx = [nginx] + nginx.children()
        self.postgres = [p for p in psutil.process_iter(["name"]) if (p.info["name"] or "").startswith("postgres")]

    @staticmethod
    def _total(processes):
        total = 0.0
        for process in processes:
            try:
                times = process.cpu_times()
                total += times.user + times.system
            except psutil.Error:
                pass
        return total

    def read(self):
        self.postgres = [p for p in psutil.process_iter(["name"]) if (p.info["name"] or "").startswith("postgres")]
        return {"serve": self._total(self.serve), "nginx": self._total(self.nginx),
                "postgres": self._total(self.postgres)}


def hammer(seconds, clients, job):
    """Run job(session) in `clients` threads for `seconds`; returns completed calls per second."""
    count = [0] * clients
    deadline = time.monotonic() + seconds

    def loop(index):
        session = requests.Session()
        while time.monotonic() < deadline:
            job(session)
            count[index] += 1

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(clients)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(count) / (time.monotonic() - started)


def fan_out(url, users, n, rounds=3):
    """Latencies (ms) of `rounds` fan-outs to n long polls held through the proxy."""
    api = url + "/api/v1"

    def register(i):
        user = users[i % len(users)]
        body = requests.post(api + "/register", auth=user, data={"event_types": '["message"]',
                                                                   "fetch_event_types": "[]"}).json()
        assert body["result"] == "success", body
        return user, body["queue_id"]

    with ThreadPoolExecutor(16) as pool:
        queues = list(pool.map(register, range(n)))
    spread = {}
    for _user, queue_id in queues:
        spread[queue_id.split(":")[0] if queue_id.count(":") == 2 else "-"] = spread.get(
            queue_id.split(":")[0] if queue_id.count(":") == 2 else "-", 0) + 1
    parsed = urlparse(api)
    latencies, sent_at = [], {}

    async def read_response(reader):
        head = await reader.readuntil(b"\r\n\r\n")
        if re.search(rb"(?i)transfer-encoding:\s*chunked", head):
            body = b""
            while True:
                size = int((await reader.readuntil(b"\r\n")).strip(), 16)
                chunk = await reader.readexactly(size + 2)
                if size == 0:
                    break
                body += chunk[:-2]
            return json.loads(body)
        length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))
        return json.loads(await reader.readexactly(length))

    async def poller(user, queue_id, gates, ready, stop):
        reader, writer = await asyncio.open_connection(parsed.hostname, parsed.port, limit=2**20)
        ready.release()
        async for now, round_no in poll_rounds(reader, writer, api, user, queue_id, stop, read_response):
            latencies.append((now - sent_at[round_no]) * 1000)
            await gates[round_no].wait()
        writer.close()

    async def run():
        loop = asyncio.get_running_loop()
        gates = [asyncio.Event() for _ in range(rounds)]
        stop, ready = asyncio.Event(), asyncio.Semaphore(0)
        tasks = [asyncio.create_task(poller(user, q, gates, ready, stop)) for user, q in queues]
        for _ in queues:
            await ready.acquire()
        await asyncio.sleep(1.0 + n / 500)
        for round_no in range(rounds):
            sent_at[round_no] = time.perf_counter()
            await loop.run_in_executor(None, lambda r=round_no: requests.post(api + "/messages", auth=users[0], data={
                "type": "stream", "to": "general", "topic": "fan-out", "content": f"round {r}"}).raise_for_status())
            deadline = time.monotonic() + 30
            while len(latencies) < n * (round_no + 1) and time.monotonic() < deadline:
                await asyncio.sleep(0.002)
            gates[round_no].set()
            await asyncio.sleep(0.5 + n / 500)
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(run())
    return latencies, n * rounds, spread


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")


def run_layout(label, shard_names, base_url, args, workdir):
    name = f"{urlparse(base_url).path.lstrip('/') or 'bench_shards'}_{label}"
    database_url = urlunparse(urlparse(base_url)._replace(path="/" + name))
    admin(base_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    admin(base_url, f'CREATE DATABASE "{name}"')
    instance = workdir / label / "instance"
    processes, ports, key = [], {}, None
    nginx = None
    try:
        for shard in shard_names or [None]:
            proc, port, printed = start_serve(instance, database_url, shard, args.threads)
            processes.append(proc)
            ports[shard or "single"] = port
            key = key or printed
        nginx, url = start_nginx(workdir / label / "nginx", ports)
        api = url + "/api/v1"
        owner = ("owner@localhost", key)
        users = [owner]
        for i in range(9):
            email = f"user{i}@example.com"
            created = requests.post(api + "/users", auth=owner, data={"email": email, "password": "bench-password",
                                                                      "full_name": f"User {i}"}).json()
            assert created["result"] == "success", created
            fetched = requests.post(api + "/fetch_api_key", data={"username": email, "password": "bench-password"}).json()
            users.append((email, fetched["api_key"]))
        session = requests.Session()
        for i in range(100):
            session.post(api + "/messages", auth=users[i % 10], data={
                "type": "stream", "to": "general", "topic": f"seed {i % 5}", "content": f"seed **{i}**"}).raise_for_status()
        meter = CpuMeter([p.pid for p in processes], nginx.pid)
        figures = {}

        def phase(key, job):
            before = meter.read()
            started = time.monotonic()
            rate = job()
            elapsed = time.monotonic() - started
            after = meter.read()
            figures[key] = rate
            # PostgreSQL backends that exit take their CPU time with them: never below zero.
            figures[key + "_cpu"] = {k: max(0.0, after[k] - before[k]) / elapsed for k in after}

        counter = iter(range(10**9))
        phase("get", lambda: hammer(args.seconds, args.clients, lambda s: s.get(
            api + "/messages", auth=users[next(counter) % 10],
            params={"anchor": "newest", "num_before": 50, "num_after": 0, "narrow": "[]"}).raise_for_status()))
        phase("send", lambda: hammer(args.seconds, args.clients, lambda s: s.post(
            api + "/messages", auth=users[next(counter) % 10],
            data={"type": "stream", "to": "general", "topic": "load", "content": "a send"}).raise_for_status()))
        latencies, expected, spread = fan_out(url, users, args.polls)
        figures["fanout"] = latencies
        figures["fanout_expected"] = expected
        figures["spread"] = spread
        return figures
    finally:
        if nginx is not None:
            nginx.terminate()
            nginx.wait(10)
        for proc in processes:
            proc.terminate()
        for proc in processes:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
        admin(base_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--postgres", required=True, help="postgresql://user@host:port/NAME (databases NAME_*)")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--polls", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=16, help="serve --threads of each process")
    parser.add_argument("--repeat", type=int, default=2,
                        help="run every layout this many times, interleaved; the best run of each is shown "
                             "(other load on the machine only ever slows a run down)")
    args = parser.parse_args()
    layouts = [("single", []), ("shards1", ["a"]), ("shards2", ["a", "b"]), ("shards3", ["a", "b", "c"])]
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-shards-") as tmp:
        for attempt in range(args.repeat):
            for label, names in layouts:
                print(f"== {label} (run {attempt + 1}) ...", file=sys.stderr, flush=True)
                figures = run_layout(f"{label}_{attempt}", names, args.postgres, args, Path(tmp))
                best = results.get(label)
                if best is None:
                    results[label] = figures
                    continue
                for key in ("get", "send"):
                    if figures[key] > best[key]:
                        best[key], best[key + "_cpu"] = figures[key], figures[key + "_cpu"]
                if percentile(figures["fanout"], 0.99) < percentile(best["fanout"], 0.99):
                    best["fanout"], best["spread"] = figures["fanout"], figures["spread"]
    base = results["single"]
    print(f"{os.cpu_count()} CPUs; {args.clients} clients, {args.seconds:.0f} s per phase, {args.polls} polls, "
          f"serve --threads {args.threads}, everything through nginx")
    print(f"{'layout':<9} {'GET /messages/s':>16} {'ratio':>6} {'sends/s':>9} {'ratio':>6} "
          f"{'fan-out p50 ms':>15} {'p99 ms':>8} {'max ms':>8} {'delivered':>10}")
    for label, r in results.items():
        lat = r["fanout"]
        print(f"{label:<9} {r['get']:>16.0f} {r['get'] / base['get']:>6.2f} {r['send']:>9.0f} "
              f"{r['send'] / base['send']:>6.2f} {statistics.median(lat) if lat else float('nan'):>15.0f} "
              f"{percentile(lat, 0.99):>8.0f} {max(lat) if lat else float('nan'):>8.0f} "
              f"{len(lat):>5}/{r['fanout_expected']:<5}")
    print("CPU busy (cores) during each phase: serve processes / nginx / PostgreSQL; queues per shard")
    for label, r in results.items():
        parts = []
        for phase in ("get", "send"):
            cpu = r[phase + "_cpu"]
            parts.append(f"{phase}: {cpu['serve']:.2f} / {cpu['nginx']:.2f} / {cpu['postgres']:.2f}")
        print(f"{label:<9} " + "   ".join(parts) + f"   queues {r['spread']}")


if __name__ == "__main__":
    main()
