"""The request side's defences (docs/security.md, "The request side"), each proven
through HTTP; docs/security.md names the test for each. The general defence against slow
requests (every operation with its largest inputs) is test_every_operation_stays_fast below."""

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from chat_appliance.models import UserProfile, database

from .helpers import PASSWORD, download, err, ok, upload
from .webhook_receiver import WebhookReceiver


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


# --- H1: outgoing requests ------------------------------------------------------------------------

LOCAL_FORMS = [
    "http://[::127.0.0.1]/hook", "http://[::ffff:127.0.0.1]/hook", "http://[2002:7f00:1::]/hook",
    "http://[64:ff9b::7f00:1]/hook", "http://[64:ff9b::a00:1]/hook", "http://[::1]/hook",
    "http://2130706433/hook", "http://017700000001/hook", "http://0x7f000001/hook", "http://127.1/hook",
    "http://localhost./hook", "http://LOCALHOST/hook", "http://api.localhost/hook", "http://0.0.0.0/hook",
    "http://10.1.2.3/hook", "http://169.254.169.254/latest/meta-data", "http://100.64.0.1/hook",
    "http://[fe80::1]/hook", "http://[fd00::1]/hook",
]


@pytest.mark.parametrize("url", LOCAL_FORMS)
def test_h1_every_form_of_a_local_address_is_refused(org, url):
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
def test_h1_urls_read_differently_by_a_browser_are_refused(org, app, url):
    """Is a payload URL refused when a browser's parser would read another host or path than the
    server's (a backslash, user information, whitespace or control characters), even where
    private addresses are allowed?"""
    app.config["OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES"] = True
    body = err(org.client(org.hamlet).post("bots", full_name="Hook Bot", short_name="hook", bot_type=3,
                                           payload_url=url), 400, "BAD_REQUEST")
    assert body["msg"].startswith("Invalid payload_url")


def test_h1_redirects_are_not_followed(org, app, receiver, internal):
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


def test_h1_the_checked_address_is_the_one_connected_to(org, app, internal, monkeypatch):
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


