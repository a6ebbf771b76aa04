"""Requests the server makes on a user's behalf (outgoing webhooks, link previews) reach only public
addresses: every spelling of a local or private address is refused, redirects are not followed, the
address connected to is the one checked, and no module fetches a URL but through lib/safe_fetch."""

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from chat_appliance.models import UserProfile, database

from ..support.helpers import err, ok
from ..support.webhook_receiver import WebhookReceiver


@pytest.fixture
def receiver():
    server = WebhookReceiver()
    yield server
    server.close()


def create_hook_bot(org, url, short_name="hook"):
    created = ok(org.client(org.hamlet).post("bots", full_name="Hook Bot", short_name=short_name, bot_type=3,
                                             payload_url=url))
    with database.connection_context():
        return UserProfile.get_by_id(created["user_id"])


def owner_notice(org, timeout=10):
    """The Notification Bot's latest direct message to Hamlet (a bot's owner), waiting for it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        messages = ok(org.client(org.hamlet).get("messages", anchor="newest", num_before=5, num_after=0,
                                                 apply_markdown=False))["messages"]
        notice = next((m for m in messages if m["sender_email"].startswith("notification-bot")), None)
        if notice is not None:
            return notice
        time.sleep(0.05)
    raise AssertionError("the owner was not told")


class InternalService:
    """A loopback HTTP service standing for something inside the server's network: answers any
    GET or POST with a secret, and counts the requests it got."""

    def __init__(self):
        self.hits = 0
        service = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                service.hits += 1
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                data = json.dumps({"content": "internal secret"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer  # noqa: N815 (http.server's naming)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/internal"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def internal():
    service = InternalService()
    yield service
    service.close()


LOCAL_FORMS = [
    "http://[::127.0.0.1]/hook", "http://[::ffff:127.0.0.1]/hook", "http://[2002:7f00:1::]/hook",
    "http://[64:ff9b::7f00:1]/hook", "http://[64:ff9b::a00:1]/hook", "http://[::1]/hook",
    "http://2130706433/hook", "http://017700000001/hook", "http://0x7f000001/hook", "http://127.1/hook",
    "http://localhost./hook", "http://LOCALHOST/hook", "http://api.localhost/hook", "http://0.0.0.0/hook",
    "http://10.1.2.3/hook", "http://169.254.169.254/latest/meta-data", "http://100.64.0.1/hook",
    "http://[fe80::1]/hook", "http://[fd00::1]/hook",
]


@pytest.mark.parametrize("url", LOCAL_FORMS)
def test_every_form_of_a_local_address_is_refused(org, url):
    """Is a payload URL refused when it reaches this host or a private network in any spelling:
    IPv4 inside IPv6 (compatible, mapped, 6to4, NAT64), decimal, octal and hex IPv4, and
    localhost with a trailing dot?"""
    body = err(org.client(org.hamlet).post("bots", full_name="Hook Bot", short_name="hook", bot_type=3,
                                           payload_url=url), 400, "BAD_REQUEST")
    assert body["msg"].startswith("Invalid payload_url")


AMBIGUOUS_FORMS = [
    "http://127.0.0.1\\@1.1.1.1/hook", "http://example.com\\hook", "http://user:pw@example.com/hook",
    "http://@example.com/hook", "http://exa mple.com/hook", "http://example.com/ho\tok", "http://example.com/\nhook",
    "http://example.com/\x7fhook",
]


@pytest.mark.parametrize("url", AMBIGUOUS_FORMS)
def test_urls_read_differently_by_a_browser_are_refused(org, app, url):
    """Is a payload URL refused when a browser's parser would read another host or path than the
    server's (a backslash, user information, whitespace or control characters), even where
    private addresses are allowed?"""
    app.config["OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES"] = True
    body = err(org.client(org.hamlet).post("bots", full_name="Hook Bot", short_name="hook", bot_type=3,
                                           payload_url=url), 400, "BAD_REQUEST")
    assert body["msg"].startswith("Invalid payload_url")


def test_redirects_are_not_followed(org, app, receiver, internal):
    """Does a webhook that answers with a redirect into the server's network get a report to
    the bot's owner, without the internal service being called or its answer being posted?"""
    app.config["OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES"] = True  # the receiver is on loopback
    receiver.answer = (302, "")
    receiver.headers = {"Location": internal.url}
    bot = create_hook_bot(org, receiver.url)
    ok(org.client(org.othello).post("messages", type="direct", to=[bot.id], content="hi"))
    receiver.wait_for(1)
    notice = owner_notice(org)
    assert "redirect" in notice["content"] and internal.url in notice["content"]
    assert internal.hits == 0
    messages = ok(org.client(org.othello).get("messages", anchor="newest", num_before=5, num_after=0))["messages"]
    assert not any("internal secret" in m["content"] for m in messages)


def test_the_checked_address_is_the_one_connected_to(org, app, internal, monkeypatch):
    """Is the payload URL's name resolved once per call, and the connection made to the address
    that was checked, so that a second, private DNS answer (rebinding) is never used?"""
    app.config["OUTGOING_WEBHOOK_TIMEOUT_SECONDS"] = 1
    app.config["OUTGOING_WEBHOOK_ATTEMPTS"] = 1
    real_getaddrinfo = socket.getaddrinfo
    answers = []

    def rebinding(host, port, *args, **kwargs):
        if host != "rebind.example":
            return real_getaddrinfo(host, port, *args, **kwargs)
        # Public for the checks (creation, then the call's own), private from the third answer on.
        address = "93.184.216.34" if len(answers) < 2 else "127.0.0.1"
        answers.append(address)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    bot = create_hook_bot(org, f"http://rebind.example:{internal.port}/internal")
    ok(org.client(org.othello).post("messages", type="direct", to=[bot.id], content="hi"))
    notice = owner_notice(org)
    assert "could not be completed" in notice["content"]
    assert internal.hits == 0 and answers == ["93.184.216.34", "93.184.216.34"]


def test_no_module_fetches_urls_but_safe_fetch():
    """Do the server's modules reach the network only through clients/safe_fetch (no urllib.request,
    http.client or requests anywhere else), so that every future fetch of a URL a user gave gets
    the guard? Two commands' clients are exempt, since neither fetches a URL a user chose: the ACME
    client talks only to the operator's own ACME_DIRECTORY (through the acme library, built on
    requests), import-slack, run by the operator, downloads only from Slack's file host (any
    other host in an export stays a link), and the OpenID Connect client talks only to the provider
    the operator configured (on a loopback or private address too, as Zulip allows)."""
    import pathlib

    import chat_appliance

    root = pathlib.Path(chat_appliance.__file__).parent
    operator_only = {pathlib.Path("server/acme_client.py"), pathlib.Path("ops/transfer/slack.py"),
                     pathlib.Path("clients/oidc.py")}
    offenders = []
    for path in root.rglob("*.py"):
        if path.name == "safe_fetch.py" or "testing" in path.parts:  # testing/: the test fixtures' own probes
            continue
        if path.relative_to(root) in operator_only:
            continue
        text = path.read_text()
        for needle in ("urllib.request", "http.client", "import requests", "urlopen(", "import httpx"):
            if needle in text:
                offenders.append(f"{path.relative_to(root)}: {needle}")
    assert offenders == []
