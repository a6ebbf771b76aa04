"""The bridge's backlog (server/wsgi_bridge.py): requests that arrive while a worker runs the
app in its turn are answered by that worker, one after another; a slow request, or one waiting
on another thread, does not hold them up.

The bridge is driven here as `serve`'s loop drives it (an ASGI call per request), with a turns
object of its own and a WSGI app that records which thread answered."""

import asyncio
import threading
import time

from chat_appliance.db.admission import Turns
from chat_appliance.server.wsgi_bridge import WSGIBridge


def scope(path):
    return {"type": "http", "method": "GET", "path": path, "query_string": b"", "headers": [],
            "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1), "http_version": "1.1"}


async def get(bridge, path):
    """(status, body, seconds) of one request through the bridge."""
    sent = []

    async def send(message):
        sent.append(message)

    async def receive():  # a GET has no body; the bridge does not ask
        raise AssertionError("no body to read")

    started = time.monotonic()
    await bridge(scope(path), receive, send)
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:]), time.monotonic() - started


def make_bridge(app, turns, threads=16):
    return WSGIBridge(app, threads, lambda: None, turns=turns, body_timeout=None)


def answer(start_response, text):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [text.encode()]


def test_requests_that_arrive_during_a_turn_are_answered_by_its_worker():
    """Do twenty requests sent at once all get their answer, in turn, from one or two worker
    threads (the first takes the rest from the backlog) rather than a thread each?"""
    turns = Turns(patience=1.0)
    threads = []

    def app(environ, start_response):
        threads.append(threading.get_ident())
        until = time.perf_counter() + 0.002  # busy: holds the turn, as the app's Python does
        while time.perf_counter() < until:
            pass
        return answer(start_response, environ["PATH_INFO"])

    bridge = make_bridge(app, turns)

    async def burst():
        return await asyncio.gather(*(get(bridge, f"/r{n}") for n in range(20)))

    results = asyncio.run(burst())
    assert [(status, body) for status, body, _ in results] == [(200, f"/r{n}".encode()) for n in range(20)]
    assert len(set(threads)) <= 2, f"{len(set(threads))} threads answered 20 requests"
    bridge.executor.shutdown()


def test_a_slow_request_holds_a_waiting_one_up_no_longer_than_the_patience():
    """While one request holds the turn for half a second, is a request that arrives after it
    answered within a few patience periods (by a worker of its own), not after the slow one?"""
    turns = Turns(patience=0.05)

    def app(environ, start_response):
        if environ["PATH_INFO"] == "/slow":
            time.sleep(0.5)  # a stalled disk: the turn stays held
        return answer(start_response, environ["PATH_INFO"])

    bridge = make_bridge(app, turns)

    async def both():
        slow = asyncio.ensure_future(get(bridge, "/slow"))
        await asyncio.sleep(0.05)
        fast = await get(bridge, "/fast")
        return fast, await slow

    (status, body, seconds), (slow_status, _, _) = asyncio.run(both())
    assert (status, body, slow_status) == (200, b"/fast", 200)
    assert seconds < 0.3, f"the fast request took {seconds:.3f} s behind the slow one"
    bridge.executor.shutdown()


def test_a_request_waiting_on_another_thread_leaves_the_backlog_to_others():
    """When the worker in its turn waits on something only a later request brings about (the
    wait gives the turn up, as a commit or a password hash does), does that later request get
    answered by another worker, so that both finish, at once?"""
    turns = Turns(patience=5.0)  # long: only the hand-over can let the second request through
    done = threading.Event()

    def app(environ, start_response):
        if environ["PATH_INFO"] == "/wait":
            with turns.waiting_on_others():
                arrived = done.wait(3)
            return answer(start_response, f"waited {arrived}")
        done.set()
        return answer(start_response, "set")

    bridge = make_bridge(app, turns)

    async def both():
        waiting = asyncio.ensure_future(get(bridge, "/wait"))
        await asyncio.sleep(0.05)
        setter = await get(bridge, "/set")
        return await waiting, setter

    (status, body, seconds), (_, set_body, _) = asyncio.run(both())
    assert (status, body, set_body) == (200, b"waited True", b"set")
    assert seconds < 1, seconds
    bridge.executor.shutdown()


def test_an_answer_kept_for_a_batch_goes_out_while_a_slow_request_runs():
    """While requests queue, a worker keeps the answers it finishes to send them together. When
    the request after a quick one is slow, does the quick one's answer still go out within a few
    milliseconds (the loop's timer sends it), not when the slow one is done? And do all three
    get their own answers?"""
    turns = Turns(patience=5.0)  # long: the worker takes the whole backlog itself

    def app(environ, start_response):
        path = environ["PATH_INFO"]
        # /slow is long enough that "sent while it runs" and "sent after it" stay far apart even
        # on a loaded machine.
        seconds = {"/first": 0.05, "/slow": 2.0}.get(path, 0)
        until = time.perf_counter() + seconds  # busy: holds the turn, as the app's Python does
        while time.perf_counter() < until:
            pass
        return answer(start_response, path)

    bridge = make_bridge(app, turns)

    async def three():
        first = asyncio.ensure_future(get(bridge, "/first"))
        await asyncio.sleep(0.01)  # /first runs; the next two queue behind it, in this order
        quick = asyncio.ensure_future(get(bridge, "/quick"))
        await asyncio.sleep(0)
        slow = asyncio.ensure_future(get(bridge, "/slow"))
        return await first, await quick, await slow

    started = time.monotonic()
    first, quick, slow = asyncio.run(three())
    assert [(r[0], r[1]) for r in (first, quick, slow)] == [(200, b"/first"), (200, b"/quick"), (200, b"/slow")]
    assert slow[2] >= 1.95, slow
    assert quick[2] < slow[2] / 2, f"the quick answer waited {quick[2]:.3f} s, behind the slow request"
    assert time.monotonic() - started < 6
    bridge.executor.shutdown()
