"""The application factory."""

import logging
import os
import threading
import time
import traceback
from functools import partial
from pathlib import Path

from flask import g, request
from werkzeug.exceptions import HTTPException

from chat_appliance.lib.uploads import UploadStore
from chat_appliance.api import BLUEPRINTS, ROOT_BLUEPRINTS
from chat_appliance.api.routes import ROUTES
from chat_appliance.api.server import ZULIP_FEATURE_LEVEL, ZULIP_VERSION
from chat_appliance.web.context import EXTENSION
from chat_appliance.lib.auth_backends import auth_settings
from chat_appliance.config import DEFAULTS, ConfigError, Limits, check_shard_id, database_url_for, instance_secret
from chat_appliance.db.runtime import ExpiringCache
from chat_appliance.db.connection import backend, check_database, close_connection, init_database, migrate
from chat_appliance.events import bus
from chat_appliance.events.queues import QueueManager
from chat_appliance.web import rate_limit
from chat_appliance.web.auth import CREDENTIALS_MARKER, set_credentials_marker
from chat_appliance.lib.disk import DISK_FULL_MESSAGE, failed_write_status, is_disk_full, note_disk_full
from chat_appliance.lib.database_outage import (DATABASE_UNAVAILABLE_MESSAGE, RETRY_AFTER_SECONDS, note_available,
                                                note_unavailable, should_probe)
from chat_appliance.lib.errors import JsonableError, RateLimitedError
from chat_appliance.models.limits import TextTooLongError
from chat_appliance.web.fast_routing import API_PREFIX, JSON_PREFIX, add_routes, routing_app
from chat_appliance.web.proxy import TrustedProxyMiddleware
from chat_appliance.web.response import FastJSONProvider, json_error
from chat_appliance.web.longpoll import LongPoll
from chat_appliance.web.sessions import authenticate_session_headers
from chat_appliance.lib.cache_events import invalidate_messages_on_event, invalidate_on_event
from chat_appliance.db.runtime import activate, deactivate
from chat_appliance.db.admission import turns
from chat_appliance.workers import WORKERS, WorkerContext

log = logging.getLogger("chat_appliance")
request_log = logging.getLogger("chat_appliance.requests")

# How long a shard waits for its name to be free (a killed predecessor's lock) before refusing.
SHARD_NAME_WAIT_SECONDS = 10


class AppState:
    """What one app owns, kept on app.extensions["chat_appliance"]: its configuration as the
    actions take it, its uploaded files, its runtime (database, backend, event listeners, and
    every cache: credentials, sessions, render contexts, message objects), its event queues and
    the handler of their long polls. `close_app` releases it all."""

    def __init__(self, config, runtime):
        self.limits = Limits.from_config(config)
        self.password_method = config["PASSWORD_HASH_METHOD"]
        # The ways to sign in (lib/auth_backends.py), checked here so that a wrong setting stops
        # the start instead of failing the first sign-in.
        self.auth = auth_settings(config)
        # Sign-in states and desktop tokens already taken (webclient/social_auth.py): each works once.
        self.used_sign_in_tokens = ExpiringCache(100_000)
        instance = Path(config["INSTANCE_PATH"])
        self.secret = instance_secret(instance)
        self.uploads = UploadStore(instance / "uploads", self.secret)
        # Outgoing mail, sent by its own thread; `chat-appliance dev` keeps it in memory instead
        # when no SMTP server is configured (shown at /emails). Built when first used: most
        # servers send no mail in their first minutes, or ever.
        self.mailer = OnFirstUse(lambda: build_mailer(config))
        self.runtime = runtime
        self.queues = QueueManager(idle_seconds=config["EVENT_QUEUE_IDLE_SECONDS"],
                                   heartbeat_seconds=config["EVENT_HEARTBEAT_SECONDS"],
                                   shard_id=config.get("SHARD_ID"))
        # The background workers (workers/), by name, each built with the first event it
        # listens to (register_workers).
        self.workers = {}
        # Rate-limit counts (lib/rate_limit.py): in the app's memory, gone when it closes.
        self.rate_limiter = rate_limit.RateLimiter()
        # GET/DELETE /events for both transports (web/longpoll.py); `config` is read per request.
        self.longpoll = LongPoll(self, config)
        # How the event loop's native /json/events finds the web client's session from the
        # request's headers (a callable(headers) -> user, raising Zulip's 401 errors).
        self.session_authenticator = authenticate_session_headers


