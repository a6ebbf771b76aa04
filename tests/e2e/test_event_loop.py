"""End to end: long polls on serve's event loop (many waiting clients, disconnects, SIGTERM) and
event queues that survive a graceful restart."""

import asyncio
import base64
import json
import re
import signal
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlencode

import pytest
import requests
import zulip

from chat_appliance.events.queues import DUMP_FILENAME

from ..support.serve_process import ServeProcess

# More waiting polls than the old server had threads (64), and than its connection limit (128).
WAITING_POLLS = 300
# Every request in these tests gives up after this long, so that a server that holds requests
# behind waiting polls (as the thread-per-poll one did, until the 55 s heartbeat) fails them.
REQUEST_TIMEOUT = 30


def session_for(server, email=None, api_key=None):
    session = requests.Session()
    session.auth = (email or server.email, api_key or server.api_key)
    return session


def register(session, server, event_types='["message"]'):
    body = session.post(server.url + "/api/v1/register", data={"event_types": event_types},
                        timeout=REQUEST_TIMEOUT).json()
    assert body["result"] == "success", body
    return body["queue_id"]


def send_message(session, server, content, topic="loop"):
    body = session.post(server.url + "/api/v1/messages", data={
        "type": "stream", "to": "general", "topic": topic, "content": content}, timeout=REQUEST_TIMEOUT).json()
    assert body["result"] == "success", body
    return body["id"]


async def read_response(reader):
    """One HTTP/1.1 response with a Content-Length: (status, parsed JSON body)."""
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = int(re.search(rb"(?i)content-length:\s*(\d+)", head).group(1))
    return status, json.loads(await reader.readexactly(length))


def poll_request(server, auth, queue_id, last_event_id):
    query = urlencode({"queue_id": queue_id, "last_event_id": last_event_id})
    return (f"GET /api/v1/events?{query} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
            f"Authorization: Basic {auth}\r\n\r\n").encode()


def basic(email, api_key):
    return base64.b64encode(f"{email}:{api_key}".encode()).decode()


@pytest.fixture
def server(tmp_path):
    proc = ServeProcess(tmp_path / "instance")
    yield proc
    if proc.process.poll() is None:
        proc.stop()


def test_hundreds_of_waiting_polls_leave_the_api_answering(server):
    """With a default `serve` holding 300 waiting long polls (over 3 users, one keep-alive
    connection each), are a send, a fetch and a login still answered while they wait, and does
    every poller receive the message, once, on the same connection?"""
    owner = session_for(server)
    password = re.search(r"password:\s+(\S+)", "".join(server.output)).group(1)
    users = [(server.email, server.api_key)]
    for n in range(2):
        created = owner.post(server.url + "/api/v1/users", data={
            "email": f"poller{n}@example.com", "password": "a-long-password", "full_name": f"Poller {n}"},
            timeout=REQUEST_TIMEOUT).json()
        assert created["result"] == "success", created
        key = requests.post(server.url + "/api/v1/fetch_api_key", data={
            "username": f"poller{n}@example.com", "password": "a-long-password"}, timeout=REQUEST_TIMEOUT).json()
        users.append((f"poller{n}@example.com", key["api_key"]))
    with ThreadPoolExecutor(8) as pool:
        queues = list(pool.map(lambda i: (users[i % 3], register(session_for(server, *users[i % 3]), server)),
                               range(WAITING_POLLS)))

    async def scenario():
        loop = asyncio.get_running_loop()
        connections = []
        for (email, key), queue_id in queues:
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(poll_request(server, basic(email, key), queue_id, -1))
            connections.append((reader, writer, email, key, queue_id))
        await asyncio.sleep(1.0)  # every poll reaches the server and waits there

        def while_waiting():
            fetched = owner.get(server.url + "/api/v1/messages", params={
                "anchor": "newest", "num_before": 5, "num_after": 0}, timeout=REQUEST_TIMEOUT).json()
            login = requests.post(server.url + "/api/v1/fetch_api_key", data={
                "username": server.email, "password": password}, timeout=REQUEST_TIMEOUT).json()
            message_id = send_message(owner, server, "to everyone waiting")
            return fetched, login, message_id

        fetched, login, message_id = await loop.run_in_executor(None, while_waiting)
        assert fetched["result"] == "success", fetched
        assert login["result"] == "success" and login["api_key"] == server.api_key, login

        async def receive(reader, writer, email, key, queue_id):
            received, last = [], -1
            while not received:
                status, body = await asyncio.wait_for(read_response(reader), REQUEST_TIMEOUT)
                assert status == 200 and body["queue_id"] == queue_id, body
                received = [e for e in body["events"] if e["type"] == "message"]
                last = max([last] + [e["id"] for e in body["events"]])
                if not received:  # a heartbeat: poll again on the same connection
                    writer.write(poll_request(server, basic(email, key), queue_id, last))
            # Nothing more for this queue: the message came once.
            writer.write(poll_request(server, basic(email, key), queue_id, last).replace(
                b"last_event_id", b"dont_block=true&last_event_id"))
            status, body = await asyncio.wait_for(read_response(reader), REQUEST_TIMEOUT)
            writer.close()
            return [e["message"]["id"] for e in received], body["events"]

        return message_id, await asyncio.gather(*(receive(*c) for c in connections))

    message_id, results = asyncio.run(scenario())
    assert len(results) == WAITING_POLLS
    assert all(ids == [message_id] and rest == [] for ids, rest in results), results[:3]


