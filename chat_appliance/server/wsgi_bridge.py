"""The Flask (WSGI) app behind the event loop: one trip to a worker thread per request.

The loop reads the request body, builds the WSGI environ and hands both to a worker thread, which
runs the whole app and returns the status, headers and body; the loop writes them out. A request
thus costs one hand-over to a thread and one back. (A bridge that crosses between loop and
thread for every piece of the body and of the response, as a2wsgi does, makes a trivial request
take twice as long as under waitress; see docs/benchmarks-history.md, "Speed work".)

Large answers (file downloads, exports) are not held whole: past STREAM_AFTER bytes the worker
sends each further piece through the loop as it comes. A body larger than the app's
MAX_CONTENT_LENGTH is not read: the app sees its declared length and answers 413 as it would
under any WSGI server, and the connection is closed after the answer. A body that does not
arrive in time (read_request_body) is answered 408 and its connection closed, without the app.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import asyncio
import functools
import io
import json
import logging
import sys
import threading
import time
from collections import deque
from concurrent.futures import Future

from chat_appliance.db.admission import turns
from chat_appliance.lib.disk import DISK_FULL_MESSAGE, failed_write_status
from chat_appliance.server.thread_pool import StackExecutor

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict

log = logging.getLogger("chat_appliance")

# A response is sent in one piece up to this size; past it, piece by piece as the app yields.
STREAM_AFTER = 1024 * 1024
INTERNAL_ERROR = b'{"result":"error","msg":"Internal server error","code":"INTERNAL_SERVER_ERROR"}\n'
DISK_FULL_ERROR = json.dumps({"result": "error", "msg": DISK_FULL_MESSAGE, "code": "DISK_FULL"}).encode() + b"\n"
# With workers taking turns, an answer held for its COMMIT (see _work) waits at most about this
# long for the writes of the requests after it to join that COMMIT.
HOLD_SECONDS = 0.050
# While requests queue for the worker in its turn, an answer it finished may wait this long to
# go out with the next ones (see _work, "Answers in batches").
ANSWER_BATCH_SECONDS = 0.002
# A body must progress by this many bytes a second, on average over each period of the read
# timeout (REQUEST_READ_TIMEOUT_SECONDS): slow links upload, a trickle does not hold on.
MIN_BODY_BYTES_PER_SECOND = 1024
DEFAULT_BODY_TIMEOUT = 60
BODY_TIMEOUT_ERROR = json.dumps({"result": "error", "code": "REQUEST_TIMEOUT",
                                 "msg": "The request body arrived too slowly."}).encode() + b"\n"


def commit_failed(error: BaseException) -> Any:
    """The answer of a request whose deferred write could not be committed: 507 DISK_FULL for a
    full disk, as the app answers one raised in a view, else 500."""
    if failed_write_status(error) == 507:
        return 507, [(b"content-type", b"application/json")], [DISK_FULL_ERROR]
    return 500, [(b"content-type", b"application/json")], [INTERNAL_ERROR]


class BodyTimeout(Exception):
    """The request body did not arrive in time."""


class WSGIBridge:
    """An ASGI callable for HTTP requests that runs a WSGI app in a pool of `threads` threads."""

    def __init__(self, wsgi_app, threads, max_body, turns=None, body_timeout=DEFAULT_BODY_TIMEOUT):
        self.wsgi_app = wsgi_app
        self.body_timeout = body_timeout
        # lib/admission.Turns when workers run the app one at a time (the SQLite backend), or None.
        self.turns = turns
        self.executor = StackExecutor(max_workers=threads, thread_name_prefix="wsgi")
        # With turns: requests that arrive while a worker runs the app in its turn wait here, and
        # that worker takes them one after another before it gives the turn up (see _work).
        self._lock = threading.Lock()
        self._backlog: deque[Any] = deque()  # (future, environ, loop, send, close, queued at)
        self._runners = 0  # workers in their turn that will take the backlog when done
        self._watch: Any = None  # the loop's timer that hands late backlog to other workers
        self._held: list[Any] = []  # answers ready to go out together (callables), under _lock
        self._flush: Any = None  # the loop's timer that sends them, armed while requests queue
        self._settling_since: Any = None  # when a runner began the COMMIT its held answers wait for
        # A callable: the largest body the app accepts now (None: no limit).
        self.max_body = max_body

    async def __call__(self, scope, receive, send):
        limit = self.max_body()
        try:
            body, declared = await read_request_body(scope, receive, limit, self.body_timeout)
        except BodyTimeout:
            await send({"type": "http.response.start", "status": 408,
                        "headers": [(b"content-type", b"application/json"), (b"connection", b"close")]})
            await send({"type": "http.response.body", "body": BODY_TIMEOUT_ERROR})
            return
        environ = build_environ(scope, body, declared)
        close = declared is not None and limit is not None and declared > limit
        loop = asyncio.get_running_loop()
        if self.turns is None:
            answer = await loop.run_in_executor(self.executor, self.run_app, environ, loop, send, close)
        else:
            answer = await asyncio.wrap_future(self.dispatch(environ, loop, send, close))
        if answer is None:
            return  # streamed from the worker
        status, headers, chunks = answer
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"".join(chunks)})

    # --- workers taking turns (db/admission.py) -------------------------------------------------
    # Handing each request to a thread of its own cost more than the app itself for a trivial
    # request: at sixteen connections every request woke a worker, which then waited for the turn
    # and was woken again when it came (GET /users/me ran 1,600 requests/s on 64 threads, 2,400 on
    # one). So a request that arrives while a worker runs the app in its turn joins a backlog, and
    # that worker takes the backlog's requests one after another, in its turn, before it gives
    # the turn up. When it waits on another thread mid-request (a commit, a stream, a password
    # hash), the backlog goes to other workers, as it would have without it; and a request that
    # has waited in the backlog longer than the turns' patience goes to a worker of its own,
    # which runs beside a slow holder as any waiter would (Turns.take).

    def dispatch(self, environ: Any, loop: Any, send: Any, close: Any) -> Future[Any]:
        """On the loop: a future of the app's answer to this request (run_app's)."""
        future: Future[Any] = Future()
        job = (future, environ, loop, send, close, time.monotonic())
        with self._lock:
            queued = self._runners > 0
            if queued:
                self._backlog.append(job)
            else:
                self._runners += 1
        if not queued:
            self.executor.submit(self._work, job)
            return future
        if self._watch is None:
            self._watch = loop.call_later(self.turns.patience, self._hand_over_late, loop)
        if self._flush is None:
            self._flush = loop.call_later(ANSWER_BATCH_SECONDS, self._flush_held)
        return future

    # --- answers in batches ---------------------------------------------------------------------
    # Each answer a worker hands over wakes the loop's thread, which then wants the interpreter's
    # lock. A worker that goes on with the backlog releases that lock at its next database
    # statement (the driver runs SQL without it), the loop takes it, and the worker waits to get
    # it back: two thread switches per statement, and for GET /users/me nine per request. So while
    # requests queue and the loop has a timer armed (_flush, armed by dispatch), a worker keeps the
    # answers it finishes, and the loop's timer or the worker, when its run ends or it must wait,
    # sends them together: each at most ANSWER_BATCH_SECONDS (plus the lock's switch interval)
    # later, and only when others queue behind it anyway.

    def _hold_or_send(self, deliver: Any) -> None:
        """In a worker: keep an answer for the next batch if requests queue and the loop's timer
        is armed, else send it (and any kept) now."""
        with self._lock:
            if self._flush is not None and self._backlog and not self.turns.waiters:
                self._held.append(deliver)
                return
        self._send_held()
        deliver()

    def _send_held(self) -> None:
        """Send the answers kept so far (any thread)."""
        with self._lock:
            held, self._held = self._held, []
        for deliver in held:
            deliver()

    def _flush_held(self) -> None:
        """On the loop: the timer that dispatch armed; send what the workers kept."""
        with self._lock:
            self._flush = None
        self._send_held()

    def _start_runner(self) -> None:
        """Hand the backlog's oldest request to a worker of its own, which takes the rest after."""
        with self._lock:
            if not self._backlog:
                return
            job = self._backlog.popleft()
            self._runners += 1
        self.executor.submit(self._work, job)

    def _work(self, job: Any) -> None:
        """In a worker (counted in _runners by whoever submitted it): take the turn, answer `job`,
        then the backlog's requests while there are any and nobody else waits for the turn, then
        give the turn up.

        A message send leaves its write uncommitted and its answer held (group_commit.py, "Held
        answers"); the worker goes on to the next request, whose write joins the same SQLite
        transaction. When the backlog is empty, when another worker waits for the turn, or when
        the oldest held answer has waited HOLD_SECONDS, the worker commits, and the held answers
        go out."""
        turns = self.turns
        turns.take()
        turns.set_wait_hooks(self._hand_over_backlog, self._resume)
        owed = None  # the open transaction that answers held in this turn wait for
        owed_since = 0.0
        try:
            while job is not None:
                debt = self._answer(job)
                if debt is not None:
                    if owed is None:
                        owed_since = time.monotonic()
                    owed = debt
                if owed is not None and (not (self._backlog and not turns.waiters)
                                         or time.monotonic() - owed_since >= HOLD_SECONDS):
                    self._send_held()
                    self._settle(owed)
                    owed = None
                with self._lock:
                    # A worker waiting for the turn (a late request, or one that came while no
                    # worker ran) goes next: the holder stops here and leaves it the backlog.
                    job = self._backlog.popleft() if self._backlog and not turns.waiters else None
                    if job is None:
                        self._runners -= 1
                if job is not None:
                    turns.renew()
        finally:
            self._send_held()
            turns.set_wait_hooks(None)
            turns.give_back()
            if owed is not None:  # the turn ended early (another worker waits for it)
                owed.settle()

    def _answer(self, job: Any) -> Any:
        """Run the app for one request and hand its answer to the request's coroutine, at once or
        once the write it left uncommitted is committed; returns that write's debt, or None."""
        future, environ, loop, send, close, _queued = job
        if not future.set_running_or_notify_cancel():
            return None
        turns = self.turns
        turns.allow_deferred_commits(True)
        try:
            try:
                answer = self.run_app(environ, loop, send, close)
            finally:
                debt = turns.debt()
                turns.allow_deferred_commits(False)
        except BaseException as error:  # handed to the request's coroutine
            future.set_exception(error)
            return debt
        if debt is None:
            self._hold_or_send(functools.partial(future.set_result, answer))
        else:
            debt.hold(functools.partial(future.set_result, answer),
                      lambda error: future.set_result(commit_failed(error)))
        return debt

    def _settle(self, debt: Any) -> None:
        """Commit, in this worker's turn, what the held answers wait for. Requests that arrive
        meanwhile wait in the backlog for this worker, as they would behind any request: a worker
        of their own would only wait for the writer lock behind this COMMIT, and then for the
        turn, each handing the backlog on to yet another."""
        self.turns.set_wait_hooks(None)
        self._settling_since = time.monotonic()
        try:
            debt.settle()
        finally:
            self._settling_since = None
            self.turns.set_wait_hooks(self._hand_over_backlog, self._resume)

    def _hand_over_backlog(self) -> None:
        """A worker in its turn waits on another thread: another takes the backlog meanwhile, and
        the answers kept go out."""
        self._send_held()
        with self._lock:
            self._runners -= 1
        self._start_runner()

    def _resume(self) -> None:
        with self._lock:
            self._runners += 1

    def _hand_over_late(self, loop: Any) -> None:
        """On the loop: when the backlog's oldest request has waited past the patience (a slow
        request holds the turn), a worker of its own takes it, and then the rest."""
        self._watch = None
        patience = self.turns.patience
        oldest = self._oldest_queued()
        if oldest is None:
            return
        now = time.monotonic()
        # Only when the holder is slow: one that answers request after request, each quickly, is
        # making its way through the backlog, and another worker would only take turns with it.
        since = self.turns.held_since()
        if since is None:
            since = self._settling_since
        busy_until = since + patience if since is not None else now
        if now - oldest >= patience and now >= busy_until:
            self._start_runner()
            oldest = self._oldest_queued()
            if oldest is None:
                return
        self._watch = loop.call_later(max(oldest + patience - now, busy_until - now, 0.001), self._hand_over_late, loop)

    def _oldest_queued(self) -> Any:
        """When the backlog's oldest request joined it (time.monotonic()), or None if it is empty."""
        with self._lock:
            return self._backlog[0][5] if self._backlog else None

    def run_app(self, environ: Any, loop: Any, send: Any, close: Any) -> Any:
        started: list[tuple[int, list[tuple[bytes, bytes]]]] = []

        def start_response(status, headers, exc_info=None):
            if exc_info is not None and started:
                raise exc_info[1].with_traceback(exc_info[2])
            encoded = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers]
            if close:
                encoded.append((b"connection", b"close"))
            started[:] = [(int(status[:3]), encoded)]
            return lambda data: chunks.append(data)  # the legacy write() callable

        chunks: list[bytes] = []
        try:
            result = self.wsgi_app(environ, start_response)
        except Exception:
            log.exception("unhandled exception in the WSGI app")
            return 500, [(b"content-type", b"application/json")], [INTERNAL_ERROR]
        try:
            size = sum(len(chunk) for chunk in chunks)
            streaming = False
            for chunk in result:
                if not chunk:
                    continue
                if streaming:
                    self.send_from_thread(loop, send, {"type": "http.response.body", "body": chunk, "more_body": True})
                    continue
                chunks.append(chunk)
                size += len(chunk)
                if size > STREAM_AFTER:
                    status, headers = started[0]
                    self.send_from_thread(loop, send, {"type": "http.response.start", "status": status,
                                                       "headers": headers})
                    self.send_from_thread(loop, send, {"type": "http.response.body", "body": b"".join(chunks),
                                                       "more_body": True})
                    chunks, streaming = [], True
        finally:
            if hasattr(result, "close"):
                result.close()
        if streaming:
            self.send_from_thread(loop, send, {"type": "http.response.body", "body": b""})
            return None
        if not started:
            log.error("the WSGI app returned without starting a response")
            return 500, [(b"content-type", b"application/json")], [INTERNAL_ERROR]
        status, headers = started[0]
        return status, headers, chunks

    @staticmethod
    def send_from_thread(loop: Any, send: Any, message: Any) -> None:
        with turns.waiting_on_others():  # a no-op for a thread that holds no turn
            asyncio.run_coroutine_threadsafe(send(message), loop).result()


