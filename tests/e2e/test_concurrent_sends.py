"""Many threads sending at once through a real `serve`: none fails, none deadlocks, every message
is stored once with its own id, in the order of commit (on SQLite's single writer, and on
PostgreSQL's advisory writer lock)."""

from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from ..support.serve_process import ServeProcess

THREADS, PER_THREAD = 12, 15


@pytest.fixture
def server(tmp_path):
    proc = ServeProcess(tmp_path / "instance", "--threads", "32")
    yield proc
    proc.stop()


def test_concurrent_sends_all_succeed_with_distinct_increasing_ids(server):
    """Do sends from 12 threads at once (channel and direct, into the same topic) all succeed,
    with distinct ids, and does a fetch afterwards return every one of them in id order?"""
    auth = (server.email, server.api_key)
    url = server.url + "/api/v1/messages"
    made = requests.post(server.url + "/api/v1/users/me/subscriptions", auth=auth,
                         data={"subscriptions": '[{"name": "busy"}]'}, timeout=30).json()
    assert made["result"] == "success", made

    def worker(n):
        session, ids = requests.Session(), []
        for k in range(PER_THREAD):
            if k % 5 == 4:
                data = {"type": "direct", "to": f'["{server.email}"]', "content": f"dm {n}.{k}"}
            else:
                data = {"type": "stream", "to": "busy", "topic": "contention", "content": f"send {n}.{k}"}
            body = session.post(url, auth=auth, data=data, timeout=60).json()
            assert body["result"] == "success", body
            ids.append(body["id"])
        return ids

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(worker, range(THREADS)))
    ids = [mid for chunk in results for mid in chunk]
    assert len(set(ids)) == THREADS * PER_THREAD
    for chunk in results:
        assert chunk == sorted(chunk)  # one client's sends commit in the order it made them
    fetched = requests.get(url, auth=auth, timeout=60, params={
        "anchor": "newest", "num_before": 1000, "num_after": 0,
        "narrow": '[{"operator": "channel", "operand": "busy"}]'}).json()
    channel_ids = [m["id"] for m in fetched["messages"]]
    assert channel_ids == sorted(channel_ids)
    assert len(channel_ids) == THREADS * PER_THREAD * 4 // 5


def test_every_acknowledged_send_survives_kill_9_under_load(tmp_path):
    """With 8 clients sending as fast as they can (so that writes share group commits and the
    workers take turns), is every send the server acknowledged before a kill -9 there after a
    restart, with its content?"""
    import signal
    import threading
    import time

    instance = tmp_path / "instance"
    first = ServeProcess(instance, "--threads", "16")
    auth = (first.email, first.api_key)
    url = first.url + "/api/v1/messages"
    acknowledged, stop = {}, threading.Event()

    def sender(n):
        session, k = requests.Session(), 0
        while not stop.is_set():
            content = f"load {n}.{k}"
            try:
                body = session.post(url, auth=auth, timeout=10, data={
                    "type": "stream", "to": "general", "topic": "kill", "content": content}).json()
            except (requests.ConnectionError, requests.Timeout, ValueError):
                return  # the server is gone: this send was never acknowledged
            assert body["result"] == "success", body
            acknowledged[body["id"]] = content
            k += 1

    threads = [threading.Thread(target=sender, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    while len(acknowledged) < 150 and time.monotonic() < deadline:
        time.sleep(0.01)
    first.stop(signal.SIGKILL)
    stop.set()
    for thread in threads:
        thread.join(15)
    assert len(acknowledged) >= 150
    second = ServeProcess(instance)
    try:
        stored = {}
        anchor = "newest"
        while True:
            page = requests.get(second.url + "/api/v1/messages", auth=auth, timeout=30, params={
                "anchor": anchor, "num_before": 1000, "num_after": 0, "apply_markdown": "false",
                "narrow": '[{"operator": "channel", "operand": "general"}, {"operator": "topic", "operand": "kill"}]',
            }).json()
            assert page["result"] == "success", page
            stored.update((m["id"], m["content"]) for m in page["messages"])
            if page["found_oldest"] or not page["messages"]:
                break
            anchor = min(m["id"] for m in page["messages"]) - 1
        lost = {mid: content for mid, content in acknowledged.items() if stored.get(mid) != content}
        assert not lost, f"{len(lost)} acknowledged sends lost after kill -9"
    finally:
        second.stop()
