#!/usr/bin/env python3
"""Event delivery benchmark: long-poll fan-out latency and memory per queue of `chat-appliance serve`.

Starts `serve` on a fresh instance with threads sized for the pollers, opens N long-polling
queues over real HTTP (all of the owner, registered for subscription events), then repeatedly
subscribes and unsubscribes a second user to #general: each change fans a peer_add or
peer_remove event out to every queue. Latency is from just before the change request is sent to
each poller receiving the event. Then it registers idle queues and reports resident memory per
queue. The baseline is the same server's mean GET /server_settings time, measured in the same run.
Targets (issue 5): p99 under 200 ms at N=500; 1,000 idle queues under 300 MB resident.
"""

import argparse
import base64
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.serve_process import free_port  # noqa: E402


def start_server(instance, threads):
    """serve on a fresh instance; returns (process, url, auth header)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "chat_appliance", "serve", "--instance", str(instance), "--host", "127.0.0.1",
         "--port", str(port), "--quiet", "--threads", str(threads)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1", CHAT_APPLIANCE_RATE_LIMITING="false"),
        cwd=Path(__file__).resolve().parents[1])
    output = ""
    while "Serving on" not in output:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("serve exited:\n" + output)
        output += line
    email = re.search(r"email:\s+(\S+)", output).group(1)
    key = re.search(r"API key:\s+(\S+)", output).group(1)
    token = base64.b64encode(f"{email}:{key}".encode()).decode()
    url = f"http://127.0.0.1:{port}/api/v1"
    for _ in range(100):
        try:
            requests.get(url + "/server_settings", timeout=1)
            break
        except requests.ConnectionError:
            time.sleep(0.05)
    return proc, url, {"Authorization": f"Basic {token}"}


def baseline_request_ms(url, seconds=2.0, workers=4):
    """Mean time of GET /server_settings under a few concurrent clients."""
    count = [0]
    deadline = time.monotonic() + seconds

    def loop():
        session = requests.Session()
        while time.monotonic() < deadline:
            session.get(url + "/server_settings").raise_for_status()
            count[0] += 1

    threads = [threading.Thread(target=loop) for _ in range(workers)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rate = count[0] / (time.monotonic() - started)
    return 1000.0 / rate, rate


def register(session, url, headers, event_types):
    body = session.post(url + "/register", headers=headers,
                        data={"event_types": event_types, "fetch_event_types": "[]"}).json()
    assert body["result"] == "success", body
    return body["queue_id"]


def fanout_latencies(url, headers, n, rounds, immediate=False):
    """Latencies (ms) of `rounds` fan-outs to n long-polling queues."""
    with ThreadPoolExecutor(32) as pool:
        queue_ids = list(pool.map(lambda _: register(requests.Session(), url, headers, '["subscription"]'),
                                  range(n)))
    target = requests.post(url + "/users", headers=headers, data={
        "email": f"bench{n}@example.com", "password": "bench-password", "full_name": f"Bench {n}"}).json()
    assert target["result"] == "success", target
    latencies, lock = [], threading.Lock()
    sent_at = {}
    # A poller re-polls only once its round is over: the figure is the delivery of one fan-out,
    # not that delivery competing with hundreds of re-polls (which --immediate measures).
    gates = [threading.Event() for _ in range(rounds)]
    stop = threading.Event()
    ready = threading.Barrier(n + 1)

    def poller(queue_id):
        session = requests.Session()
        last = -1
        ready.wait()
        while not stop.is_set():
            body = session.get(url + "/events", headers=headers,
                               params={"queue_id": queue_id, "last_event_id": last}, timeout=90).json()
            now = time.perf_counter()
            for event in body.get("events", []):
                last = max(last, event["id"])
                if event["type"] == "subscription":
                    with lock:
                        latencies.append((now - sent_at[event["id"]]) * 1000)
                    if not immediate:
                        gates[event["id"]].wait()

    threads = [threading.Thread(target=poller, args=(q,), daemon=True) for q in queue_ids]
    for t in threads:
        t.start()
    ready.wait()
    time.sleep(1.0 + n / 500)  # let every poll reach the server and block
    session = requests.Session()
    for event_id in range(rounds):
        expected = n * (event_id + 1)
        # The new user starts in #general (a default channel): unsubscribe first, then alternate.
        subscribe = event_id % 2 == 1
        method = session.post if subscribe else session.delete
        sent_at[event_id] = time.perf_counter()
        params = {"subscriptions": '[{"name": "general"}]' if subscribe else '["general"]',
                  "principals": f'[{target["user_id"]}]'}
        assert method(url + "/users/me/subscriptions", headers=headers, data=params).json()["result"] == "success"
        deadline = time.monotonic() + 10
        while len(latencies) < expected and time.monotonic() < deadline:
            time.sleep(0.005)
        gates[event_id].set()
        time.sleep(0.5 + n / 500)  # let every poll reach the server and block again
    stop.set()
    for queue_id in queue_ids:
        session.delete(url + "/events", headers=headers, data={"queue_id": queue_id})
    return latencies, n * rounds


def fanout_latencies_asyncio(url, headers, n, rounds):
    """As fanout_latencies, with one asyncio loop holding n raw keep-alive HTTP/1.1 connections
    instead of n `requests` threads, so the client's own cost (500 threads parsing responses
    under one GIL, on the server's cores) does not dominate what is measured."""
    import asyncio
    import json
    from urllib.parse import urlencode, urlparse

    with ThreadPoolExecutor(32) as pool:
        queue_ids = list(pool.map(lambda _: register(requests.Session(), url, headers, '["subscription"]'),
                                  range(n)))
    target = requests.post(url + "/users", headers=headers, data={
        "email": f"bench-async{n}@example.com", "password": "bench-password", "full_name": f"Bench async {n}"}).json()
    assert target["result"] == "success", target
    parsed = urlparse(url)
    latencies, sent_at = [], {}

    async def read_response(reader):
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))
        return json.loads(await reader.readexactly(length))

    async def poller(queue_id, gates, ready, stop):
        reader, writer = await asyncio.open_connection(parsed.hostname, parsed.port)
        last = -1
        ready.release()
        while not stop.is_set():
            query = urlencode({"queue_id": queue_id, "last_event_id": last})
            writer.write(f"GET {parsed.path}/events?{query} HTTP/1.1\r\nHost: {parsed.netloc}\r\n"
                         f"Authorization: {headers['Authorization']}\r\n\r\n".encode())
            body = await read_response(reader)
            now = time.perf_counter()
            for event in body.get("events", []):
                last = max(last, event["id"])
                if event["type"] == "subscription":
                    latencies.append((now - sent_at[event["id"]]) * 1000)
                    await gates[event["id"]].wait()
        writer.close()

    async def run():
        gates = [asyncio.Event() for _ in range(rounds)]
        stop, ready = asyncio.Event(), asyncio.Semaphore(0)
        tasks = [asyncio.create_task(poller(q, gates, ready, stop)) for q in queue_ids]
        for _ in queue_ids:
            await ready.acquire()
        await asyncio.sleep(1.0 + n / 500)
        session = requests.Session()
        loop = asyncio.get_running_loop()
        for event_id in range(rounds):
            subscribe = event_id % 2 == 1
            method = session.post if subscribe else session.delete
            params = {"subscriptions": '[{"name": "general"}]' if subscribe else '["general"]',
                      "principals": f'[{target["user_id"]}]'}
            sent_at[event_id] = time.perf_counter()
            await loop.run_in_executor(None, lambda: method(url + "/users/me/subscriptions", headers=headers,
                                                            data=params).raise_for_status())
            deadline = time.monotonic() + 10
            while len(latencies) < n * (event_id + 1) and time.monotonic() < deadline:
                await asyncio.sleep(0.002)
            gates[event_id].set()
            await asyncio.sleep(0.5 + n / 500)
        stop.set()
        for queue_id in queue_ids:
            session.delete(url + "/events", headers=headers, data={"queue_id": queue_id})
        await asyncio.wait(tasks, timeout=5)

    asyncio.run(run())
    return latencies, n * rounds


