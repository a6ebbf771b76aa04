#!/usr/bin/env python3
"""The bare-framework baseline (issue 32): Flask + HTTP Basic, no database, under `serve`'s own server.

    python scripts/bare_flask.py PORT [EMAIL KEY]

Answers GET /api/v1/users/me (HTTP Basic, the credentials given, default bench@example.com /
bench-key) and GET /api/v1/server_settings (no authentication) with small JSON bodies. It runs
under the same server as `chat-appliance serve`: uvicorn with httptools, the same connection
protocol and settings, and the same loop-to-thread bridge (server/wsgi_bridge.py) with the same
number of worker threads, without worker turns (there is no database to take turns for). The
difference between this and `serve` answering the same request is therefore what the
application adds: authentication, rate limits, the admission turn, the view and its JSON.

Used by bench_messages.py (requests per second) and bench_footprint.py (start-up, memory).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main():
    port = int(sys.argv[1])
    email, key = (sys.argv[2], sys.argv[3]) if len(sys.argv) > 3 else ("bench@example.com", "bench-key")

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
        return jsonify(result="success", msg="", zulip_version="baseline")

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


if __name__ == "__main__":
    main()