async def read_request_body(scope: Any, receive: Any, limit: int,
                            timeout: float | None = DEFAULT_BODY_TIMEOUT) -> tuple[bytes, int]:
    """(body, declared length). A body declared larger than `limit` is left unread; one sent
    without a length is read until it passes `limit`, and its declared length is then the part
    read (enough for the app to refuse it). Raises BodyTimeout when, in any period of `timeout`
    seconds, less than MIN_BODY_BYTES_PER_SECOND a second arrived (None: no timeout)."""
    declared = None
    chunked = False
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                declared = int(value)
            except ValueError:
                declared = None
            break
        if name == b"transfer-encoding":
            chunked = True
    if declared is not None and limit is not None and declared > limit:
        return b"", declared
    if declared == 0 or (declared is None and not chunked):
        # No body (most GETs): HTTP/1.1 says none follows, and uvicorn has nothing to hand over
        # but an empty message. Not waiting for it saves a timer and a task per request on the
        # loop; a disconnect is still seen when the answer is sent.
        return b"", 0
    pieces, size = [], 0
    period_start, period_bytes = time.monotonic(), 0
    while True:
        if timeout:
            # Within the period, enough to wait for; past it, the period's bytes decide.
            remaining = period_start + timeout - time.monotonic()
            try:
                message = await asyncio.wait_for(receive(), max(remaining, 0.001))
            except asyncio.TimeoutError:  # noqa: UP041 - not the builtin TimeoutError before Python 3.11
                raise BodyTimeout() from None
            now = time.monotonic()
            period_bytes += len(message.get("body", b""))
            if now - period_start >= timeout:
                if period_bytes < MIN_BODY_BYTES_PER_SECOND * timeout and message.get("more_body", False):
                    raise BodyTimeout()
                period_start, period_bytes = now, 0
        else:
            message = await receive()
        if message["type"] == "http.disconnect":
            break
        piece = message.get("body", b"")
        if piece:
            pieces.append(piece)
            size += len(piece)
            if limit is not None and size > limit:
                return b"", size
        if not message.get("more_body", False):
            break
    body = b"".join(pieces)
    return body, len(body) if declared is None else declared


