"""The queue manager as `serve` drives it: fan-out on an event loop fed from worker threads,
polls waiting on the loop, the per-message shaping cache, and the dump/restore of a graceful restart."""

import asyncio
import re
import threading
import time

import pytest

from chat_appliance.events.queues import QueueManager


def message_event(message_id, user_ids, *, stream_id=7, realm_id=1, flags=None, sender_queue_id=None):
    return {"type": "message", "raw_content": "**hi**", "sender_queue_id": sender_queue_id, "local_id": "1.0",
            "invite_only": False, "stream_id": stream_id, "realm_id": realm_id,
            "flags": flags if flags is not None else {uid: ["read"] if uid == 1 else [] for uid in user_ids},
            "message": {"id": message_id, "type": "stream", "display_recipient": "general", "stream_id": stream_id,
                        "subject": "t", "content": "<p><strong>hi</strong></p>", "sender_id": 1,
                        "sender_email": "a@x", "avatar_url": "https://x/a.png"}}


class LoopThread:
    """An asyncio loop running in a thread, as serve's loop runs beside its worker threads."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine, timeout=10):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def drain(self):
        """Wait until every callback handed to the loop so far has run."""
        self.run(asyncio.sleep(0))

    def stop(self):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


def test_publishing_from_many_threads_reaches_the_loop_in_order():
    """With a loop attached, do events published from several worker threads arrive in every
    queue exactly once each, in each thread's publishing order, with consecutive ids?"""
    manager, loop = QueueManager(), LoopThread()
    manager.attach_loop(loop.loop)
    try:
        queues = [manager.register(user_id=uid, realm_id=1, event_types=["typing"]) for uid in (1, 2) for _ in range(3)]

        def publisher(thread_no):
            for n in range(200):
                manager({"type": "typing", "op": "start", "seq": (thread_no, n)}, [1, 2])

        threads = [threading.Thread(target=publisher, args=(t,)) for t in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        loop.drain()
        for queue in queues:
            assert [e["id"] for e in queue.events] == list(range(800))
            for thread_no in range(4):
                assert [e["seq"][1] for e in queue.events if e["seq"][0] == thread_no] == list(range(200))
    finally:
        manager.detach_loop()
        loop.stop()


def test_poll_waiting_on_the_loop_is_woken_by_a_worker_thread_publish():
    """Does a poll waiting on the loop (no thread of its own) return the event a worker thread
    publishes, and a heartbeat when nothing comes?"""
    manager, loop = QueueManager(), LoopThread()
    manager.attach_loop(loop.loop)
    try:
        queue = manager.register(user_id=1, realm_id=1, event_types=["typing"])
        waiting = asyncio.run_coroutine_threadsafe(
            queue.get_async(-1, dont_block=False, heartbeat_seconds=30), loop.loop)
        loop.drain()  # the poll has started and waits
        assert not waiting.done()
        threading.Thread(target=manager, args=({"type": "typing", "op": "start"}, [1])).start()
        assert waiting.result(5) == [{"type": "typing", "op": "start", "id": 0}]
        assert loop.run(queue.get_async(0, dont_block=False, heartbeat_seconds=0.1)) == [{"type": "heartbeat", "id": 1}]
    finally:
        manager.detach_loop()
        loop.stop()


def test_disconnect_ends_the_wait_and_keeps_the_queue_idle_clock():
    """When the client goes away, does the waiting poll end with None and stop counting as a
    waiting poll (so the queue can expire), without consuming anything?"""
    manager, loop = QueueManager(), LoopThread()
    try:
        queue = manager.register(user_id=1, realm_id=1)
        gone = asyncio.Event()

        async def poll():
            return await queue.get_async(-1, dont_block=False, heartbeat_seconds=30, disconnected=gone.wait)

        waiting = asyncio.run_coroutine_threadsafe(poll(), loop.loop)
        loop.drain()
        assert queue.idle_since() is None
        loop.loop.call_soon_threadsafe(gone.set)
        assert waiting.result(5) is None
        assert queue.idle_since() is not None and queue.events == []
    finally:
        loop.stop()


def test_fan_out_shapes_each_form_once_and_delivers_once():
    """Does one message to many queues build one shaped event per distinct (content form,
    gravatar, flags) and share it, and does a queue that is both a recipient's and an
    all_public_streams one get the message once?"""
    manager = QueueManager()
    plain = [manager.register(user_id=2, realm_id=1) for _ in range(50)]
    html = [manager.register(user_id=2, realm_id=1, apply_markdown=True) for _ in range(50)]
    reader = manager.register(user_id=1, realm_id=1, all_public_streams=True)
    manager(message_event(10, [1, 2, 2]), [1, 2, 2])
    assert all(len(q.events) == 1 for q in plain + html + [reader])
    assert len({id(q.events[0]["message"]) for q in plain}) == 1
    assert len({id(q.events[0]["message"]) for q in html}) == 1
    assert plain[0].events[0]["message"]["content"] == "**hi**"
    assert html[0].events[0]["message"]["content"] == "<p><strong>hi</strong></p>"
    assert reader.events[0]["flags"] == ["read"] and plain[0].events[0]["flags"] == []


def test_restore_brings_back_live_queues_only(tmp_path):
    """Does a dump restored by a new manager keep each live queue's id, options, pending events
    and next event id, drop queues idle longer than the idle limit, and delete the file?"""
    path = tmp_path / "queues.json"
    old = QueueManager(idle_seconds=60)
    live = old.register(user_id=1, realm_id=1, event_types=["typing"], narrow=[("stream", "general")],
                        apply_markdown=True, client_capabilities={"empty_topic_name": True})
    expired = old.register(user_id=2, realm_id=1)
    old({"type": "typing", "op": "start"}, [1])
    old({"type": "typing", "op": "stop"}, [1])
    live.get(0, dont_block=True, heartbeat_seconds=1)
    expired.last_access -= 61
    assert old.dump(path) == 2

    new = QueueManager(idle_seconds=60)
    assert new.restore(path) == 1 and not path.exists()
    restored = new.access(live.id, 1)
    assert restored.events == [{"type": "typing", "op": "stop", "id": 1}] and restored.next_event_id == 2
    assert restored.event_types == {"typing"} and restored.narrow == [("stream", "general")]
    assert restored.apply_markdown and restored.client_capabilities == {"empty_topic_name": True}
    assert expired.id not in new.queues
    new({"type": "typing", "op": "start"}, [1])
    assert [e["id"] for e in restored.get(1, dont_block=True, heartbeat_seconds=1)] == [2]
    assert new.restore(path) == 0


def test_native_events_body_is_what_jsonify_writes(app):
    """Is the body `serve` writes for GET /events (message objects encoded once per fan-out)
    the same text Flask's jsonify writes for the same answer, ignored parameters included?"""
    from chat_appliance.server.asgi import ChatApplianceASGI
    from chat_appliance.web.longpoll import EventsBody

    message = {"id": 3, "content": "<p>caf\u00e9 \u2603</p>", "avatar_url": None, "flags": ["read"]}
    events = [{"type": "message", "message": message, "flags": [], "id": 0},
              {"type": "message", "message": message, "flags": ["read"], "local_message_id": "1.0", "id": 1},
              {"type": "heartbeat", "id": 2}]
    native = ChatApplianceASGI(app, 1)
    with app.test_request_context():
        from chat_appliance.web.response import json_success

        expected = json_success({"events": events, "queue_id": "q"}, ignored={"zeta", "alpha"}).get_data(as_text=True)
    assert native.encode(EventsBody(events, "q", {"zeta", "alpha"})) + "\n" == expected
    assert native.encode(EventsBody(events, "q", set())) + "\n" == app.json.dumps(
        {"result": "success", "msg": "", "events": events, "queue_id": "q"}) + "\n"
    native.executor.shutdown()


def call_native(app, method, path, query=b"", headers=(), body=b""):
    """One request to serve's ASGI application, in process: (status, headers, JSON body)."""
    import json

    from chat_appliance.server.asgi import ChatApplianceASGI

    native = ChatApplianceASGI(app, 2)
    headers = list(headers)
    if body:  # an HTTP/1.1 request carries its body's length (or is chunked): the server reads by it
        headers.append((b"content-length", str(len(body)).encode()))
    scope = {"type": "http", "method": method, "path": path, "query_string": query, "headers": headers,
             "http_version": "1.1", "scheme": "http", "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1)}
    sent = []

    async def run():
        forever = asyncio.Event()
        messages = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive():
            if messages:
                return messages.pop(0)
            await forever.wait()

        async def send(message):
            sent.append(message)

        await native(scope, receive, send)

    try:
        asyncio.run(run())
    finally:
        native.executor.shutdown()
    start, body_message = sent
    return start["status"], dict(start["headers"]), json.loads(body_message["body"])


def basic_header(user):
    import base64

    return (b"authorization", b"Basic " + base64.b64encode(f"{user.email}:{user.api_key}".encode()))


def test_native_handler_answers_and_logs_like_the_flask_view(org, caplog):
    """Does the loop's GET /events answer what the Flask view answers (events, ignored
    parameters), DELETE read its form body, and each write the request log line with its timing?"""
    from ..support.helpers import register

    queue_id = register(org.client(org.hamlet), event_types=["typing"])["queue_id"]
    caplog.set_level("INFO", logger="chat_appliance.requests")
    org.flask_client.application.config["LOG_REQUESTS"] = True
    status, _, body = call_native(app=org.flask_client.application, method="GET", path="/api/v1/events",
                                  query=f"queue_id={queue_id}&dont_block=true&client=x".encode(),
                                  headers=[basic_header(org.hamlet)])
    assert status == 200 and body == {"result": "success", "msg": "", "events": [], "queue_id": queue_id,
                                      "ignored_parameters_unsupported": ["client"]}
    status, _, body = call_native(org.flask_client.application, "DELETE", "/api/v1/events",
                                  headers=[basic_header(org.hamlet),
                                           (b"content-type", b"application/x-www-form-urlencoded")],
                                  body=f"queue_id={queue_id}".encode())
    assert status == 200 and body == {"result": "success", "msg": ""}
    lines = [r.getMessage() for r in caplog.records if r.name == "chat_appliance.requests"]
    assert re.fullmatch(rf"GET /api/v1/events 200 [0-9.]+ms {re.escape(org.hamlet.email)}", lines[0]), lines
    assert lines[1].startswith("DELETE /api/v1/events 200 "), lines


def test_json_events_use_the_apps_session_authenticator(org):
    """Does the loop's /json/events authenticate through the session check kept on the app's
    state (given the request's headers, Cookie included): 401 without a session it accepts (and
    no Basic challenge), the queue's events with one, and never by API key?"""
    from chat_appliance.lib.errors import UnauthorizedError
    from chat_appliance.web.context import EXTENSION

    from ..support.helpers import register

    queue_id = register(org.client(org.hamlet))["queue_id"]
    app = org.flask_client.application
    query = f"queue_id={queue_id}&dont_block=true".encode()
    status, headers, body = call_native(app, "GET", "/json/events", query, headers=[(b"cookie", b"sessionid=s")])
    assert status == 401 and body["code"] == "UNAUTHORIZED" and b"www-authenticate" not in headers

    def by_cookie(headers):
        if headers.get("cookie") != "sessionid=s":
            raise UnauthorizedError()
        return type("SessionUser", (), {"id": org.hamlet.id, "realm_id": org.realm.id, "email": org.hamlet.email})

    app.extensions[EXTENSION].session_authenticator = by_cookie
    status, _, body = call_native(app, "GET", "/json/events", query, headers=[(b"cookie", b"sessionid=s")])
    assert status == 200 and body["queue_id"] == queue_id
    status, _, body = call_native(app, "GET", "/json/events", query, headers=[basic_header(org.hamlet)])
    assert status == 401


def test_fan_out_lets_other_loop_work_in_between():
    """During a fan-out to many waiting polls, does work that reaches the loop after the fan-out
    began (such as the answer to the sender's request) run before the last polls are answered,
    rather than behind all of them?"""
    from chat_appliance.events.queues import WAKE_BATCH

    manager, loop = QueueManager(), LoopThread()
    manager.attach_loop(loop.loop)
    try:
        queues = [manager.register(user_id=1, realm_id=1, event_types=["typing"]) for _ in range(5 * WAKE_BATCH)]
        order = []

        async def poll(queue):
            await queue.get_async(-1, dont_block=False, heartbeat_seconds=30)
            if not order:  # the first poll answered hands the loop some other work
                asyncio.get_running_loop().call_soon(order.append, "other work")
            order.append("poll")

        waiting = [asyncio.run_coroutine_threadsafe(poll(q), loop.loop) for q in queues]
        loop.drain()  # every poll waits
        assert all(q.waiters for q in queues)
        manager({"type": "typing", "op": "start"}, [1])
        for future in waiting:
            future.result(10)
        assert order.count("poll") == len(queues)
        assert order.index("other work") <= 2 * WAKE_BATCH, order.index("other work")
    finally:
        manager.detach_loop()
        loop.stop()


def test_a_poll_on_a_queue_collected_after_its_lookup_is_told_the_queue_is_gone():
    """When idle collection deletes a queue between a poll's lookup (access) and its wait, does
    the poll answer BAD_EVENT_QUEUE_ID at once, in a thread and on a loop, instead of waiting on
    the deleted queue for a heartbeat's time and answering an empty list?"""
    from chat_appliance.events.clock import ManualClock
    from chat_appliance.lib.errors import BadEventQueueIdError

    clock = ManualClock()
    manager = QueueManager(idle_seconds=10, clock=clock)

    def looked_up_then_collected():
        queue = manager.register(user_id=1, realm_id=1)
        looked_up = manager.access(queue.id, 1)
        clock.advance(11)
        manager.collect_garbage(force=True)
        assert queue.id not in manager.queues
        return looked_up

    in_thread = looked_up_then_collected()
    answer = []
    poll = threading.Thread(target=lambda: answer.append(
        pytest.raises(BadEventQueueIdError, in_thread.get, -1, dont_block=False)))
    poll.start()
    poll.join(5)
    assert not poll.is_alive() and answer, "the poll waits on a deleted queue"

    on_loop = looked_up_then_collected()

    async def poll_on_loop():
        return await asyncio.wait_for(on_loop.get_async(-1, dont_block=False), 5)

    with pytest.raises(BadEventQueueIdError):
        asyncio.run(poll_on_loop())


def test_idle_expiry_and_heartbeats_follow_the_injected_clock():
    """With a manual clock, does a queue expire exactly when the clock passes the idle limit (and
    not while a poll waits), and does a waiting poll get its heartbeat only when the clock
    reaches its spread wait, both in a thread and on a loop?"""
    from chat_appliance.events.clock import ManualClock

    clock = ManualClock()
    manager = QueueManager(idle_seconds=10, heartbeat_seconds=55, clock=clock, random_fraction=lambda: 0.5)
    assert manager.heartbeat_wait() == 50
    idle = manager.register(user_id=1, realm_id=1)
    waiting = manager.register(user_id=2, realm_id=1)
    answers = []
    poll = threading.Thread(target=lambda: answers.append(waiting.get(-1, dont_block=False)))
    poll.start()
    deadline = time.monotonic() + 5
    while not waiting.waiters and time.monotonic() < deadline:
        time.sleep(0.005)
    clock.advance(10)
    manager.collect_garbage(force=True)
    assert idle.id in manager.queues  # exactly the limit: not yet
    clock.advance(39.9)
    manager.collect_garbage(force=True)
    assert idle.id not in manager.queues and waiting.id in manager.queues
    time.sleep(0.05)
    assert answers == []  # 49.9 s of the 50 s wait
    clock.advance(0.1)
    poll.join(5)
    assert answers == [[{"type": "heartbeat", "id": 0}]]

    loop = LoopThread()
    try:
        future = asyncio.run_coroutine_threadsafe(waiting.get_async(0, dont_block=False), loop.loop)
        deadline = time.monotonic() + 5
        while not waiting.waiters and time.monotonic() < deadline:
            time.sleep(0.005)
        clock.advance(49)
        loop.drain()
        assert not future.done()
        clock.advance(1)
        assert future.result(5) == [{"type": "heartbeat", "id": 1}]
    finally:
        loop.stop()


def test_heartbeats_are_spread_between_45_and_55_seconds():
    """Does each waiting poll draw its heartbeat wait uniformly from 45 to 55 s (the default
    heartbeat), so that polls started together do not all come back together?"""
    import random

    fractions = iter([0.0, 1.0, 0.25])
    manager = QueueManager(random_fraction=lambda: next(fractions))
    assert [manager.heartbeat_wait() for _ in range(3)] == [55, 45, 52.5]
    manager = QueueManager(random_fraction=random.Random(7).random)
    waits = [manager.heartbeat_wait() for _ in range(1000)]
    assert 45 <= min(waits) < 46 and 54 < max(waits) <= 55
    assert 400 < sum(1 for wait in waits if wait < 50) < 600


def dump_of(tmp_path, queues, **top):
    """A saved-queues file as a graceful stop writes it, holding `queues` (dicts)."""
    import json

    from chat_appliance.events.queues import DUMP_VERSION

    path = tmp_path / "queues.json"
    path.write_text(json.dumps({"version": DUMP_VERSION, "saved_at": time.time(), "queues": queues, **top}))
    return path


def saved_queue(queue_id, user_id=1, **changes):
    saved = {"id": queue_id, "user_id": user_id, "realm_id": 1, "user_email": "a@x", "event_types": None,
             "narrow": [], "apply_markdown": False, "client_gravatar": True, "all_public_streams": False,
             "client_capabilities": {}, "events": [{"type": "typing", "op": "start", "id": 4}],
             "next_event_id": 5, "idle_seconds": 1.0}
    saved.update(changes)
    return saved


def test_restore_tolerates_added_and_missing_options(tmp_path):
    """Is a saved queue restored when its file has an option this version does not know (a newer
    server wrote it) or lacks one it does know (an older server wrote it), the missing option
    taking its default?"""
    newer = saved_queue("1:newer", idle_queue_timeout=600, some_future_option={"x": 1})
    older = saved_queue("1:older")
    for name in ("client_capabilities", "all_public_streams", "narrow", "user_email"):
        del older[name]
    manager = QueueManager(idle_seconds=60)
    assert manager.restore(dump_of(tmp_path, [newer, older])) == 2
    restored = manager.access("1:older", 1)
    assert (restored.client_capabilities, restored.all_public_streams, restored.narrow) == ({}, False, [])
    assert restored.events == [{"type": "typing", "op": "start", "id": 4}] and restored.next_event_id == 5
    manager({"type": "typing", "op": "stop"}, [1])
    assert [e["id"] for e in manager.access("1:newer", 1).get(4, dont_block=True)] == [5]


def test_one_corrupt_saved_queue_does_not_drop_the_others(tmp_path, caplog):
    """Does a saved queue that cannot be restored (no user, a broken narrow, not even a dict) get
    skipped and logged, while the queues around it come back?"""
    broken = [saved_queue("1:no-user"), saved_queue("1:bad-narrow", narrow=[["stream"]]),
              "not a queue", saved_queue("1:bad-events", events=7)]
    del broken[0]["user_id"]
    path = dump_of(tmp_path, [saved_queue("1:first"), *broken, saved_queue("2:last", user_id=2)])
    manager = QueueManager(idle_seconds=60)
    with caplog.at_level("WARNING", logger="chat_appliance.events.queues"):
        assert manager.restore(path) == 2
    assert set(manager.queues) == {"1:first", "2:last"}
    skipped = [r.getMessage() for r in caplog.records if "could not restore" in r.getMessage()]
    assert len(skipped) == 4, skipped


@pytest.mark.config(RATE_LIMITING=True, RATE_LIMITING_RULES={"api_by_user": [[60, 3]], "api_by_ip": [[60, 2]]})
def test_the_loop_and_the_flask_view_give_the_same_rate_limit_headers(org):
    """Do serve's loop and the Flask view answer GET /events with the same X-RateLimit-* headers
    (the account's budget, reported and not used), and count failed credentials against the
    address alike, up to the same 429 with Retry-After?"""
    import base64

    from ..support.helpers import register

    app = org.flask_client.application
    queue_id = register(org.client(org.hamlet))["queue_id"]
    query = f"queue_id={queue_id}&dont_block=true"
    wrong = base64.b64encode(f"{org.hamlet.email}:wrong".encode())

    def both(headers):
        """(status, rate-limit headers) from the loop, then from the Flask view, for one request."""
        status, native_headers, body = call_native(app, "GET", "/api/v1/events", query.encode(), headers=[
            (name.lower().encode(), value.encode()) for name, value in headers.items()])
        native = (status, {k.decode(): v.decode() for k, v in native_headers.items()
                           if k.startswith((b"x-ratelimit", b"retry-after", b"www-authenticate"))}, body["result"])
        response = org.flask_client.get(f"/api/v1/events?{query}", headers=headers)
        flask = (response.status_code, {k.lower(): v for k, v in response.headers.items()
                                        if k.lower().startswith(("x-ratelimit", "retry-after", "www-authenticate"))},
                 response.get_json()["result"])
        return native, flask

    key = base64.b64encode(f"{org.hamlet.email}:{org.hamlet.api_key}".encode()).decode()
    for _ in range(2):
        native, flask = both({"Authorization": f"Basic {key}"})
        assert native[0] == 200 and native[1]["x-ratelimit-limit"] == "3"
        assert native[1]["x-ratelimit-remaining"] == "2"  # /register used one; polls use none
        assert {k: v for k, v in native[1].items() if k != "x-ratelimit-reset"} == {
            k: v for k, v in flask[1].items() if k != "x-ratelimit-reset"}
        assert native[0] == flask[0] and native[2] == flask[2]
    # A DELETE uses the budget, like any API request (here of an unknown queue, on both paths).
    status, native_headers, _ = call_native(app, "DELETE", "/api/v1/events", b"queue_id=gone", headers=[
        (b"authorization", f"Basic {key}".encode())])
    assert status == 400 and native_headers[b"x-ratelimit-remaining"] == b"1"
    response = org.flask_client.delete("/api/v1/events?queue_id=gone", headers={"Authorization": f"Basic {key}"})
    assert response.status_code == 400 and response.headers["X-RateLimit-Remaining"] == "0"
    # Two failed requests per address and minute: the loop's counts as the first, the view's as the second.
    native, flask = both({"Authorization": f"Basic {wrong.decode()}"})
    assert native[0] == 401 and native[1]["x-ratelimit-remaining"] == "1" and "www-authenticate" in native[1]
    assert flask[0] == 401 and flask[1]["x-ratelimit-remaining"] == "0"
    native, flask = both({"Authorization": f"Basic {wrong.decode()}"})
    assert native[0] == flask[0] == 429 and native[1]["retry-after"] and flask[1]["retry-after"]


def test_a_message_no_queue_can_take_does_not_wake_the_loop():
    """A message to users none of whom holds a queue is not handed to the loop at all; one
    with a recipient's queue is, and once an all_public_streams queue exists, so is every
    message (it takes public channels' messages of other users), until that queue is gone."""
    manager, loop = QueueManager(), LoopThread()
    manager.attach_loop(loop.loop)
    handed = []
    original = loop.loop.call_soon_threadsafe

    def counting(callback, *args, **kwargs):
        if args and isinstance(args[0], dict):  # a delivery (not the test's own drain)
            handed.append(args[0]["message"]["id"])
        return original(callback, *args, **kwargs)

    loop.loop.call_soon_threadsafe = counting
    try:
        mine = manager.register(user_id=3, realm_id=1, event_types=["message"])
        manager(message_event(1, [1, 2]), [1, 2])  # nobody connected
        manager(message_event(2, [2, 3]), [2, 3])  # user 3 is
        loop.drain()
        assert handed == [2] and [e["message"]["id"] for e in mine.events] == [2]
        everything = manager.register(user_id=9, realm_id=1, event_types=["message"], all_public_streams=True)
        manager(message_event(3, [1, 2]), [1, 2])
        loop.drain()
        assert handed == [2, 3] and [e["message"]["id"] for e in everything.events] == [3]
        manager.delete(everything.id)
        manager(message_event(4, [1, 2]), [1, 2])
        loop.drain()
        assert handed == [2, 3]
    finally:
        manager.detach_loop()
        loop.stop()
