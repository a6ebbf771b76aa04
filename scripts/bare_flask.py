#!/usr/bin/env python3
"""The bare-framework baseline: Flask + HTTP Basic, no database, under `serve`'s own server.

    python scripts/bare_flask.py PORT [EMAIL KEY] [--floor SQLITE_FILE]

Answers GET /api/v1/users/me (HTTP Basic, the credentials given, default bench@example.com /
bench-key) and GET /api/v1/server_settings (no authentication) with small JSON bodies. It runs
under the same server as `chat-appliance serve`: uvicorn with httptools, the same connection
protocol and settings, and the same loop-to-thread bridge (server/wsgi_bridge.py) with the same
number of worker threads, without worker turns (there is no database to take turns for). The
difference between this and `serve` answering the same request is therefore what the
application adds: authentication, rate limits, the admission turn, the view and its JSON.

With --floor, it is instead the start-up floor of this server's design (bench_footprint.py):
the bare app plus what any server built on Flask and peewee over SQLite does before its first
answer, and nothing of ours. It imports peewee (without database drivers, as `serve` does),
opens the file with peewee's pool and one connection kept open (with the pragmas that set up
`serve`'s connections: WAL, foreign keys, synchronous, cache and busy timeout), adds the
same URL rules as `serve` (api/routes.py, with the builders werkzeug would compile left out, as
`serve` leaves them), and server_settings reads the organization's row.

Used by bench_messages.py (requests per second) and bench_footprint.py (start-up, memory).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main():
    words = sys.argv[1:]
    floor = None
    if "--floor" in words:
        at = words.index("--floor")
        floor = words[at + 1]
        del words[at:at + 2]
    port = int(words[0])
    email, key = (words[1], words[2]) if len(words) > 2 else ("bench@example.com", "bench-key")
    database = open_floor_database(floor) if floor else None

    from flask import Flask, jsonify
    from flask_httpauth import HTTPBasicAuth

    app = Flask(__name__)
    auth = HTTPBasicAuth()

    @auth.verify_password
    def verify(user, password):
        return user if user == email and password == key else None

    @app.get("/api/v1/users/me")
    @auth.login_required
    def me():
        return jsonify(result="success", msg="", email=auth.current_user(), user_id=1, full_name="Bench",
                       is_admin=False, is_active=True)

    @app.get("/api/v1/server_settings")
    def server_settings():
        if database is None:
            return jsonify(result="success", msg="", zulip_version="baseline")
        with database.connection_context():
            name = database.execute_sql("SELECT name FROM realm ORDER BY id LIMIT 1").fetchone()[0]
        return jsonify(result="success", msg="", zulip_version="baseline", realm_name=name)

    if floor:
        add_floor_routes(app)

    import uvicorn

    from chat_appliance.server import connections
    from chat_appliance.server.wsgi_bridge import WSGIBridge

    # server/asgi.py's settings, copied rather than imported: importing it would load the app.
    import ctypes

    libc = ctypes.CDLL(None)
    if hasattr(libc, "mallopt"):
        libc.mallopt(-8, 1)  # M_ARENA_MAX, one arena, as serve sets it
    bridge = WSGIBridge(app, 64, lambda: None)
    protocol = connections.protocol_class(header_timeout=30, max_per_client=0)
    config = uvicorn.Config(bridge, host="127.0.0.1", port=port, loop="auto", http=protocol, lifespan="off",
                            access_log=False, log_config=None, server_header=False,
                            timeout_keep_alive=120, limit_concurrency=None, backlog=4096,
                            proxy_headers=False, log_level="warning")
    uvicorn.Server(config).run()


def open_floor_database(path):
    """peewee's pooled SQLite database on `path` and one kept connection, as `serve` opens them."""
    import sqlite3

    from chat_appliance.db.drivers import import_peewee_without_drivers

    import_peewee_without_drivers()
    from playhouse.pool import PooledSqliteDatabase

    pragmas = {"journal_mode": "wal", "foreign_keys": 1, "synchronous": "normal", "cache_size": -1000,
               "busy_timeout": 10000}
    database = PooledSqliteDatabase(path, pragmas=pragmas, timeout=10, max_connections=None, stale_timeout=300,
                                    check_same_thread=False)
    keeper = sqlite3.connect(path, check_same_thread=False)
    keeper.execute("PRAGMA journal_mode=wal").fetchall()
    keeper.execute("SELECT count(*) FROM sqlite_master").fetchall()
    database.keeper = keeper
    return database


def add_floor_routes(app):
    """`serve`'s URL rules, each to one view that is never called."""
    from werkzeug.routing import Rule

    from chat_appliance.api.routes import ROUTES

    class NoBuilderRule(Rule):
        def _compile_builder(self, append_unknown=True):
            return unused_view

    app.url_rule_class = NoBuilderRule
    answered = {rule.rule for rule in app.url_map.iter_rules()}
    for _module, _attribute, rules in ROUTES:
        for rule, endpoint, methods in rules:
            if rule not in answered or "GET" not in methods:
                app.add_url_rule(rule, endpoint, unused_view, methods=list(methods))


def unused_view(*_arguments, **_keywords):
    return ""


if __name__ == "__main__":
    main()