def blueprint_mounts():
    """(module, blueprint attribute, register_blueprint options) of every blueprint the app
    mounts, in order: api/'s under /api/v1 (and so /json), its root ones, and the web client's
    pages."""
    for module, attribute in BLUEPRINTS:
        module = f"chat_appliance.api.{module}"
        # The web client calls the same views under /json (create_url_adapter).
        yield module, attribute, {"url_prefix": API_PREFIX}
    for module, attribute in ROOT_BLUEPRINTS:
        yield f"chat_appliance.api.{module}", attribute, {}
    yield "chat_appliance.webclient.views", "bp", {}
    yield "chat_appliance.webclient.dev_emails", "bp", {}
    yield "chat_appliance.webclient.social_auth", "bp", {}



def create_app(config=None, *, dev_mode=False, opened=None):
    """A Flask app for one instance. `config` overrides the documented defaults (config.py).
    `dev_mode` (only `chat-appliance dev` sets it; no configuration key can) turns on
    POST /dev_fetch_api_key. `opened`: the Runtime of this configuration's database, already
    opened and migrated by the caller (`serve`, through open_instance), which the app then uses
    instead of opening the database a second time."""
    # No Flask static folder: the web client's views serve its files and KaTeX's (webclient/views.py).
    app = routing_app(__name__, static_folder=None)
    app.json = FastJSONProvider(app)
    app.json.sort_keys = False
    app.json.compact = True
    open_app(app, config, dev_mode=dev_mode, opened=opened)
    bind_runtime(app)
    add_routes(app, ROUTES)
    register_error_handlers(app)
    register_request_hooks(app)
    app.wsgi_app = TrustedProxyMiddleware(app.wsgi_app, app.config)
    return app


def open_app(app, config=None, *, dev_mode=False, opened=None):
    """Configure `app` for an instance and open its state (database, queues, listeners). A closed
    app may be opened again on another instance (the tests do, instead of building the URL map
    again for every test). `opened`: as create_app takes it."""
    app.config.update(DEFAULTS)
    app.config.update(config or {})
    app.config["DEV_MODE"] = bool(dev_mode)
    if not app.config["DATABASE_URL"]:
        app.config["DATABASE_URL"] = database_url_for(app.config["INSTANCE_PATH"])
    if app.config["MAX_CONTENT_LENGTH"] is not None:
        # A request body must hold the largest allowed upload, plus its multipart framing.
        largest_upload = (app.config["MAX_FILE_UPLOAD_SIZE_MIB"] + 1) * 1024 * 1024
        app.config["MAX_CONTENT_LENGTH"] = max(app.config["MAX_CONTENT_LENGTH"], largest_upload)
    check_shard_id(app.config)
    migrated = opened is not None
    if opened is None:
        opened = init_database(app.config["DATABASE_URL"], pool_size=app.config["DATABASE_POOL_SIZE"],
                               pool_timeout=app.config["DATABASE_POOL_TIMEOUT_SECONDS"],
                               inline_image_preview=app.config["INLINE_IMAGE_PREVIEW"])
    state = app.extensions[EXTENSION] = AppState(app.config, opened)
    if not migrated:
        migrate()
    set_credentials_marker(state.runtime, os.path.join(app.config["INSTANCE_PATH"], CREDENTIALS_MARKER))
    bus.add_listener(invalidate_on_event, state.runtime)
    bus.add_listener(invalidate_messages_on_event, state.runtime)
    if app.config.get("SHARD_ID"):
        join_shards(app)
    else:
        bus.add_listener(state.queues, state.runtime)
    register_workers(app)
    return app