def test_h1_no_module_fetches_urls_but_safe_fetch():
    """Do the server's modules reach the network only through clients/safe_fetch (no urllib.request,
    http.client or requests anywhere else), so that every future fetch gets the guard? The one
    exception is clients/oidc.py: it talks only to the OpenID Connect provider the operator
    configured (SOCIAL_AUTH_OIDC_ENABLED_IDPS), which may well be on a private or loopback
    address (Zulip accepts those too), through Authlib's requests session; no URL a user sends
    reaches it."""
    import pathlib

    import chat_appliance

    root = pathlib.Path(chat_appliance.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        if path.name == "safe_fetch.py" or "testing" in path.parts:  # testing/: the test fixtures' own probes
            continue
        if path.relative_to(root).as_posix() == "clients/oidc.py":
            continue
        text = path.read_text()
        for needle in ("urllib.request", "http.client", "import requests", "urlopen(", "import httpx"):
            if needle in text:
                offenders.append(f"{path.relative_to(root)}: {needle}")
    assert offenders == []


# --- M1: list parameters ---------------------------------------------------------------------------


def queries(app, monkeypatch, call):
    """How many SQL statements the app ran during `call()`, whose response must be a success.
    The account is read every time: kept between requests (lib/snapshots.py), it would be read
    or not depending on whether the request before wrote anything."""
    count = 0
    active = app.extensions["chat_appliance"].runtime
    db = active.database
    real, thread = db.execute_sql, threading.get_ident()
    monkeypatch.setattr(active.snapshots, "max_entries", 0)
    active.snapshots.clear()

    def counting(*args, **kwargs):
        nonlocal count
        count += threading.get_ident() == thread  # not the service bots' worker threads
        return real(*args, **kwargs)

    monkeypatch.setattr(db, "execute_sql", counting)
    try:
        ok(call())
    finally:
        monkeypatch.undo()
    return count


def test_m1_list_parameters_are_bounded(org):
    """Is a list parameter longer than its documented limit (1000) refused at once, on /typing,
    a direct message's `to`, `principals`, `subscriptions` and `subscription_data`, even when it
    holds nothing but repeats of one valid item?"""
    hamlet = org.client(org.hamlet)
    too_many = [org.othello.id] * 1001
    started = time.monotonic()
    for response in (
        hamlet.post("typing", op="start", to=[org.othello.id] * 50000),
        hamlet.post("typing", op="start", to=too_many),
        hamlet.post("messages", type="direct", to=too_many, content="hi"),
        hamlet.post("users/me/subscriptions", subscriptions=[{"name": "Denmark"}] * 1001),
        hamlet.post("users/me/subscriptions", subscriptions=[{"name": "Denmark"}], principals=too_many),
        hamlet.delete("users/me/subscriptions", subscriptions=["Denmark"] * 1001),
        hamlet.post("users/me/subscriptions/properties", subscription_data=[
            {"stream_id": org.denmark.id, "property": "pin_to_top", "value": True}] * 1001),
    ):
        body = err(response, 400, "BAD_REQUEST")
        assert "too many items (limit: 1000)" in body["msg"]
    assert time.monotonic() - started < 5


def test_m1_ids_are_resolved_in_one_query(app, org, monkeypatch):
    """Does resolving a list of users or channels cost the same number of queries for one item
    as for all of them (typing, direct message recipients by id and by address, principals,
    channel names, subscription properties)?"""
    hamlet = org.client(org.hamlet)
    people = [org.othello, org.cordelia, org.admin, org.owner, org.moderator, org.bot]
    ids, emails = [u.id for u in people], [u.email for u in people]
    channels = ["Denmark", "Verona", "secret"]
    pin = [{"stream_id": s.id, "property": "pin_to_top", "value": True} for s in (org.denmark, org.verona, org.secret)]
    cases = {
        "typing": lambda to: hamlet.post("typing", op="start", to=to),
        "dm by id": lambda to: hamlet.post("messages", type="direct", to=to, content="hi"),
        "dm by email": lambda to: hamlet.post("messages", type="direct", to=[emails[ids.index(i)] for i in to],
                                              content="hi"),
        "principals": lambda to: org.client(org.admin).post("users/me/subscriptions", subscriptions=[{"name": "Verona"}],
                                                             principals=to),
    }
    for name, call in cases.items():
        ok(call(ids[:2])), ok(call(ids))  # conversations and subscriptions exist from here on
        one, many = queries(app, monkeypatch, lambda: call(ids[:2])), queries(app, monkeypatch, lambda: call(ids))
        assert one == many, f"{name}: {one} queries for two, {many} for {len(ids)}"
    subscribe = lambda names: hamlet.post("users/me/subscriptions", subscriptions=[{"name": n} for n in names])  # noqa: E731
    one, many = queries(app, monkeypatch, lambda: subscribe(channels[:1])), queries(app, monkeypatch, lambda: subscribe(channels))
    assert one == many, (one, many)  # Hamlet is in all three already
    one = queries(app, monkeypatch, lambda: hamlet.post("users/me/subscriptions/properties", subscription_data=pin[:1]))
    many = queries(app, monkeypatch, lambda: hamlet.post("users/me/subscriptions/properties", subscription_data=pin))
    assert many - one == len(pin) - 1, (one, many)  # one UPDATE per change; the lookups do not grow


# --- M2: alert words -------------------------------------------------------------------------------


def flags_of(client, message_id):
    return ok(client.get(f"messages/{message_id}"))["message"]["flags"]


def test_m2_alert_words_are_bounded(org):
    """Can a user hold at most 1000 alert words of at most 100 characters, a request that would
    pass the limit adding none of its words?"""
    othello = org.client(org.othello)
    ok(othello.post("users/me/alert_words", alert_words=[f"word{i}" for i in range(600)]))
    body = err(othello.post("users/me/alert_words", alert_words=[f"more{i}" for i in range(401)]), 400, "BAD_REQUEST")
    assert "at most 1000 alert words" in body["msg"]
    assert len(ok(othello.get("users/me/alert_words"))["alert_words"]) == 600
    ok(othello.post("users/me/alert_words", alert_words=[f"more{i}" for i in range(400)] + ["WORD1"]))
    assert len(ok(othello.get("users/me/alert_words"))["alert_words"]) == 1000
    err(othello.post("users/me/alert_words", alert_words=["x" * 101]), 400, "BAD_REQUEST")
    err(othello.post("users/me/alert_words", alert_words=[f"w{i}" for i in range(1001)]), 400, "BAD_REQUEST")


def test_m2_matching_does_not_slow_with_the_number_of_words(app, org, monkeypatch):
    """With 1000 long alert words, does a long message still take about as long to send as with
    one word, is the flag right (whole words only, any case), are the words read from the
    database once rather than at every send, and does a change take effect at once?"""
    othello, hamlet = org.client(org.othello), org.client(org.hamlet)
    content = ("the quick brown fox jumps over the lazy dog; " * 200)[:9000] + " Needle."

    def send_timed():
        started = time.perf_counter()
        message_id = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content=content))["id"]
        return time.perf_counter() - started, message_id

    ok(othello.post("users/me/alert_words", alert_words=["zebra"]))
    send_timed()  # warm
    one_word = min(send_timed()[0] for _ in range(3))
    ok(othello.post("users/me/alert_words", alert_words=[f"{'abcdefghij' * 9}{i:04d}" for i in range(998)] + ["needle"]))
    send_timed()
    many_words, message_id = min(send_timed() for _ in range(3))
    assert "has_alert_word" in flags_of(othello, message_id)
    assert many_words < one_word * 3 + 0.05, (one_word, many_words)
    # Read once: a send reads no alert word until Othello's words change.
    reads = []
    db = app.extensions["chat_appliance"].runtime.database
    real = db.execute_sql
    monkeypatch.setattr(db, "execute_sql", lambda sql, *a, **k: (reads.append(sql), real(sql, *a, **k))[1])
    ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content="needles are not needle"))
    assert not [sql for sql in reads if "alert_word" in sql]
    monkeypatch.undo()
    ok(othello.delete("users/me/alert_words", alert_words=["needle"]))
    missed = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content="a needle"))["id"]
    assert "has_alert_word" not in flags_of(othello, missed)
    ok(othello.post("users/me/alert_words", alert_words=["Hay Stack"]))
    hit = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content="in the (hay stack)!"))["id"]
    assert "has_alert_word" in flags_of(othello, hit)
    inside = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content="haystack hay stacks"))["id"]
    assert "has_alert_word" not in flags_of(othello, inside)


