#!/usr/bin/env python3
"""A big organization, built through the import path and then served.

Writes a Zulip export (tests/support/big_export.py): --people people (1% admins, 2.5% guests, 1.5%
bots), 300 channels, everyone in general and in 20-40 others, --messages messages over three
years (85% in channels over ~40,000 topics at a million, 15% direct, one-to-one and groups),
reactions, uploads, 0-5,000 unread each. Channels are of uneven size, most traffic in the small
ones: about 68 per-user rows a message, near the density of the issue's outside export
(--uniform-channels: every channel about 200 members, about 250 rows a message, the shape of the
runs before 2026-12-08). Then:

- the export's idle people (--idle-share, a quarter by default) are soft-deactivated: rows of their
  plain channel messages after they stopped coming are not in it (nor in the import); the serve
  part times the first request of the person idle longest (it adds their missing rows).
- import: `chat-appliance import-zulip` in its own process; messages/s, and peak RSS; baseline:
  reading and parsing the same JSON files.
- serve: `chat-appliance serve` on the imported instance, and over HTTP:
  /register as the web client and as the mobile app call it, for a member of 30 channels with
  3,000 unread (p50, payload bytes); GET /messages for the newest 100 of the big channel, for
  is:unread of the person with 5,000 unread, for a one-word search, each beside raw SQL for the
  same rows and beside the floor of a trivial request (GET /users/me); a send to general (p50,
  p95); the server's RSS idle, and after 200 people registered and fetched.

Figures are ratios against baselines measured in the same run. `--postgres URL` imports into a
new database on that server (its name is made from the URL's, and dropped at the end).

`--workdir DIR --reuse` serves the instance an earlier run left in DIR (SQLite only) instead of
writing and importing again: a million messages take an hour to import, a /register a fraction
of a second. `--register-only` measures /register alone (and prints where its bytes go).
"""

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchlib import admin, free_port  # noqa: E402  (scripts/ is first on sys.path when run)

# What the clients send with /register (the web client's app.js; zulip-flutter's api/route/events.dart).
WEB_REGISTER = {"apply_markdown": "true", "client_gravatar": "true", "slim_presence": "true",
                "client_capabilities": json.dumps({
                    "notification_settings_null": True, "bulk_message_deletion": True,
                    "user_avatar_url_field_optional": True, "stream_typing_notifications": True,
                    "user_settings_object": True, "linkifier_url_template": True,
                    "user_list_incomplete": True, "include_deactivated_groups": True,
                    "archived_channels": True, "empty_topic_name": True})}
# The app asks for avatar URLs (client_gravatar false) and declares neither user_list_incomplete
# nor archived_channels (tests/support/flutter_app.py, its registerQueue).
MOBILE_REGISTER = {"apply_markdown": "true", "client_gravatar": "false", "slim_presence": "true",
                   "client_capabilities": json.dumps({
                       "notification_settings_null": True, "bulk_message_deletion": True,
                       "user_avatar_url_field_optional": True, "stream_typing_notifications": True,
                       "user_settings_object": True, "include_deactivated_groups": True,
                       "empty_topic_name": True, "individual_emoji_changes": True})}


def progress(label, done, total):
    if done == total or done % 50_000 == 0:
        print(f"  {label}: {done}/{total}", file=sys.stderr, flush=True)


def parse_only(folder):
    """The import's baseline: every message file read and its JSON parsed, by the parser the
    import uses (the standard library's)."""
    started = time.perf_counter()
    for path in sorted(Path(folder).glob("messages-*.json")):
        json.loads(path.read_bytes())
    return time.perf_counter() - started


