#!/usr/bin/env python3
"""Event delivery benchmark: message fan-out to N waiting long polls of a default `chat-appliance serve`.

Starts `serve` with no options on a fresh instance (rate limits off:
CHAT_APPLIANCE_RATE_LIMITING=false), creates 10 users in #general (people run several clients),
and for each N registers N message queues spread evenly over them (half with apply_markdown, as
zulip-terminal asks, half without, as the zulip library's defaults). One asyncio loop holds the N
long polls as raw keep-alive HTTP/1.1 connections. Each round one user sends a message to
#general, which fans out to all N queues; latency runs from just before the send until each
poller has the message. Pollers re-poll only once the round is over, so a figure is one fan-out,
not a fan-out competing with N re-polls. While the polls wait, a user with no queue also sends
messages to a channel of their own: those sends show whether the REST API still answers promptly.
Server RSS is read after each size. The baseline is the same server's mean GET /server_settings
time, measured in the same run, before any poll.

The client's share: the benchmark's own CPU time (its loop and parsing of N answers) during each
fan-out is printed beside the server's; both run on the same cores.

Targets: N=1,000 fan-out p99 <= 200 ms and a send made meanwhile answering within
300 ms; N=10,000 (--sizes 1000 10000) held by one process in at most 250 MiB, with sends still
within 300 ms; N=500 p99 <= 200 ms; N=2,000 every poller gets every message.
"""

import argparse
import asyncio
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlparse

import psutil
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.serve_process import free_port  # noqa: E402

from benchlib import poll_rounds  # noqa: E402

USERS = 10


def start_server(instance):
    """A default `serve` on a fresh instance; returns (process, API URL, owner credentials)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "chat_appliance", "serve", "--instance", str(instance), "--create", "--host", "127.0.0.1",
         "--port", str(port), "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1", CHAT_APPLIANCE_RATE_LIMITING="false"),
        cwd=Path(__file__).resolve().parents[1])
    output = ""
    while "Serving on" not in output:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("serve exited:\n" + output)
        output += line
    threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
    email = re.search(r"email:\s+(\S+)", output).group(1)
    key = re.search(r"API key:\s+(\S+)", output).group(1)
    url = f"http://127.0.0.1:{port}/api/v1"
    for _ in range(100):
        try:
            requests.get(url + "/server_settings", timeout=1)
            break
        except requests.ConnectionError:
            time.sleep(0.05)
    return proc, url, (email, key)


def create_user(url, owner, email):
    """A new member (in #general, a default channel); returns (email, api key)."""
    created = requests.post(url + "/users", auth=owner, data={
        "email": email, "password": "bench-password", "full_name": email.split("@")[0]}).json()
    assert created["result"] == "success", created
    key = requests.post(url + "/fetch_api_key", data={"username": email, "password": "bench-password"}).json()
    return email, key["api_key"]


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


def register(url, user, apply_markdown):
    body = requests.post(url + "/register", auth=user, data={
        "event_types": '["message"]', "fetch_event_types": "[]",
        "apply_markdown": json.dumps(apply_markdown)}).json()
    assert body["result"] == "success", body
    return body["queue_id"]


def run_size(url, users, quiet, n, rounds):
    """One size: returns a dict of figures."""
    with ThreadPoolExecutor(16) as pool:
        queues = list(pool.map(lambda i: (users[i % len(users)], register(url, users[i % len(users)], i % 2 == 0)),
                               range(n)))
    parsed = urlparse(url)
    latencies, received, by_round = [], {}, {}
    sent_at = {}

    async def read_response(reader):
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))
        return json.loads(await reader.readexactly(length))

    async def poller(index, user, queue_id, gates, ready, stop):
        reader, writer = await asyncio.open_connection(parsed.hostname, parsed.port)
        got = received.setdefault(index, set())
        ready.release()
        async for now, round_no in poll_rounds(reader, writer, url, user, queue_id, stop, read_response):
            latencies.append((now - sent_at[round_no]) * 1000)
            by_round.setdefault(round_no, []).append(latencies[-1])
            got.add(round_no)
            await gates[round_no].wait()
        writer.close()

    def timed_send(session, user, to, content):
        started = time.perf_counter()
        body = session.post(url + "/messages", auth=user, data={
            "type": "stream", "to": to, "topic": "bench", "content": content}).json()
        assert body["result"] == "success", body
        return (time.perf_counter() - started) * 1000

    async def run():
        loop = asyncio.get_running_loop()
        gates = [asyncio.Event() for _ in range(rounds)]
        stop, ready = asyncio.Event(), asyncio.Semaphore(0)
        tasks = [asyncio.create_task(poller(i, user, q, gates, ready, stop)) for i, (user, q) in enumerate(queues)]
        for _ in queues:
            await ready.acquire()
        await asyncio.sleep(1.0 + n / 500)
        rss = [psutil.Process(server_pid).memory_info().rss / 2**20]
        session, quiet_session = requests.Session(), requests.Session()
        fanout_sends, quiet_sends, cpu_ms, client_ms = [], [], [], []
        for round_no in range(rounds):
            # A send by someone with no queue, to a channel nobody polls, while all N polls wait.
            for k in range(3):
                quiet_sends.append(await loop.run_in_executor(
                    None, timed_send, quiet_session, quiet, "bench-quiet", f"quiet {round_no}.{k}"))
            times = psutil.Process(server_pid).cpu_times()
            cpu_before = times.user + times.system
            client_before = time.process_time()
            sent_at[round_no] = time.perf_counter()
            fanout_sends.append(await loop.run_in_executor(
                None, timed_send, session, users[round_no % len(users)], "general", f"round {round_no} to everyone"))
            deadline = time.monotonic() + 15
            while len(latencies) < n * (round_no + 1) and time.monotonic() < deadline:
                await asyncio.sleep(0.002)
            times = psutil.Process(server_pid).cpu_times()
            cpu_ms.append((times.user + times.system - cpu_before) * 1000)
            client_ms.append((time.process_time() - client_before) * 1000)
            rss.append(psutil.Process(server_pid).memory_info().rss / 2**20)
            gates[round_no].set()
            await asyncio.sleep(0.5 + n / 500)  # every poll reaches the server and waits again
        stop.set()
        await loop.run_in_executor(None, lambda: [requests.delete(url + "/events", auth=user, data={"queue_id": q})
                                                  for user, q in queues])
        await asyncio.wait(tasks, timeout=10)
        for task in tasks:
            task.cancel()
        return fanout_sends, quiet_sends, max(rss), cpu_ms, client_ms

    fanout_sends, quiet_sends, rss, cpu_ms, client_ms = asyncio.run(run())
    complete = sum(1 for index in range(n) if received.get(index) == set(range(rounds)))
    return {"by_round": by_round, "latencies": latencies, "expected": n * rounds, "complete": complete, "fanout_sends": fanout_sends,
            "quiet_sends": quiet_sends, "rss": rss, "cpu_ms": cpu_ms, "client_ms": client_ms}


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