# --- M3 and L7: every way in makes accounts by the same rules --------------------------------------

JOIN_HEADERS = {"X-Requested-With": "XMLHttpRequest"}


def join(flask_client, key, **data):
    response = flask_client.post(f"/accounts/join/{key}", headers=JOIN_HEADERS, data=data)
    return response.status_code, response.get_json()


def invitation_keys(org, email):
    """(a reusable link's key, an email invitation's key to `email`)."""
    owner = org.client(org.owner)
    link = ok(owner.post("invites/multiuse", stream_ids=[org.denmark.id]))["invite_link"]
    ok(owner.post("invites", invitee_emails=email, stream_ids=[org.denmark.id]))
    from chat_appliance.models import Invitation

    with database.connection_context():
        email_key = Invitation.get(Invitation.email == email).key
    return link.rsplit("/join/", 1)[1], email_key


def test_m3_placeholder_addresses_cannot_sign_up(org, flask_client, mail):
    """Is an address of the placeholder form user{N}@{organization host} refused by sign-up
    through a reusable link and through an email invitation, as it is by POST /users, so that
    no two accounts share an API email?"""
    placeholder = f"user{org.hamlet.id}@zulip.example"
    link_key, email_key = invitation_keys(org, placeholder)
    for key, data in ((link_key, {"email": placeholder}), (email_key, {})):
        status, body = join(flask_client, key, full_name="Impostor", password="a fine password", **data)
        assert status == 400 and "reserved for placeholder addresses" in body["msg"], body
    status, body = join(flask_client, link_key, email="USER999@Zulip.Example", full_name="Impostor",
                        password="a fine password")
    assert status == 400, body
    with database.connection_context():
        assert not UserProfile.select().where(UserProfile.full_name == "Impostor").exists()


