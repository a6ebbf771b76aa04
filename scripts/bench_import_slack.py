#!/usr/bin/env python3
"""import-slack benchmark: how fast a Slack export of --messages messages imports.

Builds an export as Slack lays it out (tests/support/slack_export.py): --users people in 10 channels, a
tenth of the messages direct, one in eight a thread reply, formatting in a third, a reaction on
every tenth. The baseline, measured in the same run on the same zip, is the least any import
must do: read every entry and parse its JSON. Then it times `import_slack` into a fresh instance
(on SQLite, or on $CHAT_APPLIANCE_DATABASE_URL's server when set) and prints both as messages per
second, and their ratio, with the peak memory of the import.
"""

import argparse
import json
import os
import resource
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def build(path, users, messages):
    from tests.support.slack_export import START, SlackExportBuilder, ts

    b = SlackExportBuilder()
    ids = [f"U{i:05d}" for i in range(users)]
    for i, uid in enumerate(ids):
        b.user(uid, f"user{i}", f"User {i}", f"user{i}@bench.example", is_owner=i == 0, is_primary_owner=i == 0)
    channels = [f"channel-{i}" for i in range(10)]
    for i, name in enumerate(channels):
        b.channel(f"C{i:04d}", name, ids, is_general=i == 0)
    for i in range(20):
        b.dm(f"D{i:04d}", [ids[i % users], ids[(i + 1) % users]])
    parents = {}
    texts = ["plain words about the plan", "*bold* and _italic_ with <https://example.com|a link>",
             "ping <@{who}> see <#C0001|channel-1>", "• one\n• two\n```code```"]
    for n in range(messages):
        stamp = ts(START + n * 7, n % 1000)
        who = ids[n % users]
        text = texts[n % 4].format(who=ids[(n + 3) % users])
        extra = {}
        if n % 10 == 0:
            extra["reactions"] = [{"name": "thumbsup", "users": [ids[(n + 1) % users]], "count": 1}]
        if n % 10 == 9:
            b.message(f"D{n % 20:04d}", stamp, ids[n % 20 % users], text, **extra)
            continue
        channel = channels[n % 10]
        if n % 8 == 7 and channel in parents:
            extra.update(thread_ts=parents[channel], parent_user_id=ids[0])
        elif n % 8 == 0:
            parents[channel] = stamp
            extra.update(thread_ts=stamp, reply_count=1)
        b.message(channel, stamp, who, text, **extra)
    return b.write(path)


def parse_only(path):
    """The baseline: every entry read and its JSON parsed; returns the message count."""
    count = 0
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            data = json.loads(z.read(info))
            if "/" in info.filename:
                count += len(data)
    return count


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=50)
    args = parser.parse_args()
    from chat_appliance.db.connection import close_connection
    from chat_appliance.ops.transfer.slack import import_slack

    with tempfile.TemporaryDirectory() as folder:
        export = Path(folder) / "Bench Slack export.zip"
        started = time.perf_counter()
        build(export, args.users, args.messages)
        print(f"built {args.messages} messages, {export.stat().st_size // 1024} KiB zipped, "
              f"in {time.perf_counter() - started:.1f} s", flush=True)
        started = time.perf_counter()
        count = parse_only(export)
        baseline = time.perf_counter() - started
        started = time.perf_counter()
        summary = import_slack(export, Path(folder) / "instance", org_name="Bench")
        elapsed = time.perf_counter() - started
        close_connection()  # before the folder goes, with the database in it
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    engine = "postgresql" if os.environ.get("CHAT_APPLIANCE_DATABASE_URL", "").startswith("postgres") else "sqlite"
    print(f"database: {engine}; messages imported: {summary['messages']} (of {count} in the export)")
    print(f"baseline, read + parse the export's JSON: {baseline:.2f} s = {count / baseline:,.0f} messages/s")
    print(f"import-slack:                           {elapsed:.2f} s = {summary['messages'] / elapsed:,.0f} "
          f"messages/s ({elapsed / baseline:.0f} x the baseline's time); peak RSS {peak:.0f} MiB")


if __name__ == "__main__":
    main()
