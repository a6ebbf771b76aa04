#!/usr/bin/env python3
"""Messaging benchmark on a large history (issue 3).

Builds (once, cached in --workdir) a database of --messages messages: 50 users, 20 channels of
varied size (one with all 50 users), direct messages, some long threads; about 5% of each
user's messages unread. Then prints, each beside a baseline measured in the same run:

  fetch   GET /messages newest 100 in a channel, a topic, is:unread and a search narrow
          (in-process Flask client) vs the same rows by raw SQL
  send    POST /messages to the 50-subscriber channel at concurrency 1 and 16 over real HTTP
          against `chat-appliance serve`, vs a trivial endpoint on the same Flask + waitress +
          peewee stack that does one INSERT and COMMIT
  flags   POST /messages/flags/narrow over 1000 messages vs a raw SQL UPDATE of the same rows

Targets: channel-narrow fetch p50 under 15 ms and within 3x of raw SQL; send throughput at
concurrency 16 at least half the one-INSERT baseline; no figure that grows with total history
(compare runs with --messages 100000 and 1000000).
"""

import argparse
import base64
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

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
    from chat_appliance.db import write_transaction
    from chat_appliance.models import Message, database

    rng = random.Random(seed)
    create_app({"INSTANCE_PATH": str(instance), "PASSWORD_HASH_METHOD": FAST_HASH, "LOG_REQUESTS": False,
                "RATE_LIMITING": False})
    with database.connection_context():
        realm, owner = do_create_realm("Bench", "bench.example", "http://bench.example", "owner@bench.example",
                                       "Owner", PASSWORD, password_method=FAST_HASH)
        users = [owner] + [do_create_user(realm, f"user{i}@bench.example", PASSWORD, f"User {i}",
                                          password_method=FAST_HASH) for i in range(1, 50)]
        with write_transaction():
            streams, _ = do_create_streams(realm, [(f"channel-{i}", "") for i in range(20)], invite_only=False,
                                           history_public_to_subscribers=None, creator=owner)
        channels = [streams[f"channel-{i}"] for i in range(20)]
        members = {}
        for index, stream in enumerate(channels):
            chosen = users if index == 0 else rng.sample(users, rng.randint(5, 30))
            if owner not in chosen:
                chosen = [owner] + chosen
            subscribe_users_to_streams([stream], chosen, notify=False)
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
        user = UserProfile.get(UserProfile.email == "user1@bench.example")
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
        "is:unread": (f"SELECT {columns} FROM user_message um JOIN message m ON m.id = um.message_id WHERE"
                      " um.user_profile_id = ? AND (um.flags & 1) = 0 ORDER BY um.message_id DESC LIMIT 100",
                      (user.id,)),
        "search": (f"SELECT {columns} FROM user_message um JOIN message m ON m.id = um.message_id WHERE"
                   " um.user_profile_id = ? AND m.id IN (SELECT rowid FROM message_search WHERE message_search"
                   " MATCH '\"deploy\"* AND \"latency\"*') ORDER BY um.message_id DESC LIMIT 100", (user.id,)),
    }
    return app, user, auth, narrows, raw


def bench_fetch(instances, repeat):
    """p50 of GET /messages for four narrows beside the same rows by raw SQL, for each instance.
    Rounds alternate between instances, so every size sees the same machine load."""
    import json

    from chat_appliance.db import init_database
    from chat_appliance.models import database

    setups = {instance: fetch_setup(instance) for instance in instances}
    samples = {(instance, name, kind): [] for instance in instances for name in ("channel", "topic", "is:unread",
                                                                                 "search") for kind in "ar"}
    for round_number in range(repeat + 1):
        for instance, (app, _user, auth, narrows, raw) in setups.items():
            init_database(app.config["DATABASE_URL"])
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
                    database.execute_sql(sql, args).fetchall()
                raw_time = time.perf_counter() - started
                if round_number:  # the first round warms caches
                    samples[(instance, name, "a")].append(api_time)
                    samples[(instance, name, "r")].append(raw_time)
    results = {instance: {name: (median_ms(samples[(instance, name, "a")]), median_ms(samples[(instance, name, "r")]))
                          for name in ("channel", "topic", "is:unread", "search")} for instance in instances}
    last = instances[-1]
    init_database(setups[last][0].config["DATABASE_URL"])
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
    import sys
    from flask import Flask, jsonify
    from peewee import SqliteDatabase
    import waitress
    db = SqliteDatabase(sys.argv[2], pragmas={"journal_mode": "wal", "synchronous": "normal",
                                              "foreign_keys": 1, "busy_timeout": 10000})
    db.execute_sql("CREATE TABLE IF NOT EXISTS row (id INTEGER PRIMARY KEY, body TEXT)")
    app = Flask(__name__)
    @app.post("/api/v1/messages")
    def insert():
        with db.connection_context():
            with db.atomic("IMMEDIATE"):
                cursor = db.execute_sql("INSERT INTO row (body) VALUES (?)", ("hello",))
        return jsonify(result="success", msg="", id=cursor.lastrowid)
    waitress.serve(app, host="127.0.0.1", port=int(sys.argv[1]), threads=16, _quiet=True)