def test_l7_one_password_policy(org, flask_client, mail):
    """Does sign-up by invitation (link and email) refuse a password shorter than 6 characters,
    as a password change does, and accept one of 6?"""
    link_key, email_key = invitation_keys(org, "newcomer@zulip.example")
    for key, data in ((link_key, {"email": "other@zulip.example"}), (email_key, {})):
        status, body = join(flask_client, key, full_name="New Comer", password="12345", **data)
        assert status == 400 and body["msg"] == "The password is too weak.", body
    status, body = join(flask_client, email_key, full_name="New Comer", password="123456")
    assert status == 200, body
    err(org.client(org.owner).post("users", email="short@zulip.example", password="x", full_name="Short"), 400,
        "BAD_REQUEST", "The password is too weak.")


# --- L2: the login lock-out counts per account -----------------------------------------------------


def test_l2_lock_out_counts_per_account_not_per_name(org, anon, app):
    """When Hamlet's real address is hidden he has two login names (it and his placeholder): do
    failed logins under both count toward one lock-out of 5, and do unknown names still get
    their own count?"""
    app.config["RATE_LIMITING"] = True
    ok(org.client(org.hamlet).patch("settings", email_address_visibility=3))
    names = [org.hamlet.delivery_email, f"user{org.hamlet.id}@zulip.example"]
    for attempt in range(5):
        err(anon.post("fetch_api_key", username=names[attempt % 2], password="wrong"), 401, "AUTHENTICATION_FAILED")
    for name in names:
        err(anon.post("fetch_api_key", username=name, password=PASSWORD), 429, "RATE_LIMIT_HIT")
    for _ in range(5):
        err(anon.post("fetch_api_key", username="nobody@zulip.example", password="x"), 401, "AUTHENTICATION_FAILED")
    err(anon.post("fetch_api_key", username="nobody@zulip.example", password="x"), 429, "RATE_LIMIT_HIT")
    ok(anon.post("fetch_api_key", username=org.othello.email, password=PASSWORD))


# --- L1: JSON depth, wherever JSON is read --------------------------------------------------------


def test_l1_deep_json_is_refused_everywhere(org, flask_client):
    """Does every incoming webhook answer 400 (never 500) to a body or a `payload` field nested
    990 deep, and does a parameter nested 33 deep get a 400 too?"""
    from chat_appliance.integrations import INTEGRATIONS

    deep = "[" * 990 + "]" * 990
    for integration in sorted(INTEGRATIONS):
        path = f"/api/v1/external/{integration}"
        query = {"api_key": org.bot.api_key, "stream": "Denmark"}
        for response in (flask_client.post(path, query_string=query, data=deep, content_type="application/json"),
                         flask_client.post(path, query_string=query, data={"payload": deep})):
            assert response.status_code == 400, (integration, response.status_code)
            assert "nested too deeply" in response.get_json()["msg"]
    nested = "[" * 33 + "]" * 33
    err(org.client(org.hamlet).post("users/me/subscriptions", subscriptions=nested), 400, "BAD_REQUEST")


# --- L3: /thumbnail is no open redirect -------------------------------------------------------------


