"""The HTTP server of `chat-appliance serve`: one event loop (uvicorn) in front of the Flask app.

Requests for `/api/v1/events` and `/json/events` (GET and DELETE) are answered here, natively
on the loop, by the same handler as the Flask views (web/longpoll.py): a waiting long poll is a
future, a timer and a small task watching for the client's disconnect, and holds no thread.
Everything else goes to the Flask WSGI app, run in a pool of `--threads` worker threads
(wsgi_bridge). This is the split Zulip itself makes between
Tornado (events) and Django (the rest), in one process.

On SIGTERM or SIGINT the server stops accepting connections, answers every waiting poll with a
heartbeat, waits (up to GRACEFUL_SECONDS) for requests in progress, and then the caller writes the
event queues to the instance folder (see cli.cmd_serve).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

import asyncio
import contextlib
import ctypes
import gc
import logging
import signal
import threading
import time
from urllib.parse import parse_qsl

import uvicorn
from werkzeug.wrappers import Request

from chat_appliance.db.admission import turns
from chat_appliance.db.connection import backend, close_connection
from chat_appliance.lib.database_outage import DATABASE_UNAVAILABLE_MESSAGE, RETRY_AFTER_SECONDS, note_unavailable
from chat_appliance.lib.errors import JsonableError
from chat_appliance.server import connections
from chat_appliance.server.tls import HSTS_HEADER, TlsListeners
from chat_appliance.server.wsgi_bridge import WSGIBridge, build_environ, read_request_body
from chat_appliance.web.auth import authenticate_basic, cached_basic_user
from chat_appliance.web.context import EXTENSION
from chat_appliance.web.longpoll import Answer, EventsBody, Poll
from chat_appliance.web.proxy import client_address

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict

log = logging.getLogger("chat_appliance")
request_log = logging.getLogger("chat_appliance.requests")

# Paths answered on the loop, and whether they authenticate by session (/json) or API key.
EVENTS_PATHS = {"/api/v1/events": False, "/json/events": True}
EVENTS_METHODS = ("GET", "DELETE")
# A DELETE /events body holds one queue id; anything much larger is not a client of ours.
MAX_EVENTS_BODY = 64 * 1024
# How long a stop waits for requests in progress, so that SIGTERM ends the process within 5 s.
GRACEFUL_SECONDS = 3
# Idle keep-alive connections are closed after this long (waitress's channel_timeout was 120 s).
KEEP_ALIVE_SECONDS = 120
# First-generation threshold of Python's cyclic garbage collector while serving (default 700).
GC_THRESHOLD = 20_000
# Message objects whose JSON is kept for the polls still to answer (a fan-out shares a few).
MESSAGE_JSON_CACHE_SIZE = 256
# Queue garbage collection runs at least this often even when nobody registers or polls.
GC_INTERVAL_SECONDS = 10


# --- memory ---------------------------------------------------------------------------------
# glibc gives each thread that allocates its own malloc arena (up to 8 per core), and memory freed
# in one stays mapped: 16 concurrent senders grew the server by 20 MiB; with two arenas, by 10.
# (Trimming the heap afterwards, malloc_trim, gave nothing more back by itself; it does once the
# connections that held the memory are closed: POOL_SWEEP_SECONDS.) Since workers run the app
# in turns (lib/admission.py) they rarely allocate at the same moment, and one arena saved about
# 1 MiB more than two at the same speed.
MALLOC_ARENAS = 1
_M_ARENA_MAX = -8
# Blocks at least this big are mapped on their own and unmapped when freed. glibc's default
# threshold starts at 128 KiB but rises to the size of each such block freed (up to 32 MiB), after
# which an image's decode buffers and an upload's body came from the heap and stayed there once
# freed: a small team's afternoon with a few photos left the server 26 MiB bigger. Setting it
# fixes it.
MMAP_THRESHOLD_BYTES = 256 * 1024
_M_MMAP_THRESHOLD = -3
# Every this many seconds, pooled database connections that no request took since the last
# sweep are closed, all but POOL_KEEP (Runtime.close_unused_connections), and the C heap is
# trimmed if any were: after 16 concurrent senders the pool held 19 SQLite connections, and
# closing those past 4 and trimming gave back 3 MiB of idle memory.
POOL_SWEEP_SECONDS = 2
POOL_KEEP = 4


def _libc():
    # The symbols the interpreter already has loaded, the C library's among them. Looking the
    # library up by name (ctypes.util.find_library) runs `ldconfig -p` in a subprocess: 5 ms of
    # every start.
    try:
        libc = ctypes.CDLL(None)
    except (OSError, TypeError):  # no such handle (Windows)
        return None
    return libc if hasattr(libc, "mallopt") else None


_LIBC = _libc()


def limit_malloc_arenas() -> None:
    """Cap glibc's malloc arenas and fix its mmap threshold (no effect on other C libraries). Call
    before threads start."""
    if _LIBC is not None:
        _LIBC.mallopt(_M_ARENA_MAX, MALLOC_ARENAS)
        _LIBC.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)


def release_unused_memory(runtime: Any) -> int:
    """Close the pool's unused connections (see POOL_SWEEP_SECONDS) and hand the memory they
    held back to the operating system (glibc's malloc_trim; elsewhere nothing more)."""
    closed = runtime.close_unused_connections(POOL_KEEP)
    if closed and _LIBC is not None and hasattr(_LIBC, "malloc_trim"):
        _LIBC.malloc_trim(0)
    return closed


class ChatApplianceASGI:
    """The ASGI application: native events endpoints, the Flask app for everything else."""

    def __init__(self, flask_app, threads):
        self.flask_app = flask_app
        self.state = flask_app.extensions[EXTENSION]
        self.queues = self.state.queues
        backend = self.state.runtime.backend
        self.wsgi = WSGIBridge(flask_app, threads, lambda: flask_app.config["MAX_CONTENT_LENGTH"],
                               turns=turns if backend.WORKERS_TAKE_TURNS else None,
                               body_timeout=flask_app.config.get("REQUEST_READ_TIMEOUT_SECONDS"))
        # One pool for the Flask app and for the rare events request that needs the database.
        self.executor = self.wsgi.executor
        # id(shared message dict) -> (the dict, its JSON); used on the loop thread only.
        self.message_json = {}

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            session = EVENTS_PATHS.get(scope["path"])
            if session is not None and scope["method"] in EVENTS_METHODS:
                return await self.events(scope, receive, send, session)
            return await self.wsgi(scope, receive, send)
        # No websockets: refuse the upgrade.
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1000})

    # --- GET/DELETE /events ------------------------------------------------------------------

    def cached_user(self, headers: JSONDict, session: bool) -> Any:
        """The user when no database is needed to know it (Basic credentials in the cache), else None."""
        return None if session else cached_basic_user(headers.get("authorization"))

    def authenticate_in_worker(self, headers: JSONDict, session: bool) -> Any:
        """The user of an events request from its headers (lower-case names): HTTP Basic with the
        API key for /api/v1, the app's session check for /json. Raises the Zulip 401 errors. Runs
        in a worker thread, since it may query the database; the thread's connection is closed after."""
        try:
            if session:
                return self.state.session_authenticator(headers)
            return authenticate_basic(headers.get("authorization"))
        finally:
            close_connection()

    async def events(self, scope: Any, receive: Any, send: Any, session: bool) -> None:
        """GET /events (the long poll) and DELETE /events: authenticated here, answered by the app's
        long-poll handler, the same one the Flask views use."""
        started = time.perf_counter()
        method = scope["method"]
        headers: dict[str, str] = {}
        for name, value in scope["headers"]:
            name = name.decode("latin-1").lower()
            # Repeated headers are joined as WSGI servers join them.
            headers[name] = f"{headers[name]},{value.decode('latin-1')}" if name in headers else value.decode("latin-1")
        handler = self.state.longpoll
        user = None
        try:
            body, declared = await read_request_body(scope, receive, MAX_EVENTS_BODY)
            if declared > MAX_EVENTS_BODY:
                raise JsonableError("Request Entity Too Large", http_status=413)
            try:
                user = self.cached_user(headers, session)
                if user is None:
                    loop = asyncio.get_running_loop()
                    user = await loop.run_in_executor(self.executor, self.authenticate_in_worker, headers, session)
            except JsonableError as error:
                answer = handler.refused(error, client_ip=self.client_ip(scope, headers), session=session)
            else:
                answer = handler.start(method, user, request_values(scope, body), session=session)
                if isinstance(answer, Poll):
                    answer = await answer.wait_async(disconnected=lambda: wait_for_disconnect(receive))
                    if answer is None:
                        # The client went away while waiting: nothing to send, its events stay queued.
                        self.log_request(method, scope["path"], 499, started, user)
                        return
        except JsonableError as error:
            answer = handler.error(error, [], session=session)
        except Exception as error:
            if backend().unavailable(error):  # as the Flask app answers an outage (app.py)
                note_unavailable(error)
                answer = Answer(503, JsonableError(DATABASE_UNAVAILABLE_MESSAGE, code="DATABASE_UNAVAILABLE",
                                                   http_status=503).to_dict(),
                                [("Retry-After", str(RETRY_AFTER_SECONDS))])
            else:
                log.exception("unhandled exception on %s %s", method, scope["path"])
                answer = Answer(500, JsonableError("Internal server error", code="INTERNAL_SERVER_ERROR",
                                                   http_status=500).to_dict())
        payload = (self.encode(answer.body) + "\n").encode()
        await send({"type": "http.response.start", "status": answer.status, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
            *((name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in answer.headers)]})
        await send({"type": "http.response.body", "body": payload})
        self.log_request(method, scope["path"], answer.status, started, user)

    def client_ip(self, scope: Any, headers: JSONDict) -> str:
        """The client's address, through trusted proxies as web/proxy.py's middleware finds it."""
        peer = (scope.get("client") or ("",))[0]
        trusted = set(self.flask_app.config.get("TRUSTED_PROXIES") or ())
        return client_address(peer, headers.get("x-forwarded-for", ""), trusted)

    def dumps(self, value: Any) -> str:
        """JSON with the Flask app's settings (and its fallback for dates and the like), compact as jsonify is."""
        return self.flask_app.json.dumps(value)

    def encode(self, payload: Any) -> str:
        """A response body. A poll's events are encoded one by one, and the message object that
        a fan-out shares between queues (see QueueManager.deliver_message) is encoded once, not
        once per queue. The result is the text jsonify would produce."""
        if not isinstance(payload, EventsBody):
            return self.dumps(payload)
        events = ",".join(self.encode_event(event) for event in payload.events)
        tail = f',"ignored_parameters_unsupported":{self.dumps(sorted(payload.ignored))}' if payload.ignored else ""
        return f'{{"result":"success","msg":"","events":[{events}],"queue_id":{self.dumps(payload.queue_id)}{tail}}}'

    def encode_event(self, event: JSONDict) -> str:
        message = event.get("message") if event.get("type") == "message" else None
        if not isinstance(message, dict):
            return self.dumps(event)
        cached = self.message_json.get(id(message))
        if cached is None or cached[0] is not message:
            if len(self.message_json) >= MESSAGE_JSON_CACHE_SIZE:
                self.message_json.clear()
            cached = self.message_json[id(message)] = (message, self.dumps(message))
        fields = ",".join(f'{self.dumps(key)}:{cached[1] if key == "message" else self.dumps(value)}'
                          for key, value in event.items())
        return f"{{{fields}}}"

    def log_request(self, method: str, path: str, status: int, started: float, user: Any) -> None:
        """The same request log line the Flask app writes."""
        if self.flask_app.config["LOG_REQUESTS"]:
            request_log.info("%s %s %s %.1fms %s", method, path, status, (time.perf_counter() - started) * 1000,
                             user.email if user is not None else "-")