server_pid = None


def main():
    global server_pid
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 1000, 2000],
                        help="waiting polls (default: 500 1000 2000)")
    parser.add_argument("--rounds", type=int, default=10, help="messages fanned out per size (default: 10)")
    args = parser.parse_args()
    # The client holds one connection per poll too.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    with tempfile.TemporaryDirectory() as tmp:
        proc, url, owner = start_server(Path(tmp) / "instance")
        server_pid = proc.pid
        try:
            users = [owner] + [create_user(url, owner, f"poller{i}@example.com") for i in range(1, USERS)]
            quiet = create_user(url, owner, "quiet@example.com")
            created = requests.post(url + "/users/me/subscriptions", auth=quiet,
                                    data={"subscriptions": '[{"name": "bench-quiet"}]'}).json()
            assert created["result"] == "success", created
            base_ms, rate = baseline_request_ms(url)
            print(f"baseline: GET /server_settings {rate:.0f} req/s, {base_ms:.2f} ms per request; "
                  f"idle RSS {psutil.Process(proc.pid).memory_info().rss / 2**20:.1f} MB")
            for n in args.sizes:
                r = run_size(url, users, quiet, n, args.rounds)
                lat = r["latencies"]
                p50, p99 = percentile(lat, 0.5), percentile(lat, 0.99)
                quiet_p99, quiet_max = percentile(r["quiet_sends"], 0.99), max(r["quiet_sends"])
                fan_p99 = percentile(r["fanout_sends"], 0.99)
                print(f"N={n}: {len(lat)}/{r['expected']} events delivered, {r['complete']}/{n} pollers got every "
                      f"message; fan-out p50 {p50:.1f} ms ({p50 / base_ms:.1f}x baseline), p99 {p99:.1f} ms "
                      f"({p99 / base_ms:.1f}x), max {max(lat):.1f} ms; sends while polls wait: p99 {quiet_p99:.1f} ms "
                      f"({quiet_p99 / base_ms:.1f}x), max {quiet_max:.1f} ms; the fanned-out send itself: p99 "
                      f"{fan_p99:.1f} ms; server RSS {r['rss']:.1f} MB", flush=True)
                cpu = statistics.median(r["cpu_ms"])
                client = statistics.median(r["client_ms"])
                print(f"  server CPU per fan-out (send included), median: {cpu:.0f} ms, "
                      f"{cpu * 1000 / n:.0f} us per poll answered; the client's CPU meanwhile: {client:.0f} ms "
                      f"({100 * client / (client + cpu):.0f}% of the two)", flush=True)
                print("  last delivery of each round (ms): " + " ".join(
                    f"{max(r['by_round'].get(k, [0])):.0f}" for k in range(args.rounds)), flush=True)
        finally:
            proc.terminate()
            proc.wait(timeout=15)


if __name__ == "__main__":
    main()