def join_shards(app):
    """This app is one shard of several on one PostgreSQL database (docs/scaling.md): its queues
    receive every shard's events through LISTEN/NOTIFY (events/shards.py) instead of from the
    local bus, its caches keep nothing (another shard's change would leave them stale), and rate
    limits count in the database."""
    # Only a shard needs these (LISTEN/NOTIFY, advisory locks, rate limits in the database).
    from chat_appliance.events.shards import Leadership, ShardLink, shard_lock_key
    from chat_appliance.web.shared_rate_limit import SharedRateLimiter

    state = app.extensions[EXTENSION]
    url = app.config["DATABASE_URL"]
    backend_module = state.runtime.backend

    def connect():
        return backend_module.autocommit_connection(url)

    # One process per shard name, for as long as it runs (a dead one's lock goes with its
    # connection; a restart right after kill -9 may wait a moment for PostgreSQL to notice).
    name_lock = Leadership(connect, key=shard_lock_key(app.config["SHARD_ID"]))
    deadline = time.monotonic() + SHARD_NAME_WAIT_SECONDS
    while not name_lock.held():
        if time.monotonic() > deadline:
            name_lock.release()
            raise ConfigError(f"another process is already serving shard {app.config['SHARD_ID']!r} "
                              "on this database: give each shard its own --shard-id")
        time.sleep(0.5)
    state.runtime.share_caches(ShardLink.stale_check)
    link = ShardLink(app.config["SHARD_ID"], state.queues, connect)
    link.name_lock = name_lock
    link.remote_listeners += [invalidate_on_event, invalidate_messages_on_event]
    state.rate_limiter = SharedRateLimiter(connect)
    state.runtime.shard = link
    link.start(state.runtime)


def bind_runtime(app):
    """Every request of this app works with its own runtime (database, listeners, caches), even
    with other apps in the process."""
    inner = app.wsgi_app

    def wsgi_app(environ, start_response):
        token = activate(app.extensions[EXTENSION].runtime)
        try:
            return inner(environ, start_response)
        finally:
            deactivate(token)

    app.wsgi_app = wsgi_app


def close_app(app):
    """Release what the app holds: answer its waiting long polls, stop its background workers, close
    its database connection and SQLite's keeper connection. The app serves nothing after."""
    state = app.extensions[EXTENSION]
    if state.runtime.shard is not None:
        state.runtime.shard.stop()
        state.runtime.shard = None
    state.queues.clear()
    state.rate_limiter.clear()
    for worker in state.workers.values():
        worker.close()
    # After the workers: the missed-message worker hands its mail to the mailer.
    state.mailer.close()
    state.runtime.close()


class OnFirstUse:
    """A listener (or the mailer) built the first time it is called or looked at, so that its
    module, and the actions it imports, load with the first use rather than with the server
    (start-up time and idle memory). Its attributes are the built object's (read, set and deleted: tests patch
    them); `close` of one never built does nothing."""

    __slots__ = ("_build", "_built", "_lock")

    def __init__(self, build):
        object.__setattr__(self, "_build", build)
        object.__setattr__(self, "_built", None)
        object.__setattr__(self, "_lock", threading.Lock())

    def built(self):
        if self._built is None:
            with self._lock:
                if self._built is None:
                    object.__setattr__(self, "_built", self._build())
        return self._built

    def __call__(self, *args, **kwargs):
        return self.built()(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.built(), name)

    def __setattr__(self, name, value):
        setattr(self.built(), name, value)

    def __delattr__(self, name):
        delattr(self.built(), name)

    def close(self):
        if self._built is not None:
            self._built.close()


def build_mailer(config):
    from chat_appliance.clients.send_email import Mailer

    return Mailer(config, keep=bool(config.get("DEV_MODE")), durable=True)


def register_workers(app):
    """Every background worker (workers/WORKERS) listens to the app's committed events; each is
    built, and its module loaded, with the first event it listens to."""
    state = app.extensions[EXTENSION]
    context = WorkerContext(config=app.config, is_online=away_rule(state), mailer=state.mailer.built,
                            version=ZULIP_VERSION, feature_level=ZULIP_FEATURE_LEVEL, uploads_root=state.uploads.root)
    for entry in WORKERS:
        worker = state.workers[entry.name] = OnFirstUse(partial(entry.start, context))
        bus.add_listener(entry.listener(worker), state.runtime)


def resume_workers(app):
    """Start the workers whose pending work lives in the database (WorkerEntry.resumes_at_start)
    and have them take up what a previous process left: `serve` calls this shortly after it
    starts. Their threads run on this app's database."""
    state = app.extensions[EXTENSION]
    token = activate(state.runtime)
    try:
        for entry in WORKERS:
            if entry.resumes_at_start:
                state.workers[entry.name].resume()
    finally:
        deactivate(token)


def away_rule(state):
    """is_online(user_id) for the missed-message emails and mobile push notifications: a person
    is away when none of their event queues takes messages and has been polled within
    EVENT_QUEUE_IDLE_SECONDS (a queue past that is as good as collected: Zulip's rule)."""
    queues = state.queues

    def is_online(user_id):
        now = queues.clock.monotonic()
        for queue in queues.user_queues([user_id]):
            since = queue.idle_since()
            if queue.wants("message") and (since is None or now - since <= queues.idle_seconds):
                return True
        # A shard asks the others too (each says every few seconds whom it holds queues for).
        link = state.runtime.shard
        return link is not None and link.holds_queue_elsewhere(user_id)

    return is_online