""")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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


def throughput(url, auth, data, concurrency, count):
    """Messages per second for `count` POSTs spread over `concurrency` threads."""
    import requests

    per_thread = count // concurrency
    errors = []

    def worker():
        with requests.Session() as session:
            for _ in range(per_thread):
                response = session.post(url, data=data, auth=auth, timeout=30)
                if response.status_code != 200:
                    errors.append(response.text)

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise SystemExit(f"send errors: {errors[:3]}")
    return per_thread * concurrency / elapsed


def bench_send(instance, workdir, count):
    """POST /messages throughput at concurrency 1 and 16, beside the one-INSERT baseline."""
    from chat_appliance.models import UserProfile, database

    with database.connection_context():
        user = UserProfile.get(UserProfile.email == "user2@bench.example")
    results = {}
    port = free_port()
    serve = subprocess.Popen([sys.executable, "-m", "chat_appliance", "serve", "--instance", str(instance),
                              "--port", str(port), "--quiet", "--threads", "24"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    baseline_script = Path(workdir) / "baseline_insert.py"
    baseline_script.write_text(BASELINE_APP)
    base_port = free_port()
    baseline = subprocess.Popen([sys.executable, str(baseline_script), str(base_port),
                                 str(Path(workdir) / "baseline.sqlite3")])
    try:
        wait_for(f"http://127.0.0.1:{port}/api/v1/server_settings", serve)
        wait_for(f"http://127.0.0.1:{base_port}/", baseline)
        data = {"type": "stream", "to": "channel-0", "topic": "bench", "content": "a benchmark message"}
        for concurrency in (1, 16):
            ours = throughput(f"http://127.0.0.1:{port}/api/v1/messages", (user.email, user.api_key), data,
                              concurrency, count)
            base = throughput(f"http://127.0.0.1:{base_port}/api/v1/messages", None, {}, concurrency, count)
            results[concurrency] = (ours, base)
    finally:
        for proc in (serve, baseline):
            proc.terminate()
            proc.wait(timeout=10)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000, help="history size (default 1,000,000)")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "chat-appliance-bench"),
                        help="where the generated instance is cached (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=30, help="samples per fetch figure (default 30)")
    parser.add_argument("--sends", type=int, default=480, help="messages sent per throughput figure (default 480)")
    parser.add_argument("--compare", type=int, default=None, metavar="N",
                        help="also fetch from an N-message history, interleaved, to show figures do not grow "
                             "with history (e.g. --compare 100000)")
    args = parser.parse_args()

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
    send = bench_send(instance, args.workdir, args.sends)

    print(f"\nHistory: {args.messages:,} messages")
    print(f"{'GET /messages newest 100':30}{'p50':>10}{'raw SQL':>10}{'ratio':>8}")
    for name, (ours, raw) in fetch.items():
        print(f"  {name:28}{ours:>8.1f}ms{raw:>8.1f}ms{ours / raw:>7.1f}x")
    if args.compare:
        small = fetch_by_size[instances[0]]
        print(f"Same fetches on {args.compare:,} messages (interleaved): p50, and {args.messages:,} / {args.compare:,}")
        for name, (ours, _raw) in small.items():
            print(f"  {name:28}{ours:>8.1f}ms{fetch[name][0] / ours:>9.2f}x")
    print(f"{'flags/narrow, 1000 messages':30}{flags[0]:>8.1f}ms{flags[1]:>8.1f}ms{flags[0] / flags[1]:>7.1f}x")
    print(f"{'POST /messages (50 subscribers)':30}{'msg/s':>10}{'1-INSERT':>10}{'ratio':>8}")
    for concurrency, (ours, base) in send.items():
        print(f"  concurrency {concurrency:<16}{ours:>10.0f}{base:>10.0f}{ours / base:>7.2f}x")


if __name__ == "__main__":
    main()