def idle_queue_memory(proc, url, headers, count):
    """(RSS before MB, RSS after MB, KB per queue) for `count` registered, unpolled queues."""
    rss = lambda: psutil.Process(proc.pid).memory_info().rss / 2**20  # noqa: E731
    before = rss()
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda _: register(requests.Session(), url, headers, '["message"]'), range(count)))
    after = rss()
    return before, after, (after - before) * 1024 / count


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 500], help="queue counts (default: 100 500)")
    parser.add_argument("--rounds", type=int, default=10, help="fan-outs per size (default: 10)")
    parser.add_argument("--immediate", action="store_true",
                        help="pollers re-poll at once, so delivery competes with the re-polls")
    parser.add_argument("--client", choices=("asyncio", "threads"), default="asyncio",
                        help="asyncio: one loop of raw keep-alive connections (default); threads: one "
                             "`requests` thread per queue, which mostly measures the client itself")
    parser.add_argument("--idle-queues", type=int, default=1000, help="idle queues for the memory figure")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        proc, url, headers = start_server(Path(tmp) / "instance", threads=max(args.sizes) + 16)
        try:
            base_ms, rate = baseline_request_ms(url)
            print(f"baseline: GET /server_settings {rate:.0f} req/s, {base_ms:.2f} ms per request")
            for n in args.sizes:
                if args.client == "asyncio":
                    latencies, expected = fanout_latencies_asyncio(url, headers, n, args.rounds)
                else:
                    latencies, expected = fanout_latencies(url, headers, n, args.rounds, args.immediate)
                p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
                print(f"N={n}: {len(latencies)}/{expected} events delivered; p50 {p50:.1f} ms "
                      f"({p50 / base_ms:.1f}x baseline), p99 {p99:.1f} ms ({p99 / base_ms:.1f}x baseline), "
                      f"max {max(latencies):.1f} ms, mean {statistics.mean(latencies):.1f} ms")
            # Registered, never polled: the memory of a queue itself (no poll, no waiting thread).
            before, after, per_queue = idle_queue_memory(proc, url, headers, args.idle_queues)
            print(f"idle queues: {args.idle_queues} -> RSS {before:.1f} MB before, {after:.1f} MB after, "
                  f"{per_queue:.1f} KB per queue")
        finally:
            proc.terminate()
            proc.wait(timeout=15)


if __name__ == "__main__":
    main()
