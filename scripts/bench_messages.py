#!/usr/bin/env python3
"""Messaging benchmark on a large history.

Builds (once, cached in --workdir) a database of --messages messages: 50 users, 20 channels of
varied size (one with all 50 users), direct messages, some long threads; about 5% of each
user's messages unread. Then prints, each beside a baseline measured in the same run:

  fetch   GET /messages newest 100 in a channel, a topic, is:unread and a search narrow
          (in-process Flask client) vs the same rows by raw SQL
  send    POST /messages (200-byte messages) to the 50-subscriber channel with 1 and 16 wrk
          connections against a default `chat-appliance serve` (rate limits off), each vs the
          pinned baseline ("limit B"): Flask + waitress + HTTP Basic + one peewee INSERT and
          COMMIT per request (WAL, synchronous=NORMAL), driven by the same wrk
  me      GET /users/me with 1 and 16 wrk connections vs the bare-framework baseline
          (scripts/bare_flask.py: Flask + HTTP Basic, no database, under serve's own server)
  cpu     for each wrk run, the server's CPU time (all threads, user and system) per request,
          and the baseline's
  flags   POST /messages/flags/narrow over 1000 messages vs a raw SQL UPDATE of the same rows

Targets: sends at 1 client >= 0.3x limit B, at 16 clients >= 0.5x with p99 <= 100 ms;
GET /users/me at 16 clients >= 0.8x the bare-framework baseline; channel fetch no worse than
before (<= 5x raw SQL + json.dumps at 5,000 and 1,000,000 messages, no figure that
grows with total history: compare runs with --messages 5000 --compare 1000000); RSS after the
load <= 60 MiB; server CPU per request at most 0.3 ms for GET /users/me and 1.0 ms for a send
at 16 clients. Needs `wrk` (apt-get install wrk).
"""

import argparse
import base64
import os
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from benchlib import free_ports

WORDS = ("apple banana cherry delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
         "quebec romeo sierra tango uniform victor whiskey xray yankee zulu deploy release bug fix review "
         "meeting lunch coffee build test merge branch server client queue latency memory").split()
FAST_HASH = "pbkdf2:sha256:1000"
PASSWORD = "bench-password"