def build_environ(scope: Any, body: bytes, declared: int) -> JSONDict:
    """The WSGI environ of an ASGI HTTP scope (PEP 3333: text as latin-1, headers as HTTP_*)."""
    server = scope.get("server") or ("localhost", 80)
    client = scope.get("client")
    root_path = scope.get("root_path", "")
    path = scope["path"]
    if root_path and path.startswith(root_path):
        path = path[len(root_path):]
    environ = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": root_path.encode("utf-8").decode("latin-1"),
        "PATH_INFO": path.encode("utf-8").decode("latin-1"),
        "QUERY_STRING": scope["query_string"].decode("latin-1"),
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1]) if server[1] is not None else "80",
        "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
        "CONTENT_LENGTH": str(declared if declared is not None else len(body)),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    if client:
        environ["REMOTE_ADDR"], environ["REMOTE_PORT"] = client[0], str(client[1])
    for raw_name, raw_value in scope["headers"]:
        name = raw_name.decode("latin-1")
        value = raw_value.decode("latin-1")
        if name == "content-type":
            environ["CONTENT_TYPE"] = value
            continue
        if name in ("content-length", "transfer-encoding"):
            continue  # the body is handed over whole, with its length
        key = "HTTP_" + name.upper().replace("-", "_")
        # Repeated headers are joined, as WSGI servers join them.
        environ[key] = f"{environ[key]},{value}" if key in environ else value
    return environ