def test_disconnected_poll_is_freed_and_its_events_kept(tmp_path):
    """When a client closes its connection during a long poll, is the poll dropped at once (so
    its queue can expire as idle; a poll still waiting keeps a queue alive), while an event
    that arrives afterwards still waits in a live queue for the next poll?"""
    instance = tmp_path / "instance"
    instance.mkdir()
    (instance / "config.json").write_text(json.dumps({"EVENT_QUEUE_IDLE_SECONDS": 2}))
    server = ServeProcess(instance)
    try:
        owner = session_for(server)
        expiring, kept = register(owner, server), register(owner, server)
        for queue_id in (expiring, kept):
            with socket.create_connection(("127.0.0.1", server.port)) as sock:
                sock.sendall(poll_request(server, basic(server.email, server.api_key), queue_id, -1))
                time.sleep(0.3)  # the poll is waiting on the server when the client goes away
        message_id = send_message(owner, server, "after the disconnect")
        events = owner.get(server.url + "/api/v1/events", params={
            "queue_id": kept, "last_event_id": -1, "dont_block": "true"}, timeout=REQUEST_TIMEOUT).json()
        assert [e["message"]["id"] for e in events["events"]] == [message_id]
        time.sleep(3.5)  # longer than EVENT_QUEUE_IDLE_SECONDS with no poll waiting
        gone = owner.get(server.url + "/api/v1/events", params={
            "queue_id": expiring, "last_event_id": -1, "dont_block": "true"}, timeout=REQUEST_TIMEOUT).json()
        assert gone["code"] == "BAD_EVENT_QUEUE_ID", gone
    finally:
        server.stop()


def test_graceful_restart_keeps_event_queues(tmp_path):
    """Does SIGTERM answer a waiting poll with a heartbeat and save the queues, and does the next
    `serve` on the same instance restore them: the zulip client's old queue_id and
    last_event_id keep working and receive new events, with ids continuing where they stopped?"""
    instance = tmp_path / "instance"
    first = ServeProcess(instance)
    client = zulip.Client(email=first.email, api_key=first.api_key, site=first.url)
    registered = client.register(event_types=["message"])
    queue_id = registered["queue_id"]
    first_id = client.send_message({"type": "stream", "to": "general", "topic": "restart", "content": "before"})["id"]
    before = client.get_events(queue_id=queue_id, last_event_id=-1)
    assert [(e["id"], e["message"]["id"]) for e in before["events"]] == [(0, first_id)]

    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(lambda: session_for(first).get(first.url + "/api/v1/events", params={
            "queue_id": queue_id, "last_event_id": 0}, timeout=REQUEST_TIMEOUT).json())
        time.sleep(0.5)
        assert first.stop() == 0
        answered = waiting.result()
    assert answered["events"] == [{"type": "heartbeat", "id": 1}]
    assert "Saved 1 event queue(s). Shut down cleanly." in "".join(first.output)
    assert (instance / DUMP_FILENAME).exists()

    second = ServeProcess(instance)
    try:
        assert "Restored 1 event queue(s)." in "".join(second.output)
        assert not (instance / DUMP_FILENAME).exists()
        client = zulip.Client(email=first.email, api_key=first.api_key, site=second.url)
        second_id = client.send_message({"type": "stream", "to": "general", "topic": "restart",
                                         "content": "after"})["id"]
        after = client.get_events(queue_id=queue_id, last_event_id=1)
        assert after["result"] == "success", after
        assert [(e["id"], e["message"]["id"]) for e in after["events"]] == [(2, second_id)]
    finally:
        second.stop()


def test_queues_are_lost_after_a_crash(tmp_path):
    """After kill -9 (no chance to save), does the old queue id give BAD_EVENT_QUEUE_ID, the
    error on which clients re-register, and is nothing else lost?"""
    instance = tmp_path / "instance"
    first = ServeProcess(instance)
    owner = session_for(first)
    queue_id = register(owner, first)
    message_id = send_message(owner, first, "kept")
    first.stop(signal.SIGKILL)
    second = ServeProcess(instance)
    try:
        gone = owner.get(second.url + "/api/v1/events", params={"queue_id": queue_id, "last_event_id": -1},
                         timeout=REQUEST_TIMEOUT).json()
        assert gone["code"] == "BAD_EVENT_QUEUE_ID" and gone["msg"].startswith("Bad event queue id:")
        fetched = owner.get(second.url + "/api/v1/messages/" + str(message_id), timeout=REQUEST_TIMEOUT).json()
        assert fetched["result"] == "success" and fetched["message"]["content"] == "<p>kept</p>"
    finally:
        second.stop()


