"""Several `serve --shard-id` processes on one PostgreSQL database behind nginx
(docs/scaling.md): events cross shards, edits are seen everywhere at once, rate limits count across
shards, a killed shard costs its clients one re-register, scheduled messages go out once, and
unmodified clients work through the proxy. PostgreSQL only (SQLite refuses --shard-id, tested
here too); the proxy tests need Debian's nginx and skip without it."""

import json
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import types

import pytest
import requests
import zulip

from chat_appliance.events.queues import shard_of
from chat_appliance.events.shards import restore_keys
from chat_appliance.ops.proxy_config import nginx_config, parse_shard

from ..support import pg
from ..support.clients import script_path, wait_for, write_zuliprc
from ..support.shard_cluster import NGINX, NginxProxy, restart_shard, start_shards

needs_pg = pytest.mark.skipif(not pg.ENABLED, reason="shards need PostgreSQL (set CHAT_APPLIANCE_DATABASE_URL)")
needs_nginx = pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install nginx)")


# --- without a database ------------------------------------------------------------------------


def test_sqlite_refuses_a_shard_id(tmp_path):
    """Does serve on SQLite refuse --shard-id with a message that says why, and start nothing?"""
    env = {k: v for k, v in __import__("os").environ.items() if k != "CHAT_APPLIANCE_DATABASE_URL"}
    done = subprocess.run([sys.executable, "-m", "chat_appliance", "serve", "--instance", str(tmp_path / "i"),
                           "--create", "--port", "1", "--shard-id", "a"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1
    assert "needs a PostgreSQL database" in done.stderr
    assert not (tmp_path / "i" / "chat.sqlite3").exists()


@pytest.mark.parametrize("bad", ["a", "a=host", "a=host:0", "bad name=h:1", "a=h:99999", "a:b=h:1"])
def test_proxy_config_refuses_bad_shards(bad):
    """Is a malformed --shard refused with a clear message (exit 1, no configuration printed)?"""
    done = subprocess.run([sys.executable, "-m", "chat_appliance", "proxy-config", "nginx", "--listen", "80",
                           "--shard", bad], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert "--shard" in done.stderr


def test_proxy_config_routes_events_by_shard_in_both_spellings():
    """Does the configuration route /events by the queue id's shard, as clients send it (K:...
    and K%3A...), with the shard's peers as backups, a long-poll timeout above the heartbeat and
    serve's body limit?"""
    text = nginx_config(8080, [parse_shard("a=127.0.0.1:1"), parse_shard("b=10.0.0.2:2")])
    assert '"~^a(:|%3[Aa])" chat_shard_a;' in text and '"~^b(:|%3[Aa])" chat_shard_b;' in text
    shard_b = text.split("upstream chat_shard_b {")[1].split("}")[0]
    assert "server 10.0.0.2:2 max_fails=1 fail_timeout=5s;" in shard_b
    assert "server 127.0.0.1:1 max_fails=1 fail_timeout=5s backup;" in shard_b
    assert "proxy_read_timeout 90s;" in text and "client_max_body_size 26m;" in text
    tls = nginx_config(443, [parse_shard("a=h:1")], tls_certificate="/c.pem", tls_certificate_key="/k.pem")
    assert "listen 443 ssl http2;" in tls and "ssl_certificate /c.pem;" in tls


@needs_nginx
def test_nginx_accepts_the_configuration(tmp_path):
    """Does nginx itself accept the printed configuration (nginx -t), TLS included?"""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (needed to make a test certificate)")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-subj", "/CN=chat.example", "-days", "1", "-keyout", str(tmp_path / "k.pem"),
                    "-out", str(tmp_path / "c.pem")], check=True, capture_output=True, timeout=60)
    for extra in ([], ["--tls-certificate", str(tmp_path / "c.pem"), "--tls-certificate-key", str(tmp_path / "k.pem")]):
        conf = subprocess.run([sys.executable, "-m", "chat_appliance", "proxy-config", "nginx", "--listen", "18443",
                               "--shard", "a=127.0.0.1:9001", "--shard", "b=127.0.0.1:9002", *extra],
                              check=True, capture_output=True, text=True, timeout=60).stdout
        (tmp_path / "nginx.conf").write_text(conf)
        checked = subprocess.run([NGINX, "-e", "stderr", "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
                                 capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0, checked.stderr


def test_queue_ids_name_their_shard_and_json_keys_come_back():
    assert shard_of("a:1700000000:00ff") == "a"
    assert shard_of("1700000000:00ff") is None
    event = restore_keys({"type": "update_message", "user_flags": {"7": ["read"]}, "flags": {"8": []}})
    assert event["user_flags"] == {7: ["read"]} and event["flags"] == {8: []}


def test_a_shared_cache_empties_itself_when_another_shard_changed_the_data():
    """A GenerationCache with a stale check (Runtime.share_caches) empties itself before the read
    that follows a change, and refuses a store read before that emptying."""
    from chat_appliance.db.runtime import GenerationCache

    answers = iter([False, False, True, False])
    cache = GenerationCache(10)
    cache.stale = lambda: next(answers)
    before = cache.generation
    cache.put_many([(1, "old")], before)
    assert cache.get(1) == "old"
    assert cache.get_many([1]) == {1: "old"}
    assert cache.get(1) is None  # another shard raised the generation: emptied
    cache.put_many([(1, "read before the change")], before)
    assert cache.get(1) is None


# --- three shards on PostgreSQL ------------------------------------------------------------------


def api(url, method, path, key, email="owner@localhost", **data):
    response = requests.request(method, f"{url}/api/v1/{path}", auth=(email, key), timeout=90,
                                **({"params": data} if method == "GET" else {"data": data}))
    return response.json()


def register(url, key, email="owner@localhost"):
    body = api(url, "POST", "register", key, email, event_types=json.dumps(["message", "update_message"]))
    assert body["result"] == "success", body
    return body["queue_id"]


def poll(url, key, queue_id, last=-1, email="owner@localhost", want=lambda events: events):
    """Events of a queue until `want(events)` is truthy (a long poll answers at the first event)."""
    seen = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        body = api(url, "GET", "events", key, email, queue_id=queue_id, last_event_id=last)
        assert body["result"] == "success", body
        seen += [e for e in body["events"] if e["type"] != "heartbeat"]
        if body["events"]:
            last = body["events"][-1]["id"]
        if want(seen):
            return seen
    raise AssertionError(f"events never came: {seen}")


def send(url, key, content, topic="shards"):
    body = api(url, "POST", "messages", key, type="stream", to="general", topic=topic, content=content)
    assert body["result"] == "success", body
    return body["id"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if not pg.ENABLED:
        pytest.skip("shards need PostgreSQL (set CHAT_APPLIANCE_DATABASE_URL)")
    instance = tmp_path_factory.mktemp("shards") / "instance"
    shards = start_shards(instance, ["a", "b", "c"])
    proxy = NginxProxy(instance.parent / "nginx", shards) if NGINX else None
    yield shards, proxy
    if proxy is not None:
        proxy.stop()
    for shard in shards.values():
        shard.stop()


def test_a_message_sent_on_one_shard_reaches_queues_on_the_others(cluster):
    shards, _proxy = cluster
    key = shards["a"].api_key
    queues = {name: register(shards[name].url, key) for name in ("b", "c")}
    assert {shard_of(q) for q in queues.values()} == {"b", "c"}
    big = "large " * 1400  # over NOTIFY's 8000-byte payload: goes through event_log
    sent = [send(shards["a"].url, key, "across shards"), send(shards["a"].url, key, big)]
    for name, queue_id in queues.items():
        events = poll(shards[name].url, key, queue_id, want=lambda ev: len(ev) >= 2)
        assert [e["message"]["id"] for e in events] == sent  # in commit order


def test_an_edit_is_seen_by_every_shard_at_once(cluster):
    shards, _proxy = cluster
    key = shards["a"].api_key
    message_id = send(shards["b"].url, key, "before")
    for shard in shards.values():  # every shard has read (and could have cached) it
        assert api(shard.url, "GET", f"messages/{message_id}", key)["message"]["content"] == "<p>before</p>"
    assert api(shards["c"].url, "PATCH", f"messages/{message_id}", key, content="after")["result"] == "success"
    for shard in shards.values():
        assert api(shard.url, "GET", f"messages/{message_id}", key)["message"]["content"] == "<p>after</p>"
        fetched = api(shard.url, "GET", "messages", key, anchor=message_id, num_before=0, num_after=0,
                      narrow="[]")["messages"]
        assert [m["content"] for m in fetched] == ["<p>after</p>"]
    reacted = api(shards["a"].url, "POST", f"messages/{message_id}/reactions", key, emoji_name="octopus")
    assert reacted["result"] == "success", reacted
    for shard in shards.values():
        fetched = api(shard.url, "GET", "messages", key, anchor=message_id, num_before=0, num_after=0,
                      narrow="[]")["messages"]
        assert [r["emoji_name"] for r in fetched[0]["reactions"]] == ["octopus"]


def test_delete_events_works_on_any_shard(cluster):
    shards, _proxy = cluster
    key = shards["a"].api_key
    queue_id = register(shards["b"].url, key)
    assert api(shards["c"].url, "DELETE", "events", key, queue_id=queue_id)["result"] == "success"
    wait_for(lambda: api(shards["b"].url, "GET", "events", key, queue_id=queue_id, last_event_id=-1,
                         dont_block="true").get("code") == "BAD_EVENT_QUEUE_ID", timeout=30)


def test_scheduled_message_is_delivered_once(cluster):
    shards, _proxy = cluster
    key = shards["a"].api_key
    general = api(shards["a"].url, "GET", "get_stream_id", key, stream="general")["stream_id"]
    body = api(shards["c"].url, "POST", "scheduled_messages", key, type="stream", to=general, topic="once",
               content="scheduled across shards", scheduled_delivery_timestamp=int(time.time()) + 2)
    assert body["result"] == "success", body
    narrow = json.dumps([{"operator": "topic", "operand": "once"}])

    def delivered():
        return api(shards["b"].url, "GET", "messages", key, anchor="newest", num_before=10, num_after=0,
                   narrow=narrow)["messages"]

    wait_for(delivered, timeout=60, interval=0.5)
    time.sleep(5)  # any second delivery (another shard's scheduler) would have happened by now
    assert [m["content"] for m in delivered()] == ["<p>scheduled across shards</p>"]


@needs_nginx
def test_zulip_clients_through_the_proxy(cluster, tmp_path):
    """The zulip library and zulip-send through nginx: a queue registered through the proxy is
    polled through it (the queue id travels URL-encoded), a message sent with zulip-send arrives,
    and deregistering (DELETE /events, queue id in the body) works whichever shard gets it."""
    shards, proxy = cluster
    rc = write_zuliprc(tmp_path / "zuliprc", shards["a"].email, shards["a"].api_key, proxy.url)
    clients = [zulip.Client(config_file=str(rc)) for _ in range(4)]
    queues = [client.register(event_types=["message"]) for client in clients]
    assert all(q["result"] == "success" for q in queues)
    assert len({shard_of(q["queue_id"]) for q in queues}) >= 2  # spread over the shards
    subprocess.run([script_path("zulip-send"), "--config-file", str(rc), "--stream", "general", "--subject", "proxy",
                    "--message", "through nginx"], check=True, timeout=60, capture_output=True)
    for client, queue in zip(clients, queues):
        events = []
        deadline = time.monotonic() + 60
        while not events and time.monotonic() < deadline:
            answer = client.get_events(queue_id=queue["queue_id"], last_event_id=queue["last_event_id"])
            assert answer["result"] == "success", answer
            events = [e for e in answer["events"] if e["type"] == "message"]
        assert [e["message"]["content"] for e in events] == ["through nginx"]
        assert client.deregister(queue["queue_id"])["result"] == "success"
    for client, queue in zip(clients, queues):
        wait_for(lambda: client.get_events(queue_id=queue["queue_id"], last_event_id=-1, dont_block=True)
                 .get("code") == "BAD_EVENT_QUEUE_ID", timeout=30)


def test_a_second_process_with_a_shard_name_in_use_is_refused(cluster):
    """Two processes under one shard name would both answer for its queues: the second refuses
    to start, saying why, and the first keeps serving."""
    shards, _proxy = cluster
    instance = shards["a"].instance
    env = dict(__import__("os").environ, CHAT_APPLIANCE_DATABASE_URL=pg.database_for_instance(instance))
    done = subprocess.run([sys.executable, "-m", "chat_appliance", "serve", "--instance", str(instance), "--port", "1",
                           "--shard-id", "a"], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 1
    assert "already serving shard 'a'" in done.stderr
    assert api(shards["a"].url, "GET", "users/me", shards["a"].api_key)["result"] == "success"


def test_an_upload_made_on_one_shard_is_served_by_the_others(cluster):
    """Uploads live in the instance folder every shard reaches: a file uploaded through shard a
    is downloaded from b and c, and b's temporary URL for it works on c (one secret_key)."""
    shards, _proxy = cluster
    key = shards["a"].api_key
    auth = ("owner@localhost", key)
    uploaded = requests.post(shards["a"].url + "/api/v1/user_uploads", auth=auth, timeout=30,
                             files={"file": ("notes.txt", b"shared between shards")}).json()
    assert uploaded["result"] == "success", uploaded
    for name in ("b", "c"):
        fetched = requests.get(shards[name].url + uploaded["uri"], auth=auth, timeout=30)
        assert fetched.status_code == 200 and fetched.content == b"shared between shards"
    path = uploaded["uri"][len("/user_uploads/"):]
    temporary = api(shards["b"].url, "GET", f"user_uploads/{path}", key)
    assert temporary["result"] == "success", temporary
    anonymous = requests.get(shards["c"].url + temporary["url"], timeout=30)
    assert anonymous.status_code == 200 and anonymous.content == b"shared between shards"


@needs_nginx
@pytest.mark.browser
def test_the_web_client_through_the_proxy(cluster):
    """Does the web client work through nginx: sign in, see a message sent on another shard
    arrive without a reload (its /json/events poll is routed to its queue's shard), and send one
    that a queue on a third shard receives?"""
    from playwright.sync_api import expect, sync_playwright

    from ..support.browser import launch, sign_in

    shards, proxy = cluster
    key = shards["a"].api_key
    password = re.search(r"password:\s+(\S+)", "".join(shards["a"].output)).group(1)
    watcher = register(shards["c"].url, key)
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            watched = sign_in(browser, types.SimpleNamespace(url=proxy.url), "owner@localhost", password)
            page = watched.page
            general = api(proxy.url, "GET", "get_stream_id", key, stream="general")["stream_id"]
            page.goto(f"{proxy.url}/#narrow/channel/{general}-general/topic/browser")
            expect(page.get_by_role("textbox", name="Topic")).to_have_value("browser")
            for shard in shards.values():  # whichever shard holds the page's queue gets it
                send(shard.url, key, f"hello from {shard.url[-5:]}", topic="browser")
            for shard in shards.values():
                expect(page.get_by_role("article").filter(has_text=f"hello from {shard.url[-5:]}")).to_have_count(
                    1, timeout=40_000)
            box = page.get_by_role("textbox", name="Message")
            box.fill("typed in the browser")
            box.press("Enter")
            expect(box).to_have_value("")
            events = poll(shards["c"].url, key, watcher,
                          want=lambda ev: any(e["message"]["content"] == "typed in the browser" for e in ev))
            assert events
            assert watched.errors == [], watched.errors
        finally:
            browser.close()


@needs_pg
def test_rate_limit_counts_across_shards(tmp_path):
    """With a budget of 6 requests, do six requests spread over three shards use it up, so that
    the seventh is refused whichever shard gets it? And do failed logins on different shards add
    up to the lock-out?"""
    rules = json.dumps({"api_by_user": [[600, 6]], "authenticate_by_username": [[1800, 3]]})
    shards = start_shards(tmp_path / "instance", ["a", "b", "c"], rate_limiting=True,
                          env={"CHAT_APPLIANCE_RATE_LIMITING_RULES": rules})
    try:
        key, urls = shards["a"].api_key, [s.url for s in shards.values()]
        answers = [api(urls[i % 3], "GET", "users/me", key)["result"] for i in range(6)]
        assert answers == ["success"] * 6
        for url in urls:
            refused = requests.get(url + "/api/v1/users/me", auth=("owner@localhost", key), timeout=30)
            assert refused.status_code == 429 and refused.json()["code"] == "RATE_LIMIT_HIT"
        for url in urls:
            wrong = requests.post(url + "/api/v1/fetch_api_key", data={"username": "owner@localhost",
                                                                      "password": "wrong"}, timeout=30)
            assert wrong.status_code == 401
        locked = requests.post(urls[0] + "/api/v1/fetch_api_key", data={"username": "owner@localhost",
                                                                       "password": "wrong"}, timeout=30)
        assert locked.status_code == 429
    finally:
        for shard in shards.values():
            shard.stop()


@needs_pg
@needs_nginx
def test_kill_9_of_a_shard_costs_its_clients_one_register(tmp_path):
    """Clients poll and send through nginx; one shard is killed with SIGKILL. Its clients get
    BAD_EVENT_QUEUE_ID (or a failed request), register again on a live shard and carry on; the
    other shards' clients notice nothing; every acknowledged send is in the database; the
    restarted shard rejoins and receives events without a restart of the others."""
    instance = tmp_path / "instance"
    shards = start_shards(instance, ["a", "b", "c"])
    proxy = NginxProxy(tmp_path / "nginx", shards)
    key = shards["a"].api_key
    try:
        queues = {}
        while set(queues) != {"a", "b", "c"}:  # one client per shard, registered through the proxy
            queue_id = register(proxy.url, key)
            queues.setdefault(shard_of(queue_id), queue_id)
        acknowledged, stop, errors = [], threading.Event(), []

        def sender():
            n = 0
            while not stop.is_set():
                n += 1
                try:
                    body = api(proxy.url, "POST", "messages", key, type="stream", to="general", topic="kill",
                               content=f"m{n}")
                except requests.RequestException:
                    continue
                if body.get("result") == "success":
                    acknowledged.append(body["id"])
                time.sleep(0.05)

        thread = threading.Thread(target=sender)
        thread.start()
        try:
            wait_for(lambda: len(acknowledged) >= 5, timeout=60)
            shards["b"].process.send_signal(signal.SIGKILL)
            shards["b"].process.wait(timeout=30)
            # The dead shard's client: its next poll fails or answers BAD_EVENT_QUEUE_ID.
            failed = api(proxy.url, "GET", "events", key, queue_id=queues["b"], last_event_id=-1, dont_block="true")
            assert failed.get("code") == "BAD_EVENT_QUEUE_ID", failed
            renewed = register(proxy.url, key)
            assert shard_of(renewed) in ("a", "c")
            mark = len(acknowledged)
            wait_for(lambda: len(acknowledged) >= mark + 5, timeout=60)
        finally:
            stop.set()
            thread.join(60)
        # The survivors' queues and the renewed one hold every acknowledged message from here on.
        for queue_id in (queues["a"], queues["c"], renewed):
            events = poll(proxy.url, key, queue_id, want=lambda ev: acknowledged[-1] in [e["message"]["id"] for e in ev])
            ids = [e["message"]["id"] for e in events]
            assert ids == sorted(ids)
        for queue_id in (queues["a"], queues["c"]):
            ids = [e["message"]["id"] for e in poll(proxy.url, key, queue_id,
                                                  want=lambda ev: acknowledged[-1] in [e["message"]["id"] for e in ev])]
            assert set(acknowledged) <= set(ids)  # the other shards lost nothing
        narrow = json.dumps([{"operator": "topic", "operand": "kill"}])
        stored = api(proxy.url, "GET", "messages", key, anchor="newest", num_before=5000, num_after=0,
                     narrow=narrow)["messages"]
        assert set(acknowledged) <= {m["id"] for m in stored}
        # The killed shard comes back on its port; the proxy sends it work again.
        shards["b"] = restart_shard(instance, "b", shards["b"].port)
        rejoined = register(shards["b"].url, key)
        new_id = send(shards["c"].url, key, "after the restart", topic="kill")
        events = poll(shards["b"].url, key, rejoined, want=lambda ev: ev)
        assert [e["message"]["id"] for e in events] == [new_id]
    finally:
        proxy.stop()
        for shard in shards.values():
            if shard.process.poll() is None:
                shard.stop()
