"""The Flask (WSGI) app behind the event loop: one trip to a worker thread per request.

The loop reads the request body, builds the WSGI environ and hands both to a worker thread, which
runs the whole app and returns the status, headers and body; the loop writes them out. A request
thus costs one hand-over to a thread and one back. (a2wsgi, used before, crossed between loop and
thread for every piece of the body and of the response, and a trivial request took twice as long
as under waitress; see BENCHMARKS.md, "Speed work".)

Large answers (file downloads, exports) are not held whole: past STREAM_AFTER bytes the worker
sends each further piece through the loop as it comes. A body larger than the app's
MAX_CONTENT_LENGTH is not read: the app sees its declared length and answers 413 as it would
under any WSGI server, and the connection is closed after the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import asyncio
import io
import logging
import sys

from chat_appliance.db.admission import turns
from chat_appliance.server.workers import StackExecutor

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict

log = logging.getLogger("chat_appliance")

# A response is sent in one piece up to this size; past it, piece by piece as the app yields.
STREAM_AFTER = 1024 * 1024
INTERNAL_ERROR = b'{"result":"error","msg":"Internal server error","code":"INTERNAL_SERVER_ERROR"}\n'


class WSGIBridge:
    """An ASGI callable for HTTP requests that runs a WSGI app in a pool of `threads` threads."""

    def __init__(self, wsgi_app, threads, max_body, turns=None):
        self.wsgi_app = wsgi_app
        # lib/admission.Turns when workers run the app one at a time (the SQLite backend), or None.
        self.turns = turns
        self.executor = StackExecutor(max_workers=threads, thread_name_prefix="wsgi")
        # A callable: the largest body the app accepts now (None: no limit).
        self.max_body = max_body

    async def __call__(self, scope, receive, send):
        limit = self.max_body()
        body, declared = await read_request_body(scope, receive, limit)
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


async def read_request_body(scope: Any, receive: Any, limit: int) -> tuple[bytes, int]:
    """(body, declared length). A body declared larger than `limit` is left unread; one sent
    without a length is read until it passes `limit`, and its declared length is then the part
    read (enough for the app to refuse it)."""
    declared = None
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                declared = int(value)
            except ValueError:
                declared = None
            break
    if declared is not None and limit is not None and declared > limit:
        return b"", declared
    pieces, size = [], 0
    while True:
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