def test_events_on_keep_alive_and_json_path(server):
    """Do GET and DELETE /events work one after another on one keep-alive connection, does
    /json/events answer 401 without a session like any unauthenticated request, and does a
    wrong key get the 401 with a Basic challenge?"""
    owner = session_for(server)
    queue_id = register(owner, server)
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        stream = sock.makefile("rb")
        auth = basic(server.email, server.api_key)
        query = urlencode({"queue_id": queue_id, "dont_block": "true"})
        body = urlencode({"queue_id": queue_id}).encode()
        sock.sendall(f"GET /api/v1/events?{query} HTTP/1.1\r\nHost: x\r\nAuthorization: Basic {auth}\r\n\r\n".encode())
        first = read_blocking(stream)
        sock.sendall(f"DELETE /api/v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Basic {auth}\r\n"
                     f"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n\r\n"
                     .encode() + body)
        second = read_blocking(stream)
        sock.sendall(f"GET /api/v1/events?{query} HTTP/1.1\r\nHost: x\r\nAuthorization: Basic {auth}\r\n\r\n".encode())
        third = read_blocking(stream)
    assert first == (200, {"result": "success", "msg": "", "events": [], "queue_id": queue_id})
    assert second == (200, {"result": "success", "msg": ""})
    assert third[0] == 400 and third[1]["code"] == "BAD_EVENT_QUEUE_ID"
    anonymous = requests.get(server.url + "/json/events", params={"queue_id": queue_id}, timeout=REQUEST_TIMEOUT)
    assert anonymous.status_code == 401 and anonymous.json()["code"] == "UNAUTHORIZED"
    wrong = requests.get(server.url + "/api/v1/events", params={"queue_id": queue_id},
                         auth=(server.email, "x" * 32), timeout=REQUEST_TIMEOUT)
    assert wrong.status_code == 401 and wrong.json()["code"] == "INVALID_API_KEY"
    assert wrong.headers["WWW-Authenticate"] == 'Basic realm="zulip"'


def read_blocking(stream):
    """One response from a blocking socket file: (status, JSON body)."""
    status = int(stream.readline().split(b" ", 2)[1])
    length = 0
    while (line := stream.readline()) not in (b"\r\n", b""):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return status, json.loads(stream.read(length))


def test_serve_raises_its_open_file_limit(tmp_path):
    """Started with the usual soft open-file limit of 1,024, does serve raise it to the hard
    limit (every connected client is an open file), and say so at start?"""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = 1024 if hard == resource.RLIM_INFINITY else min(1024, hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))  # the server process inherits it
    try:
        server = ServeProcess(tmp_path / "instance")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    try:
        printed = int(re.search(r"open-file limit (\d+)", "".join(server.output)).group(1))
        limits = open(f"/proc/{server.process.pid}/limits").read()
        running = int(re.search(r"Max open files\s+(\d+)", limits).group(1))
    finally:
        server.stop()
    assert printed == running
    if hard == resource.RLIM_INFINITY:
        assert running > low
    else:
        assert running == hard


def test_restart_restores_each_saved_queue_on_its_own(tmp_path):
    """After an upgrade changes the saved queues' options (one queue saved with an option this
    version does not know and without one it knows), and with another saved queue corrupt, does
    the next `serve` restore the first, still working with its id and event ids, and skip only
    the corrupt one? And does serve's loop answer /events with the X-RateLimit-* headers?"""
    instance = tmp_path / "instance"
    first = ServeProcess(instance, rate_limiting=True)
    owner = session_for(first)
    kept, corrupt = register(owner, first), register(owner, first)
    send_message(owner, first, "before")
    assert first.stop() == 0
    saved = json.loads((instance / DUMP_FILENAME).read_text())
    for queue in saved["queues"]:
        if queue["id"] == kept:
            queue["option_of_a_later_version"] = {"anything": 1}
            del queue["client_capabilities"], queue["all_public_streams"]
        else:
            queue["narrow"] = "not a narrow"
    (instance / DUMP_FILENAME).write_text(json.dumps(saved))

    second = ServeProcess(instance, rate_limiting=True)
    try:
        assert "Restored 1 event queue(s)." in "".join(second.output)
        owner = session_for(second, first.email, first.api_key)
        message_id = send_message(owner, second, "after")
        polled = owner.get(second.url + "/api/v1/events", params={
            "queue_id": kept, "last_event_id": 0, "dont_block": "true"}, timeout=REQUEST_TIMEOUT)
        assert [(e["id"], e["message"]["id"]) for e in polled.json()["events"]] == [(1, message_id)]
        assert int(polled.headers["X-RateLimit-Limit"]) == 200
        assert int(polled.headers["X-RateLimit-Remaining"]) > 0 and int(polled.headers["X-RateLimit-Reset"]) > 0
        gone = owner.get(second.url + "/api/v1/events", params={
            "queue_id": corrupt, "last_event_id": -1, "dont_block": "true"}, timeout=REQUEST_TIMEOUT).json()
        assert gone["code"] == "BAD_EVENT_QUEUE_ID", gone
    finally:
        second.stop()
