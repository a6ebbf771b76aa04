"""Kept reads under load, through a real `serve` (lib/snapshots.py, and the bridge's batched
answers): while one client renames itself and sends messages, readers ask GET /users/me without
pause. A read that starts after a write was acknowledged must show that write, whichever worker
answers it and whatever the bridge kept for a batch."""

import threading
import time

import requests

from ..support.serve_process import ServeProcess

WRITES, READERS = 40, 4


def test_no_read_misses_an_acknowledged_write(tmp_path, request):
    """Does every GET /users/me give a name and a max_message_id at least as new as the last
    rename and send acknowledged before that GET began?"""
    server = ServeProcess(tmp_path / "instance", "--threads", "16")
    request.addfinalizer(server.stop)
    auth = (server.email, server.api_key)
    api = server.url + "/api/v1"
    made = requests.post(api + "/users/me/subscriptions", auth=auth, timeout=30,
                         data={"subscriptions": '[{"name": "busy"}]'}).json()
    assert made["result"] == "success", made
    acked = {"name": -1, "message": -1}
    done = threading.Event()
    problems, reads = [], [0]

    def writer():
        session = requests.Session()
        try:
            for k in range(WRITES):
                body = session.patch(api + "/settings", auth=auth, data={"full_name": f"Writer {k}"}, timeout=60).json()
                assert body["result"] == "success", body
                acked["name"] = k
                body = session.post(api + "/messages", auth=auth, timeout=60, data={
                    "type": "stream", "to": "busy", "topic": "t", "content": f"m{k}"}).json()
                assert body["result"] == "success", body
                acked["message"] = body["id"]
        except BaseException as error:  # reported by the test's thread
            problems.append(repr(error))
        finally:
            done.set()

    def reader():
        session = requests.Session()
        while not done.is_set():
            floor_name, floor_message = acked["name"], acked["message"]
            me = session.get(api + "/users/me", auth=auth, timeout=60).json()
            reads[0] += 1
            if me.get("result") != "success":
                problems.append(me)
                return
            name = int(me["full_name"].split()[-1]) if me["full_name"].startswith("Writer ") else -1
            if name < floor_name or me["max_message_id"] < floor_message:
                problems.append((floor_name, floor_message, me["full_name"], me["max_message_id"]))

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader) for _ in range(READERS)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not problems, problems[:5]
    assert acked["name"] == WRITES - 1
    assert reads[0] > WRITES, reads  # the readers did run beside the writes
    assert time.monotonic() - started < 120