def request_values(scope: Any, body: Any) -> JSONDict:
    """Query string and form body merged, the body winning: werkzeug parses both, exactly as
    the Flask views' lib.params.request_values sees them."""
    if not body:
        # The long poll's common case, without building a werkzeug request: the first value of
        # each name wins, as in werkzeug's MultiDict.
        values: dict[str, str] = {}
        for name, value in parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True):
            values.setdefault(name, value)
        return values
    request = Request(build_environ(scope, body, len(body)))
    values = dict(request.args.items())
    values.update(request.form.items())
    return values


async def wait_for_disconnect(receive: Any) -> None:
    """Completes when the client closes its connection (the body has been read already)."""
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return


class Server(uvicorn.Server):
    """uvicorn's server, attached to the queue manager: fan-outs run on its loop; a stop
    answers the waiting polls first; the signal that stopped it is not re-raised (the caller
    exits cleanly after saving the queues)."""

    def __init__(self, config, queues, on_started=None, runtime=None, plain=None):
        super().__init__(config)
        self.queues = queues
        self.on_started = on_started
        self.last_gc = queues.clock.monotonic()
        self.runtime = runtime
        self.last_sweep = self.last_gc
        # With TLS on: (uvicorn server of the HTTP port, its listening socket), started and
        # stopped with this one, on the same loop.
        self.plain = plain

    async def startup(self, sockets: Any = None) -> None:
        self.queues.attach_loop(asyncio.get_running_loop())
        await super().startup(sockets=sockets)
        if self.started and self.plain is not None:
            plain_server, plain_socket = self.plain
            await plain_server.startup(sockets=[plain_socket])
        if self.started and self.on_started is not None:
            self.on_started()

    async def on_tick(self, counter: Any) -> Any:
        now = self.queues.clock.monotonic()
        if now - self.last_gc >= GC_INTERVAL_SECONDS:
            self.last_gc = now
            self.queues.collect_garbage(force=True)
        if self.runtime is not None and now - self.last_sweep >= POOL_SWEEP_SECONDS:
            self.last_sweep = now
            try:
                release_unused_memory(self.runtime)
            except Exception:  # housekeeping: a failure must not stop the server's loop
                log.exception("closing unused database connections failed")
        return await super().on_tick(counter)

    async def shutdown(self, sockets: Any = None) -> None:
        self.queues.begin_shutdown()
        if self.plain is not None and self.plain[0].started:
            await self.plain[0].shutdown(sockets=[self.plain[1]])
        await super().shutdown(sockets=sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[Any]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


def _protocol(settings: Any) -> Any:
    return connections.protocol_class(header_timeout=settings.get("REQUEST_READ_TIMEOUT_SECONDS"),
                                      max_per_client=settings.get("MAX_CONNECTIONS_PER_CLIENT"),
                                      trusted_proxies=settings.get("TRUSTED_PROXIES"))


def _plain_port(tls: TlsListeners, settings: Any) -> Any:
    """The uvicorn server of the HTTP port (tls.PlainPort), ready to start on the running loop."""
    config = uvicorn.Config(tls.plain_app, http=_protocol(settings), lifespan="off", access_log=False,
                            log_config=None, server_header=False, headers=[("server", "chat-appliance")],
                            timeout_keep_alive=KEEP_ALIVE_SECONDS, timeout_graceful_shutdown=GRACEFUL_SECONDS,
                            proxy_headers=False)
    config.load()
    server = uvicorn.Server(config)
    server.lifespan = config.lifespan_class(config)
    return server, tls.http_socket


def run(flask_app: Any, *, host: str, port: Any, threads: Any, on_started: Any = None,
        tls: TlsListeners | None = None) -> Any:
    """Serve until SIGINT or SIGTERM; returns after the loop has stopped. With `tls`, the app is
    served over HTTPS on tls.https_socket, every response with Strict-Transport-Security, and
    the HTTP port runs beside it (server/tls.py)."""
    asgi_app = ChatApplianceASGI(flask_app, threads)
    settings = flask_app.config
    headers = [("server", "chat-appliance")] + ([HSTS_HEADER] if tls is not None else [])
    config = uvicorn.Config(
        asgi_app, host=host, port=port, loop="auto", http=_protocol(settings),
        lifespan="off", access_log=False, log_config=None, server_header=False,
        headers=headers, timeout_keep_alive=KEEP_ALIVE_SECONDS,
        timeout_graceful_shutdown=GRACEFUL_SECONDS, limit_concurrency=None, backlog=4096,
        proxy_headers=False)
    if tls is not None:
        config.load()
        # The listener context whose sni_callback picks the certificate currently served, so
        # that a renewed or reloaded one takes effect at the next handshake (server/tls.py).
        config.ssl = tls.served.listener
    queues = flask_app.extensions[EXTENSION].queues
    server = Server(config, queues, on_started=on_started, runtime=flask_app.extensions[EXTENSION].runtime,
                    plain=_plain_port(tls, settings) if tls is not None else None)
    # Thousands of waiting polls are thousands of live objects (tasks, futures, connections).
    # Python's cyclic collector would walk all of them again and again while a fan-out allocates;
    # freezing what start-up made and collecting the young generation less often keeps those
    # walks short. Memory stays bounded: reference counting frees almost everything here.
    # Only the young generations are collected first: a full collection of the 60,000 objects
    # start-up leaves found nothing to free and took 33 ms, a tenth of the start.
    # `serve` starts with the collector off (cli/serve.py), as start-up makes no cyclic garbage
    # worth a walk: then even the young generations hold all of start-up, and are frozen as
    # they are.
    if gc.isenabled():
        gc.collect(1)
    gc.freeze()
    gc.set_threshold(GC_THRESHOLD, 50, 100)
    gc.enable()
    try:
        server.run(sockets=[tls.https_socket] if tls is not None else None)
    finally:
        queues.detach_loop()
        # The loop has stopped and answered what it could: the workers end once their jobs are done.
        asgi_app.executor.shutdown(wait=True)
    return server