def progress(label, done, total):
    """A one-line progress bar on stderr."""
    width = 40
    filled = int(width * done / max(total, 1))
    sys.stderr.write(f"\r  {label:<22} [{'#' * filled}{'.' * (width - filled)}] {done:>9,}/{total:,}")
    if done >= total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def build_database(instance, total_messages, seed=7):
    """Create the organization with actions, then bulk-insert the history with raw SQL."""
    from chat_appliance.actions.channels import do_create_streams, subscribe_users_to_streams
    from chat_appliance.actions.messages import get_or_create_dm_group
    from chat_appliance.actions.realm import do_create_realm
    from chat_appliance.actions.users import do_create_user
    from chat_appliance.app import create_app
    from chat_appliance.config import Limits
    from chat_appliance.db.connection import write_transaction
    from chat_appliance.models import Message, database

    rng = random.Random(seed)
    app = create_app({"INSTANCE_PATH": str(instance), "PASSWORD_HASH_METHOD": FAST_HASH, "LOG_REQUESTS": False,
                      "RATE_LIMITING": False})
    limits = Limits.from_config(app.config)
    with database.connection_context():
        realm, owner = do_create_realm("Bench", "bench.example", "http://bench.example", "owner@bench.example",
                                       "Owner", PASSWORD, password_method=FAST_HASH)
        users = [owner] + [do_create_user(realm, f"member{i}@bench.example", PASSWORD, f"User {i}",
                                          password_method=FAST_HASH) for i in range(1, 50)]
        with write_transaction():
            streams, _ = do_create_streams(realm, [(f"channel-{i}", "") for i in range(20)], invite_only=False,
                                           history_public_to_subscribers=None, creator=owner, limits=limits)
        channels = [streams[f"channel-{i}"] for i in range(20)]
        members = {}
        for index, stream in enumerate(channels):
            chosen = users if index == 0 else rng.sample(users, rng.randint(5, 30))
            if owner not in chosen:
                chosen = [owner] + chosen
            subscribe_users_to_streams([stream], chosen)
            members[stream.id] = [u.id for u in chosen]
        with write_transaction():
            dm_groups = [get_or_create_dm_group(rng.sample(users, rng.randint(2, 4))) for _ in range(60)]
        dm_members = {g.recipient_id: [int(x) for x in g.member_key.split(",")] for g in dm_groups}
        next_id = (Message.select(Message.id).order_by(Message.id.desc()).scalar() or 0) + 1
        conn = database.connection()
        now = int(time.time()) - total_messages
        batch = 5000
        for start in range(0, total_messages, batch):
            message_rows, um_rows, fts_rows = [], [], []
            for offset in range(min(batch, total_messages - start)):
                mid = next_id + start + offset
                if rng.random() < 0.1:
                    recipient_id = rng.choice(dm_groups).recipient_id
                    stream_id, topic, audience = None, "", dm_members[recipient_id]
                else:
                    stream = channels[0] if rng.random() < 0.3 else rng.choice(channels)
                    recipient_id, stream_id, audience = stream.recipient_id, stream.id, members[stream.id]
                    # A few long threads, many short topics.
                    topic = f"thread {rng.randint(0, 4)}" if rng.random() < 0.3 else f"topic {rng.randint(0, 3000)}"
                sender = rng.choice(audience)
                text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 30)))
                html = f"<p>{text}</p>"
                message_rows.append((mid, realm.id, sender, recipient_id, stream_id, topic, topic.casefold(), text,
                                     html, now + start + offset, "bench", 0, 0, 0))
                for uid in audience:
                    um_rows.append((uid, mid, 0 if rng.random() < 0.05 else 1))
                fts_rows.append((mid, topic, text))
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(
                "INSERT INTO message (id, realm_id, sender_id, recipient_id, stream_id, topic, topic_key, content,"
                " rendered_content, date_sent, sending_client, is_me_message, has_link, has_image, has_attachment)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [row + (0,) for row in message_rows])
            conn.executemany("INSERT INTO user_message (user_profile_id, message_id, flags) VALUES (?,?,?)", um_rows)
            conn.executemany("INSERT INTO message_search (rowid, topic, body) VALUES (?,?,?)", fts_rows)
            conn.execute("COMMIT")
            progress("generating messages", start + len(message_rows), total_messages)
        conn.execute("ANALYZE")
        return {"channel": channels[0], "owner": owner}


def median_ms(samples):
    return statistics.median(samples) * 1000


def time_calls(call, repeat):
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return samples


def fetch_setup(instance):
    """An app on the instance, a user's auth header, the narrows and their raw-SQL twins."""
    from chat_appliance.app import create_app
    from chat_appliance.models import Realm, Stream, UserProfile, database

    # A benchmark is a load test: rate limits off.
    app = create_app({"INSTANCE_PATH": str(instance), "LOG_REQUESTS": False, "RATE_LIMITING": False})
    with database.connection_context():
        realm = Realm.select().first()
        user = UserProfile.get(UserProfile.email == "member1@bench.example")
        channel = Stream.get((Stream.realm == realm) & (Stream.name == "channel-0"))
    auth = {"Authorization": "Basic " + base64.b64encode(f"{user.email}:{user.api_key}".encode()).decode()}
    narrows = {
        "channel": [{"operator": "channel", "operand": channel.id}],
        "topic": [{"operator": "channel", "operand": channel.id}, {"operator": "topic", "operand": "thread 1"}],
        "is:unread": [{"operator": "is", "operand": "unread"}],
        "search": [{"operator": "search", "operand": "deploy latency"}],
    }
    columns = "m.id, m.sender_id, m.content, m.rendered_content, m.topic, m.date_sent, um.flags"
    raw = {
        "channel": (f"SELECT {columns} FROM message m LEFT JOIN user_message um ON um.message_id = m.id AND"
                    " um.user_profile_id = ? WHERE m.recipient_id = ? ORDER BY m.id DESC LIMIT 100",
                    (user.id, channel.recipient_id)),
        "topic": (f"SELECT {columns} FROM message m LEFT JOIN user_message um ON um.message_id = m.id AND"
                  " um.user_profile_id = ? WHERE m.recipient_id = ? AND m.topic_key = ? ORDER BY m.id DESC LIMIT 100",
                  (user.id, channel.recipient_id, "thread 1")),
        # The unread index's own condition (read and PENDING_UNREAD_INDEX clear), which the
        # planner needs in order to use it; the history here is bulk-inserted, so no row waits
        # outside the index (the server also looks up those of listed messages, and pays for it).
        "is:unread": (f"SELECT {columns} FROM user_message um JOIN message m ON m.id = um.message_id WHERE"
                      " um.user_profile_id = ? AND (um.flags & 2049) = 0 ORDER BY um.message_id DESC LIMIT 100",
                      (user.id,)),
        # Whole words, the matches read newest first until 100 are the user's, as the server
        # searches; prefixes (and an IN over every match) made this baseline 54 ms at a million.
        "search": (f"SELECT {columns} FROM message_search s CROSS JOIN user_message um ON um.message_id = s.rowid"
                   " AND um.user_profile_id = ? JOIN message m ON m.id = um.message_id WHERE s.message_search"
                   " MATCH '\"deploy\" AND \"latency\"' ORDER BY s.rowid DESC LIMIT 100", (user.id,)),
    }
    return app, user, auth, narrows, raw


def bench_fetch(instances, repeat):
    """p50 of GET /messages for four narrows beside the same rows by raw SQL turned into JSON
    (json.dumps of the rows as dicts, the issue's pinned baseline), for each instance.
    Rounds alternate between instances, so every size sees the same machine load."""
    import json

    from chat_appliance.db import runtime
    from chat_appliance.web.context import EXTENSION
    from chat_appliance.models import database

    setups = {}
    handles = {}
    for instance in instances:
        setups[instance] = fetch_setup(instance)
        # Each app's own runtime (its pooled database), made current per round for the raw SQL.
        handles[instance] = setups[instance][0].extensions[EXTENSION].runtime
    samples = {(instance, name, kind): [] for instance in instances for name in ("channel", "topic", "is:unread",
                                                                                 "search") for kind in "ar"}
    for round_number in range(repeat + 1):
        for instance, (app, _user, auth, narrows, raw) in setups.items():
            runtime.install(handles[instance])
            client = app.test_client()
            for name, narrow in narrows.items():
                params = {"anchor": "newest", "num_before": "100", "num_after": "0", "narrow": json.dumps(narrow)}
                started = time.perf_counter()
                response = client.get("/api/v1/messages", query_string=params, headers=auth)
                api_time = time.perf_counter() - started
                assert response.status_code == 200, response.get_json()
                sql, args = raw[name]
                started = time.perf_counter()
                with database.connection_context():
                    cursor = database.execute_sql(sql, args)
                    names = [column[0] for column in cursor.description]
                    json.dumps([dict(zip(names, row)) for row in cursor.fetchall()])
                raw_time = time.perf_counter() - started
                if round_number:  # the first round warms caches
                    samples[(instance, name, "a")].append(api_time)
                    samples[(instance, name, "r")].append(raw_time)
    results = {instance: {name: (median_ms(samples[(instance, name, "a")]), median_ms(samples[(instance, name, "r")]))
                          for name in ("channel", "topic", "is:unread", "search")} for instance in instances}
    last = instances[-1]
    runtime.install(handles[last])
    return results, setups[last][0], setups[last][1]


def bench_flags(app, user, repeat):
    """flags/narrow over 1000 messages (add then remove starred), beside a raw UPDATE of the same rows."""
    import json

    from chat_appliance.models import database

    client = app.test_client()
    auth = {"Authorization": "Basic " + base64.b64encode(f"{user.email}:{user.api_key}".encode()).decode()}
    state = {"op": "add"}

    def api_call():
        response = client.post("/api/v1/messages/flags/narrow", headers=auth, data={
            "anchor": "newest", "num_before": "999", "num_after": "0", "narrow": json.dumps([]),
            "op": state["op"], "flag": "starred"})
        assert response.status_code == 200, response.get_json()
        state["op"] = "remove" if state["op"] == "add" else "add"

    def raw_call():
        with database.connection_context():
            with database.atomic("IMMEDIATE"):
                database.execute_sql(
                    "UPDATE user_message SET flags = flags # 2 WHERE user_profile_id = ? AND message_id IN"
                    " (SELECT message_id FROM user_message WHERE user_profile_id = ? ORDER BY message_id DESC"
                    " LIMIT 1000)".replace("#", "|"), (user.id, user.id))

    api_call(), raw_call()
    return median_ms(time_calls(api_call, repeat)), median_ms(time_calls(raw_call, repeat))


BASELINE_APP = textwrap.dedent("""
    # The pinned send baseline: Flask + waitress + HTTP Basic + one peewee INSERT and COMMIT per
    # request, on SQLite in WAL mode with synchronous=NORMAL.
    import sys
    from flask import Flask, jsonify
    from flask_httpauth import HTTPBasicAuth
    from peewee import SqliteDatabase
    import waitress
    db = SqliteDatabase(sys.argv[2], pragmas={"journal_mode": "wal", "synchronous": "normal",
                                              "foreign_keys": 1, "busy_timeout": 10000})
    db.execute_sql("CREATE TABLE IF NOT EXISTS row (id INTEGER PRIMARY KEY, body TEXT)")
    app = Flask(__name__)
    auth = HTTPBasicAuth()
    @auth.verify_password
    def verify(email, key):
        return email == "bench@example.com" and key == "bench-key"
    @app.post("/api/v1/messages")
    @auth.login_required
    def insert():
        with db.connection_context():
            with db.atomic("IMMEDIATE"):
                cursor = db.execute_sql("INSERT INTO row (body) VALUES (?)", ("hello",))
        return jsonify(result="success", msg="", id=cursor.lastrowid)
    @app.get("/api/v1/users/me")
    @auth.login_required
    def me():
        return jsonify(result="success", msg="", email=auth.current_user())
    waitress.serve(app, host="127.0.0.1", port=int(sys.argv[1]), threads=16, _quiet=True)
""")

WRK_SCRIPT = """
wrk.method = "{method}"
wrk.body = "{body}"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.headers["Authorization"] = "Basic {token}"
"""


def run_wrk(url, *, method, body, email, key, connections, seconds, workdir, pid=None):
    """(requests per second, p50 ms, p99 ms, server CPU ms per request) from wrk; errors abort the
    benchmark. The CPU is that of process `pid` (every thread, user and system) over the run,
    divided by the requests wrk completed; None without a pid."""
    import re
    import shutil
    from urllib.parse import urlencode

    import psutil

    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed for the send figures: apt-get install wrk")
    script = Path(workdir) / f"wrk-{method.lower()}.lua"
    token = base64.b64encode(f"{email}:{key}".encode()).decode()
    script.write_text(WRK_SCRIPT.format(method=method, body=urlencode(body), token=token))
    server = psutil.Process(pid) if pid else None
    before = sum(server.cpu_times()[:2]) if server else 0.0
    result = subprocess.run(["wrk", "-t", str(min(connections, 2)), "-c", str(connections), "-d", f"{seconds}s",
                             "--latency", "-s", str(script), url], capture_output=True, text=True, check=True)
    spent = sum(server.cpu_times()[:2]) - before if server else 0.0
    out = result.stdout
    if "Non-2xx" in out or "Socket errors" in out:
        raise SystemExit(f"wrk saw errors against {url}:\n{out}")

    def percentile(name):
        match = re.search(rf"^\s+{name}%\s+([\d.]+)(us|ms|s)", out, re.M)
        value, unit = float(match.group(1)), match.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    done = int(re.search(r"(\d+) requests in", out).group(1))
    return rate, percentile("50"), percentile("99"), (spent * 1000 / done if server and done else None)


def wait_for(url, proc):
    import requests

    while True:
        try:
            requests.get(url, timeout=1)
            return
        except requests.ConnectionError:
            if proc.poll() is not None:
                raise SystemExit(f"server exited: {url}")
            time.sleep(0.05)


def bench_send(instance, workdir, seconds):
    """POST /messages at 1 and 16 connections (wrk), then GET /users/me, each beside the pinned
    baseline measured right after it, then GET /messages over HTTP and both servers' resident
    memory; returns {figure: ((rate, p50, p99), (rate, p50, p99))} and the memory figures."""
    import json
    from urllib.parse import urlencode

    import psutil

    from chat_appliance.models import UserProfile, database

    with database.connection_context():
        user = UserProfile.get(UserProfile.email == "member2@bench.example")
    # Three servers start side by side: their ports are picked together, distinct.
    port, base_port, bare_port = free_ports(3)
    env = dict(os.environ, CHAT_APPLIANCE_RATE_LIMITING="false")
    serve = subprocess.Popen([sys.executable, "-m", "chat_appliance", "serve", "--instance", str(instance), "--create",
                              "--port", str(port), "--quiet"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    baseline_script = Path(workdir) / "baseline_insert.py"
    baseline_script.write_text(BASELINE_APP)
    baseline_db = Path(workdir) / "baseline.sqlite3"
    baseline = subprocess.Popen([sys.executable, str(baseline_script), str(base_port), str(baseline_db)],
                                stderr=subprocess.DEVNULL)
    bare = subprocess.Popen([sys.executable, str(Path(__file__).with_name("bare_flask.py")), str(bare_port)],
                            stderr=subprocess.DEVNULL)
    results = {}
    try:
        wait_for(f"http://127.0.0.1:{port}/api/v1/server_settings", serve)
        wait_for(f"http://127.0.0.1:{base_port}/", baseline)
        wait_for(f"http://127.0.0.1:{bare_port}/api/v1/server_settings", bare)
        message = {"type": "stream", "to": "channel-0", "topic": "bench", "content": "x" * 200}
        ours_auth = dict(email=user.email, key=user.api_key)
        base_auth = dict(email="bench@example.com", key="bench-key")
        for connections in (1, 16):
            ours = run_wrk(f"http://127.0.0.1:{port}/api/v1/messages", method="POST", body=message,
                           connections=connections, seconds=seconds, workdir=workdir, pid=serve.pid, **ours_auth)
            base = run_wrk(f"http://127.0.0.1:{base_port}/api/v1/messages", method="POST", body={},
                           connections=connections, seconds=seconds, workdir=workdir, pid=baseline.pid, **base_auth)
            results[f"POST /messages, {connections} client(s)"] = (ours, base)
        for connections in (1, 16):
            ours = run_wrk(f"http://127.0.0.1:{port}/api/v1/users/me", method="GET", body={},
                           connections=connections, seconds=seconds, workdir=workdir, pid=serve.pid, **ours_auth)
            base = run_wrk(f"http://127.0.0.1:{bare_port}/api/v1/users/me", method="GET", body={},
                           connections=connections, seconds=seconds, workdir=workdir, pid=bare.pid, **base_auth)
            results[f"GET /users/me, {connections} client(s), vs bare"] = (ours, base)
        # The fetch over HTTP too (no baseline: the in-process figures compare it with raw SQL),
        # so that the memory read below is after both the send and the fetch load.
        narrow = json.dumps([{"operator": "channel", "operand": "channel-0"}])
        fetch_url = (f"http://127.0.0.1:{port}/api/v1/messages?" + urlencode(
            {"anchor": "newest", "num_before": 100, "num_after": 0, "narrow": narrow}))
        fetched = run_wrk(fetch_url, method="GET", body={}, connections=4, seconds=seconds, workdir=workdir,
                          **ours_auth)
        results["GET /messages newest 100, 4 clients"] = (fetched, None)
        results["RSS after this load, MiB"] = (psutil.Process(serve.pid).memory_info().rss / 2**20,
                                               psutil.Process(baseline.pid).memory_info().rss / 2**20)
    finally:
        for proc in (serve, baseline, bare):
            proc.terminate()
            proc.wait(timeout=10)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000, help="history size (default 1,000,000)")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "chat-appliance-bench"),
                        help="where the generated instance is cached (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=30, help="samples per fetch figure (default 30)")
    parser.add_argument("--seconds", type=int, default=10, help="duration of each wrk run (default 10)")
    parser.add_argument("--compare", type=int, default=None, metavar="N",
                        help="also fetch from an N-message history, interleaved, to show figures do not grow "
                             "with history (e.g. --compare 100000)")
    args = parser.parse_args()

    # As bench_footprint.py: the server runs from bytecode, as pip installs it. A module changed
    # since its last compile would otherwise be compiled on the first request that imports it,
    # and wrk, which corrects for coordinated omission, turns that one slow answer into dozens
    # of slow samples at one client.
    import compileall

    import chat_appliance
    compileall.compile_dir(os.path.dirname(chat_appliance.__file__), quiet=1)

    sizes = [args.compare, args.messages] if args.compare else [args.messages]
    instances = []
    for size in sizes:
        instance = Path(args.workdir) / f"instance-{size}"
        if not (instance / "chat.sqlite3").exists():
            instance.mkdir(parents=True, exist_ok=True)
            print(f"Building a {size:,}-message database in {instance} (cached for later runs)...", file=sys.stderr)
            started = time.perf_counter()
            build_database(instance, size)
            print(f"  built in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        instances.append(instance)
    instance = instances[-1]

    fetch_by_size, app, user = bench_fetch(instances, args.repeat)
    fetch = fetch_by_size[instance]
    flags = bench_flags(app, user, max(5, args.repeat // 3))
    send = bench_send(instance, args.workdir, args.seconds)

    print(f"\nHistory: {args.messages:,} messages")
    print(f"{'GET /messages newest 100':30}{'p50':>10}{'raw SQL':>10}{'ratio':>8}")
    for name, (ours, raw) in fetch.items():
        print(f"  {name:28}{ours:>8.1f}ms{raw:>8.1f}ms{ours / raw:>7.1f}x")
    if args.compare:
        small = fetch_by_size[instances[0]]
        print(f"Same fetches on {args.compare:,} messages (interleaved): p50, raw SQL, ratio, and "
              f"{args.messages:,} / {args.compare:,}")
        for name, (ours, raw) in small.items():
            print(f"  {name:28}{ours:>8.1f}ms{raw:>8.1f}ms{ours / raw:>7.1f}x{fetch[name][0] / ours:>9.2f}x")
    print(f"{'flags/narrow, 1000 messages':30}{flags[0]:>8.1f}ms{flags[1]:>8.1f}ms{flags[0] / flags[1]:>7.1f}x")
    print(f"{'over HTTP (wrk)':40}{'req/s':>8}{'p50':>9}{'p99':>9}  {'baseline req/s, p50, p99':>26}{'ratio':>7}"
          f"{'server CPU/request, baseline':>31}")
    memory = send.pop("RSS after this load, MiB")
    fetched = send.pop("GET /messages newest 100, 4 clients")[0]
    for name, ((rate, p50, p99, cpu), (b_rate, b_p50, b_p99, b_cpu)) in send.items():
        print(f"  {name:38}{rate:>8.0f}{p50:>7.1f}ms{p99:>7.1f}ms  {b_rate:>10.0f}{b_p50:>7.1f}ms{b_p99:>7.1f}ms"
              f"{rate / b_rate:>7.2f}x{cpu:>18.3f}ms{b_cpu:>8.3f}ms")
    print(f"  {'GET /messages, 4 clients':28}{fetched[0]:>8.0f}{fetched[1]:>7.1f}ms{fetched[2]:>7.1f}ms")
    print(f"RSS after this load: chat-appliance {memory[0]:.0f} MiB (target <= 60), baseline {memory[1]:.0f} MiB")


if __name__ == "__main__":
    main()