def too_large_message(config):
    """What a 413 says: a whole body past MAX_CONTENT_LENGTH is an upload (only uploads come
    near it), so the upload limit is named; otherwise one form field was past Werkzeug's
    MAX_FORM_MEMORY_SIZE, which only a hostile or broken client sends."""
    length = request.content_length
    if length is not None and length > config["MAX_CONTENT_LENGTH"]:
        return f"File is larger than the maximum upload size ({config['MAX_FILE_UPLOAD_SIZE_MIB']} MiB)."
    return "A parameter is too long."


def register_error_handlers(app):
    """Every error is Zulip's JSON envelope: raised errors, HTTP errors, and bugs (500)."""

    @app.errorhandler(JsonableError)
    def handle_jsonable(error):
        response = json_error(error)
        if error.http_status == 401 and not request.path.startswith((JSON_PREFIX + "/", "/accounts/")):
            # API clients expect a Basic challenge with a 401 (never the web client's /json calls:
            # nor its sign-in: a challenge there would make the browser open its own password dialog).
            response.headers["WWW-Authenticate"] = 'Basic realm="zulip"'
        if isinstance(error, RateLimitedError):
            response.headers["Retry-After"] = str(error.data["retry-after"])
        return response

    @app.errorhandler(TextTooLongError)
    def handle_too_long(error):
        # A value past its column's limit (models/limits.py) that no check of the API caught first.
        return handle_jsonable(JsonableError(str(error)))

    @app.errorhandler(HTTPException)
    def handle_http(error):
        code = {404: "NOT_FOUND", 429: "RATE_LIMIT_HIT"}.get(error.code, "BAD_REQUEST")
        msg = error.name
        if error.code == 413:
            msg = too_large_message(app.config)
        response = json_error(JsonableError(msg, code=code, http_status=error.code))
        if error.code == 405:
            response.headers["Allow"] = ", ".join(error.valid_methods or ())
        return response

    @app.errorhandler(Exception)
    def handle_unexpected(error):
        refused = backend().client_error(error)  # a value this engine cannot store: 400, not 500
        if refused is not None:
            return handle_jsonable(JsonableError(refused))
        if backend().unavailable(error):
            note_unavailable(error)
            response = json_error(JsonableError(DATABASE_UNAVAILABLE_MESSAGE, code="DATABASE_UNAVAILABLE",
                                                http_status=503))
            response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
            return response
        if is_disk_full(error):
            note_disk_full()
            log.error("disk full on %s %s: %s", request.method, request.path, error)
            return json_error(JsonableError(DISK_FULL_MESSAGE, code="DISK_FULL", http_status=507))
        log.error("unhandled exception on %s %s\n%s", request.method, request.path, traceback.format_exc())
        return json_error(JsonableError("Internal server error", code="INTERNAL_SERVER_ERROR", http_status=500))


def _log_request_line(method, path, started, who, status):
    request_log.info("%s %s %s %.1fms %s", method, path, status, (time.perf_counter() - started) * 1000, who)


def register_request_hooks(app):
    """Timing and a log line per request; the database connection closes after every request."""

    @app.before_request
    def start_timer():
        g.request_started = time.perf_counter()

    app.after_request(rate_limit.add_headers)

    @app.after_request
    def notice_outage_end(response):
        # During an outage the failing requests note nothing more; one request a second asks the
        # database whether it answers again, so that the end is logged even if no request needs it.
        if should_probe():
            try:
                check_database()
            except Exception:  # noqa: BLE001 - still down: nothing more to say
                pass
            else:
                note_available()
        return response

    @app.after_request
    def log_request(response):
        if not app.config["LOG_REQUESTS"]:
            return response
        started = g.get("request_started", time.perf_counter())
        user = g.get("user")
        line = partial(_log_request_line, request.method, request.path, started, user.email if user is not None else "-")
        debt = turns.debt()
        if debt is None:
            line(response.status_code)
        else:
            # The answer waits for a COMMIT still to come (a send under `serve`), and goes out
            # as an error if that fails: the log says what the client got, once it is known.
            status = response.status_code
            debt.hold(lambda: line(status), lambda error: line(failed_write_status(error)))
        return response

    app.teardown_request(close_connection)