def run_import(export, instance, env, helpers=None):
    """`import-zulip` in its own process: (seconds, peak RSS MiB of that process and its helper
    processes together, sampled every 0.1 s, and the largest any one of them reached)."""
    import psutil

    command = [sys.executable, "-m", "chat_appliance", "import-zulip", str(export), "--instance", str(instance)]
    started = time.perf_counter()
    process = subprocess.Popen(command + ([] if helpers is None else ["--helpers", str(helpers)]), env=env,
                               stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    tree, peak = psutil.Process(process.pid), 0
    while process.poll() is None:
        try:
            peak = max(peak, sum(p.memory_info().rss for p in [tree, *tree.children(recursive=True)]))
        except psutil.Error:  # a helper that ended meanwhile
            pass
        time.sleep(0.1)
    elapsed = time.perf_counter() - started
    if process.returncode:
        raise subprocess.CalledProcessError(process.returncode, command)
    return elapsed, peak / 2**20, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def api_keys(instance):
    from chat_appliance.config import load_config
    from chat_appliance.db.connection import init_database
    from chat_appliance.models import UserProfile, database

    config = load_config(instance)
    init_database(config["DATABASE_URL"])
    with database.connection_context():
        return {u.id: (u.email, u.api_key) for u in UserProfile.select() if not u.is_bot}, config["DATABASE_URL"]


def timed(call, repeat):
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def p50(samples):
    return statistics.median(samples)


def p95(samples):
    return sorted(samples)[max(0, int(len(samples) * 0.95) - 1)]


class RawSQL:
    """The same rows as the server's fetches, straight from the database (the fetch baselines)."""

    def __init__(self, url):
        if url.startswith("sqlite:"):
            self.conn = sqlite3.connect(url.split("sqlite:///", 1)[1])
            self.param = "?"
        else:
            import psycopg2

            self.conn = psycopg2.connect(url)
            self.param = "%s"

    def run(self, sql, *args):
        cursor = self.conn.cursor()
        cursor.execute(sql.replace("?", self.param), args)
        return cursor.fetchall()

    def channel(self, stream_id):
        return self.run("SELECT id, sender_id, topic, rendered_content, date_sent FROM message "
                        "WHERE stream_id = ? ORDER BY id DESC LIMIT 100", stream_id)

    def unread(self, user_id):
        # The unread condition as the partial index user_message_unread states it (read, and the
        # server's bit for rows waiting to enter the index, which none are at rest): written as
        # `flags & 1 = 0`, the planner walks the person's whole history instead.
        return self.run("SELECT m.id, m.sender_id, m.topic, m.rendered_content, um.flags FROM user_message um "
                        "JOIN message m ON m.id = um.message_id WHERE um.user_profile_id = ? AND (um.flags & 2049) = 0 "
                        "ORDER BY um.message_id DESC LIMIT 100", user_id)

    def count_rows(self, user_id):
        return self.run("SELECT COUNT(*) FROM user_message WHERE user_profile_id = ?", user_id)[0][0]

    def search(self, user_id, word):
        # Through the full-text index, as the server searches: a LIKE over every message the
        # person received grows with their history and is no baseline for an indexed search.
        if self.param == "?":
            return self.run("SELECT m.id, m.sender_id, m.topic, m.rendered_content FROM message_search s "
                            "CROSS JOIN user_message um ON um.message_id = s.rowid AND um.user_profile_id = ? "
                            "JOIN message m ON m.id = um.message_id WHERE s.message_search MATCH ? "
                            "ORDER BY s.rowid DESC LIMIT 100", user_id, f'"{word}"')
        return self.run("SELECT m.id, m.sender_id, m.topic, m.rendered_content FROM message_search s "
                        "JOIN user_message um ON um.message_id = s.message_id AND um.user_profile_id = ? "
                        "JOIN message m ON m.id = um.message_id "
                        "WHERE s.document @@ to_tsquery('chat_english', ?) "
                        "ORDER BY um.message_id DESC LIMIT 100", user_id, word)


def register_breakdown(body):
    """KiB per top-level key of a /register response, the largest first."""
    state = json.loads(body)
    sizes = {key: len(json.dumps(value, separators=(",", ":"))) / 1024 for key, value in state.items()}
    return sorted(sizes.items(), key=lambda item: -item[1])


def nearest_unread(stats, keys, unread):
    """The person (of those with keys, not idle) whose unread count is nearest `unread`."""
    idle = set(stats["idle"])
    return min((u for u in keys if u not in idle and u in stats["unread"]),
               key=lambda u: (abs(stats["unread"][u] - unread), u))


def serve_figures(instance, env, stats, keys, database_url, repeat, register_only=False, sends=None,
                  also_unread=None):
    import psutil
    import requests

    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "chat_appliance", "serve", "--instance", str(instance),
                               "--port", str(port), "--quiet"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/api/v1"
    results = {}
    try:
        while True:
            try:
                requests.get(base + "/server_settings", timeout=1)
                break
            except requests.ConnectionError:
                if server.poll() is not None:
                    raise SystemExit("serve exited")
                time.sleep(0.1)
        session = requests.Session()

        def call(method, path, user, **params):
            response = session.request(method, base + path, auth=keys[user],
                                       **({"params": params} if method == "GET" else {"data": params}))
            response.raise_for_status()
            return response

        reader, heavy = stats["reader"], stats["unread_5k"]
        call("GET", "/users/me", reader)
        results["idle RSS MiB"] = psutil.Process(server.pid).memory_info().rss / 2**20
        for name, params in (("web", WEB_REGISTER), ("mobile", MOBILE_REGISTER)):
            body = call("POST", "/register", reader, **params).content
            results[f"/register ({name}) p50 ms"] = p50(timed(lambda p=params: call("POST", "/register", reader, **p),
                                                              repeat))
            results[f"/register ({name}) payload KiB"] = len(body) / 1024
            if register_only:
                top = ", ".join(f"{key} {kib:.0f}" for key, kib in register_breakdown(body)[:8])
                print(f"/register ({name}) KiB by key: {top}", flush=True)
        if also_unread is not None:
            # The same figure for another person, chosen by unread count: beside a smaller
            # organization's reader with as many unread, it separates what grows with the history
            # from what grows with the reader's own unread messages.
            other = nearest_unread(stats, keys, also_unread)
            label = (f"/register (web), a person with {stats['unread'][other]:,} unread of "
                     f"{stats['received'][other]:,} messages, p50 ms")
            results[label] = p50(timed(lambda: call("POST", "/register", other, **WEB_REGISTER), repeat))
        if register_only:
            return results
        floor = p50(timed(lambda: call("GET", "/users/me", reader), repeat))
        results["GET /users/me p50 ms (floor)"] = floor
        raw = RawSQL(database_url)
        big = json.dumps([{"operator": "channel", "operand": "big-channel"}])
        fetches = {
            "newest 100 of the big channel": (
                lambda: call("GET", "/messages", reader, anchor="newest", num_before=100, num_after=0, narrow=big),
                lambda: raw.channel(stats["big"])),
            "is:unread (5,000 unread)": (
                lambda: call("GET", "/messages", heavy, anchor="newest", num_before=100, num_after=0,
                             narrow=json.dumps([{"operator": "is", "operand": "unread"}])),
                lambda: raw.unread(heavy)),
            "search one word": (
                lambda: call("GET", "/messages", reader, anchor="newest", num_before=100, num_after=0,
                             narrow=json.dumps([{"operator": "search", "operand": "migration"}])),
                lambda: raw.search(reader, "migration")),
        }
        for name, (api, sql) in fetches.items():
            ours, base_sql = p50(timed(api, repeat)), p50(timed(sql, repeat))
            results[name] = (ours, base_sql, floor)
        # Soft deactivation: the first request of the person idle longest adds their missing rows.
        idle = [u for u in sorted(stats["idle"], key=stats["idle"].get) if u in keys]
        if idle:
            raw.rows_before = raw.count_rows(idle[0])
            started = time.perf_counter()
            call("GET", "/users/me", idle[0])
            results["an idle person's return: first GET /users/me ms"] = (time.perf_counter() - started) * 1000
            results["an idle person's return: its rows added"] = raw.count_rows(idle[0]) - raw.rows_before
        counter = iter(range(10 ** 9))
        sends = timed(lambda: call("POST", "/messages", reader, type="stream", to="general", topic="bench",
                                   content=f"send {next(counter)}"), sends or repeat * 2)
        results["send to general p50/p95 ms"] = (p50(sends), p95(sends))
        results["send to general p99 / max ms"] = (sorted(sends)[int(len(sends) * 0.99)], max(sends))
        for user in list(keys)[:200]:
            call("POST", "/register", user, **WEB_REGISTER)
            call("GET", "/messages", user, anchor="newest", num_before=100, num_after=0)
        results["RSS after 200 register+fetch MiB"] = psutil.Process(server.pid).memory_info().rss / 2**20
    finally:
        server.terminate()
        server.wait(timeout=30)
    return results


def load_stats(path):
    """The figures an earlier run wrote of its export (stats.json), with the user ids that JSON
    made strings back as integers."""
    stats = json.loads(path.read_text())
    stats["received"] = {int(k): v for k, v in stats["received"].items()}
    stats["unread"] = {int(k): v for k, v in stats["unread"].items()}
    return stats


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=1_000_000, help="messages (default 1,000,000)")
    parser.add_argument("--people", type=int, default=2000, help="people (default 2,000)")
    parser.add_argument("--channels", type=int, default=300, help="channels (default 300)")
    parser.add_argument("--repeat", type=int, default=20, help="samples per HTTP figure (default 20)")
    parser.add_argument("--postgres", metavar="URL", help="import into a new database on this PostgreSQL server")
    parser.add_argument("--workdir", help="where the export and instance go (default: a temporary folder)")
    parser.add_argument("--reuse", action="store_true",
                        help="serve the instance an earlier run left in --workdir, without exporting or importing")
    parser.add_argument("--sends", type=int, help="sends to general timed (default: twice --repeat)")
    parser.add_argument("--reuse-export", action="store_true",
                        help="import the export an earlier SQLite run left in --workdir (its stats.json) instead of "
                             "writing a new one: the same organization on both engines")
    parser.add_argument("--keep-database", action="store_true",
                        help="with --postgres, leave the imported database for a later look (its name is printed)")
    parser.add_argument("--register-only", action="store_true", help="measure /register alone")
    parser.add_argument("--idle-share", type=float, default=0.25,
                        help="share of the people long-term idle (soft-deactivated) in the export (default 0.25)")
    parser.add_argument("--uniform-channels", action="store_true",
                        help="draw each person's channels uniformly (every channel about 200 members), as the runs "
                             "before 2026-12-08 did, instead of by popularity")
    parser.add_argument("--also-unread", type=int, metavar="N",
                        help="also time /register (web) for the person whose unread count is nearest N (to set "
                             "beside a smaller organization's reader)")
    parser.add_argument("--helpers", type=int, default=None,
                        help="import-zulip's --helpers (processes reading the message files; default: its own)")
    args = parser.parse_args()
    if args.reuse and (not args.workdir or args.postgres):
        parser.error("--reuse needs --workdir, and works on SQLite only (--postgres drops its database)")
    if args.reuse_export and not (args.workdir and (Path(args.workdir) / "stats.json").exists()):
        parser.error("--reuse-export needs a --workdir where an earlier SQLite run left its export and stats.json")
    from tests.support.big_export import write_export

    work = Path(args.workdir or tempfile.mkdtemp(prefix="chat-appliance-big-org-"))
    env = dict(os.environ, CHAT_APPLIANCE_RATE_LIMITING="false",
               PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    database_name = None
    if args.postgres:
        database_name = f"{args.postgres.rsplit('/', 1)[1] or 'bench'}_big_org_{os.getpid()}"
        admin(args.postgres, f'CREATE DATABASE "{database_name}"')
        env["CHAT_APPLIANCE_DATABASE_URL"] = args.postgres.rsplit("/", 1)[0] + "/" + database_name
        # This process reads the imported instance too (the API keys, the raw SQL baselines).
        os.environ["CHAT_APPLIANCE_DATABASE_URL"] = env["CHAT_APPLIANCE_DATABASE_URL"]
    stats_file = work / "stats.json"
    # Apart from the SQLite run's, which --reuse serves again.
    instance = work / ("instance-postgres" if args.postgres else "instance")
    try:
        if args.reuse:
            stats = load_stats(stats_file)
            print(f"reusing {work / 'instance'}: {stats['people']} people, {stats['channels']} channels, "
                  f"{stats['messages']:,} messages", flush=True)
        else:
            if args.reuse_export:
                stats = load_stats(stats_file)
                args.messages = stats["messages"]
                print(f"reusing {work / 'export'}: {stats['people']} people, {stats['messages']:,} messages, "
                      f"{stats['user_messages']:,} per-user rows", flush=True)
            else:
                started = time.perf_counter()
                stats = write_export(work / "export", people=args.people, channels=args.channels,
                                     messages=args.messages, progress=progress, idle_share=args.idle_share,
                                     uniform_channels=args.uniform_channels)
                print(f"export written: {args.people} people ({len(stats['idle'])} long-term idle), "
                      f"{stats['channels']} channels, {args.messages:,} messages, {stats['user_messages']:,} per-user "
                      f"rows, in {time.perf_counter() - started:.0f} s", flush=True)
            parse = parse_only(work / "export")
            elapsed, peak, largest = run_import(work / "export", instance, env, args.helpers)
            print(f"import-zulip: {elapsed:.1f} s = {args.messages / elapsed:,.0f} messages/s, "
                  f"{stats['user_messages'] / elapsed:,.0f} per-user rows/s ({elapsed / parse:.1f}x reading and "
                  f"parsing the message files, {parse:.1f} s); peak RSS {peak:.0f} MiB with its helper processes "
                  f"(the largest process {largest:.0f} MiB)", flush=True)
            if args.workdir and not args.postgres and not args.reuse_export:
                stats_file.write_text(json.dumps(stats))
        keys, database_url = api_keys(instance)
        print(f"reader: {stats['received'][stats['reader']]:,} messages, {stats['unread'][stats['reader']]:,} "
              f"unread; is:unread person: {stats['unread'][stats['unread_5k']]:,} unread", flush=True)
        results = serve_figures(instance, env, stats, keys, database_url, args.repeat, args.register_only,
                                args.sends, args.also_unread)
        for name, value in results.items():
            if isinstance(value, tuple) and len(value) == 3:
                ours, raw, floor = value
                print(f"GET /messages {name}: p50 {ours:.2f} ms = {ours / raw:.1f}x raw SQL ({raw:.2f} ms), "
                      f"{ours / floor:.1f}x GET /users/me ({floor:.2f} ms); above that floor "
                      f"{(ours - floor) / raw:.1f}x the raw SQL")
            elif isinstance(value, tuple):
                print(f"{name}: {value[0]:.1f} / {value[1]:.1f}")
            else:
                print(f"{name}: {value:.1f}")
    finally:
        if database_name:
            from chat_appliance.db.connection import close_connection

            close_connection()
            if args.keep_database:
                print(f"kept database {database_name}", flush=True)
            else:
                admin(args.postgres, f'DROP DATABASE IF EXISTS "{database_name}" WITH (FORCE)')
    if not args.workdir:
        import shutil

        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