def test_l3_thumbnail_redirects_only_to_images_the_user_may_see(org):
    """Does /thumbnail send a signed-in user only to an image previewed in a message they may
    read, or to this server's own upload URLs, and refuse any other address, an image
    previewed only in a private channel they are not in included?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)

    def thumbnail(client, url):
        return client.flask_client.get("/thumbnail", query_string={"url": url, "size": "full"}, headers=client.headers)

    assert thumbnail(othello, "https://evil.example/phish.png").status_code == 400
    ok(hamlet.post("messages", type="stream", to="secret", topic="t", content="https://example.com/secret.png"))
    assert thumbnail(othello, "https://example.com/secret.png").status_code == 400
    assert thumbnail(hamlet, "https://example.com/secret.png").status_code == 302
    ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content="https://example.com/open.png?a=1&b=2"))
    response = thumbnail(othello, "https://example.com/open.png?a=1&b=2")
    assert response.status_code == 302 and response.headers["Location"] == "https://example.com/open.png?a=1&b=2"
    assert thumbnail(othello, "https://example.com/open.png").status_code == 400  # not that exact URL
    own = "http://localhost/user_uploads/1/ab/cat.png"
    response = thumbnail(othello, own)
    assert response.status_code == 302 and response.headers["Location"] == "/user_uploads/1/ab/cat.png"
    assert thumbnail(othello, "http://elsewhere.example/user_uploads/1/ab/cat.png").status_code == 400


# --- I1: uploads never run in the server's origin ----------------------------------------------------

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e5270f8d0000000049454e44ae426082")


def test_i1_only_raster_images_are_shown_inline(org):
    """Are uploaded .js, .html, .htm, .svg and .xml files served as downloads (Content-Disposition:
    attachment), raster images inline, and every upload with `Content-Security-Policy: sandbox`
    and nosniff?"""
    cases = {"page.html": False, "page.htm": False, "script.js": False, "drawing.svg": False, "feed.xml": False,
             "notes.txt": False, "dot.png": True, "photo.jpg": True, "anim.gif": True}
    for name, inline in cases.items():
        url = ok(upload(org, org.hamlet, PNG if inline else b"<script>alert(document.cookie)</script>", name=name))["url"]
        response = download(org, org.hamlet, url)
        assert response.status_code == 200, name
        disposition = response.headers["Content-Disposition"]
        assert disposition.startswith("inline" if inline else "attachment"), (name, disposition)
        assert response.headers["Content-Security-Policy"] == "sandbox", name
        assert response.headers["X-Content-Type-Options"] == "nosniff", name


# --- L4: every stored text has a limit -------------------------------------------------------------


def all_models():
    """The live models (not the frozen ones the migrations define for themselves)."""
    import importlib
    import pkgutil

    import chat_appliance.models
    from chat_appliance.models.base import BaseModel

    for module in pkgutil.iter_modules(chat_appliance.models.__path__):
        importlib.import_module(f"chat_appliance.models.{module.name}")

    found, pending = [], [BaseModel]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub.__module__.startswith("chat_appliance.models"):
                found.append(sub)
            pending.append(sub)
    return found


def test_l4_every_text_column_has_a_limit_that_writes_obey():
    """Does every text column of every model (CharField, TextField, JSON) have a limit in the one
    table (models/limits.py), and is a value one character past it refused by insert, update and
    save alike?"""
    from peewee import CharField, TextField

    from chat_appliance.models.limits import TextTooLongError, check_text_lengths, text_limit

    walked = 0
    for model in all_models():
        for field in model._meta.sorted_fields:
            if not isinstance(field, (CharField, TextField)):
                continue
            limit = text_limit(field)
            assert limit is not None, f"{model._meta.table_name}.{field.column_name} has no limit"
            check_text_lengths(model, {field: "x" * limit})
            with pytest.raises(TextTooLongError):
                check_text_lengths(model, {field.name: "x" * (limit + 1)})
            walked += 1
    assert walked > 80


def test_l4_the_reported_fields_are_bounded(org, app):
    """Are a bot's 2 MiB payload_url, a playground's 2 MiB url_template and 1 MB of profile
    field choices refused with a 400, storing nothing?"""
    app.config["OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES"] = True
    hamlet, admin = org.client(org.hamlet), org.client(org.admin)
    huge = "x" * (2 * 1024 * 1024)
    # Past the form parser's per-field limit (Werkzeug's 500 kB) it is a 413, before any view.
    err(hamlet.post("bots", full_name="Hook Bot", short_name="hook", bot_type=3,
                    payload_url=f"http://127.0.0.1:9/{huge}"), 413, "BAD_REQUEST", "A parameter is too long.")
    err(admin.post("realm/playgrounds", name="Big", pygments_language="Python",
                   url_template=f"https://play.example/{huge}?code={{code}}"), 413, "BAD_REQUEST")
    err(admin.post("realm/profile_fields", name="Team", hint="", field_type=3,
                   field_data=json.dumps({"a": {"text": "x" * 1_000_000, "order": "1"}})), 413, "BAD_REQUEST")
    # Under the form parser's limit, the views' own bounds refuse them.
    big = "x" * 400_000
    err(hamlet.post("bots", full_name="Hook Bot", short_name="hook", bot_type=3,
                    payload_url=f"http://127.0.0.1:9/{big}"), 400, "BAD_REQUEST")
    err(admin.post("realm/profile_fields", name="Team", hint="", field_type=3,
                   field_data=json.dumps({"a": {"text": big, "order": "1"}})), 400, "BAD_REQUEST")
    state = ok(admin.post("register", fetch_event_types=["realm_bots", "realm_playgrounds", "custom_profile_fields"]))
    assert len(json.dumps(state)) < 100_000
