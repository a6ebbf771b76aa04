"""The Flask (WSGI) app behind the event loop: one trip to a worker thread per request.

The loop reads the request body, builds the WSGI environ and hands both to a worker thread, which
runs the whole app and returns the status, headers and body; the loop writes them out. A request
thus costs one hand-over to a thread and one back. (a2wsgi, used before, crossed between loop and
thread for every piece of the body and of the response, and a trivial request took twice as long
as under waitress; see BENCHMARKS.md, "Speed work".)

Large answers (file downloads, exports) are not held whole: past STREAM_AFTER bytes the worker
sends each further piece through the loop as it comes. A body larger than the app's
MAX_CONTENT_LENGTH is not read: the app sees its declared length and answers 413 as it would
under any WSGI server, and the connection is closed after the answer. A body that does not
arrive in time (read_request_body) is answered 408 and its connection closed, without the app.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import asyncio
import io
import json
import logging
import sys
import time

from chat_appliance.db.admission import turns
from chat_appliance.server.workers import StackExecutor

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict

log = logging.getLogger("chat_appliance")

# A response is sent in one piece up to this size; past it, piece by piece as the app yields.
STREAM_AFTER = 1024 * 1024
INTERNAL_ERROR = b'{"result":"error","msg":"Internal server error","code":"INTERNAL_SERVER_ERROR"}\n'
# A body must progress by this many bytes a second, on average over each period of the read
# timeout (REQUEST_READ_TIMEOUT_SECONDS): slow links upload, a trickle does not hold on.
MIN_BODY_BYTES_PER_SECOND = 1024
DEFAULT_BODY_TIMEOUT = 60
BODY_TIMEOUT_ERROR = json.dumps({"result": "error", "code": "REQUEST_TIMEOUT",
                                 "msg": "The request body arrived too slowly."}).encode() + b"\n"


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
        answer = await loop.run_in_executor(self.executor, self.run, environ, loop, send, close)
        if answer is None:
            return  # streamed from the worker
        status, headers, chunks = answer
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"".join(chunks)})

    def run(self, environ: Any, loop: Any, send: Any, close: Any) -> Any:
        """In a worker thread: the app's whole answer as (status, headers, body pieces), or None
        once a large answer has been streamed through the loop. The app runs in its turn, if
        workers take turns (lib/admission.py)."""
        if self.turns is None:
            return self.run_app(environ, loop, send, close)
        self.turns.take()
        try:
            return self.run_app(environ, loop, send, close)
        finally:
            self.turns.give_back()

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
        # loop (issue 32); a disconnect is still seen when the answer is sent.
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
