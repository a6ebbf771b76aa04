#!/usr/bin/env python3
"""Export and import benchmark: how an organization's move scales with its history.

Builds an organization of --users people in 5 channels and sends --messages messages through the
server's own send path (check_send_message), about a tenth of them direct, with a reaction on every
tenth; that sending is the baseline, measured in the same run. Then it times
`export_realm` (Zulip's layout, in-process) and `import_export` into a fresh instance, and prints
each as messages per second and as a ratio to the send rate. Run twice with different --messages
to see whether per-message cost grows with history (it should not).
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FAST_HASH = "pbkdf2:sha256:1000"


def build(instance, users, messages):
    """A fresh instance with the history; returns (realm, seconds spent sending)."""
    from chat_appliance.actions.channels import do_create_streams, subscribe_users_to_streams
    from chat_appliance.actions.messages import check_send_message
    from chat_appliance.actions.reactions import do_add_reaction
    from chat_appliance.actions.realm import do_create_realm
    from chat_appliance.actions.users import do_create_user
    from chat_appliance.config import database_url_for
    from chat_appliance.db.connection import init_database, migrate, write_transaction
    from chat_appliance.models import Message, database

    init_database(database_url_for(instance))
    migrate()
    with database.connection_context():
        realm, owner = do_create_realm("Bench", "bench.example", "http://bench.example", "owner@bench.example",
                                       "Owner", "pw", password_method=FAST_HASH)
        people = [owner] + [do_create_user(realm, f"u{i}@bench.example", "pw", f"User {i}",
                                           password_method=FAST_HASH) for i in range(users - 1)]
        with write_transaction():
            streams, _ = do_create_streams(realm, [(f"c{i}", "") for i in range(5)], invite_only=False,
                                           history_public_to_subscribers=None, creator=owner)
        subscribe_users_to_streams(list(streams.values()), people)
        limits = {"max_message_length": 10000, "max_topic_length": 60}
        started = time.perf_counter()
        for n in range(messages):
            sender = people[n % len(people)]
            if n % 10 == 9:
                to, kind = [people[(n + 1) % len(people)].id], "private"
            else:
                to, kind = f"c{n % 5}", "stream"
            message_id, _ = check_send_message(sender, message_type=kind, to=to, topic=f"topic {n % 20}",
                                               content=f"message **{n}** about things", client_name="bench",
                                               limits=limits)
            if n % 10 == 0:
                do_add_reaction(people[(n + 2) % len(people)], Message.get_by_id(message_id), "smile", "1f642",
                                "unicode_emoji")
        return realm, time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--users", type=int, default=20)
    args = parser.parse_args()

    from flask import Flask

    from chat_appliance.models import database
    from chat_appliance.ops.transfer.exporter import export_realm
    from chat_appliance.ops.transfer.importer import import_export

    work = Path(tempfile.mkdtemp(prefix="bench-transfer-"))
    source = work / "source"
    source.mkdir()
    app = Flask("bench")
    app.config.update(INSTANCE_PATH=str(source), MAX_FILE_UPLOAD_SIZE_MIB=25)
    with app.app_context():
        realm, send_seconds = build(source, args.users, args.messages)
        with database.connection_context():
            started = time.perf_counter()
            folder = export_realm(realm, source, work / "export")
            export_seconds = time.perf_counter() - started
    started = time.perf_counter()
    import_export(folder, work / "imported")
    import_seconds = time.perf_counter() - started

    def rate(seconds):
        return args.messages / seconds

    print(f"{args.messages} messages, {args.users} users (work folder {work})")
    print(f"  baseline  send       {rate(send_seconds):9.0f} msg/s")
    print(f"  export               {rate(export_seconds):9.0f} msg/s   {send_seconds / export_seconds:6.1f}x the send rate")
    print(f"  import (check+write) {rate(import_seconds):9.0f} msg/s   {send_seconds / import_seconds:6.1f}x the send rate")


if __name__ == "__main__":
    main()
