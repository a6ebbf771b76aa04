"""A local HTTP endpoint standing in for an outgoing webhook's service: records each request
and answers with what the test tells it to."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs


class WebhookReceiver:
    """Serves on 127.0.0.1; `answer` is (status, body) or a callable(request) returning one."""

    def __init__(self, answer=(200, {"response_not_required": True})):
        self.answer = answer
        self.headers = {}  # extra response headers (a redirect's Location)
        self.requests = []
        self.arrived = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length", 0))
                raw = self.rfile.read(length).decode()
                kind = self.headers.get("Content-Type", "")
                body = json.loads(raw) if kind.startswith("application/json") else \
                    {k: v[0] for k, v in parse_qs(raw).items()}
                request = {"body": body, "content_type": kind, "user_agent": self.headers.get("User-Agent")}
                answer = receiver.answer(request) if callable(receiver.answer) else receiver.answer
                status, payload = answer
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in receiver.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
                with receiver.arrived:
                    receiver.requests.append(request)
                    receiver.arrived.notify_all()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def wait_for(self, count, timeout=10):
        """The first `count` requests, waiting for them to arrive (bounded)."""
        with self.arrived:
            self.arrived.wait_for(lambda: len(self.requests) >= count, timeout=timeout)
        assert len(self.requests) >= count, f"expected {count} webhook calls, got {len(self.requests)}"
        return self.requests[:count]

    def close(self):
        self.server.shutdown()
        self.server.server_close()
