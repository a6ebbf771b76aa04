#!/usr/bin/env python3
"""Build a SQLite instance with generated history, to try `chat-appliance migrate-database` on.

    python scripts/generate_instance.py --instance DIR [--messages 10000]

Makes an organization (owner owner@example.com, password "generated-password", five members),
three channels, --messages messages through the real send action (rendered, indexed for search,
a personal row per recipient), direct messages among them, a reaction on every 10th message, a
star on every 7th, every 3rd read by its recipients, and three uploaded files linked from
messages. Prints a JSON summary (ids and counts) on stdout; tests/ops/test_migrate_database.py uses
`generate()` directly.
"""

import argparse
import base64
import io
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

FAST_HASH = "pbkdf2:sha256:1000"
PASSWORD = "generated-password"
WORDS = ("apple banana cherry delta echo foxtrot golf hotel india juliet kilo lima deploy release bug fix "
         "review meeting lunch coffee build test merge branch server client queue latency memory").split()


def _auth(user):
    token = base64.b64encode(f"{user.email}:{user.api_key}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def generate(instance, messages=10000, progress=None):
    """Create the instance's organization and history (SQLite in `instance`); returns a summary."""
    from chat_appliance.actions.channels import do_create_streams, subscribe_users_to_streams
    from chat_appliance.actions.messages import check_send_message
    from chat_appliance.actions.realm import do_create_realm
    from chat_appliance.actions.users import do_create_user
    from chat_appliance.app import create_app
    from chat_appliance.config import database_url_for
    from chat_appliance.db.connection import write_transaction
    from chat_appliance.models import database

    instance = Path(instance)
    instance.mkdir(parents=True, exist_ok=True)
    app = create_app({"INSTANCE_PATH": str(instance), "DATABASE_URL": database_url_for(instance),
                      "PASSWORD_HASH_METHOD": FAST_HASH, "LOG_REQUESTS": False})
    client = app.test_client()
    limits = app.extensions["chat_appliance"].limits
    with app.app_context(), database.connection_context():
        realm, owner = do_create_realm("Generated", "localhost", "http://localhost", "owner@example.com", "Owner",
                                       PASSWORD, password_method=FAST_HASH)
        users = [owner] + [do_create_user(realm, f"user{i}@example.com", PASSWORD, f"User {i}",
                                          password_method=FAST_HASH) for i in range(5)]
        with write_transaction():
            streams, _ = do_create_streams(realm, [("engineering", ""), ("design", ""), ("random", "")],
                                           invite_only=False, history_public_to_subscribers=None, creator=owner,
                                           limits=limits)
        subscribe_users_to_streams(list(streams.values()), users)
        names = [s.name for s in streams.values()]
        ids = []
        for n in range(messages):
            sender = users[n % len(users)]
            words = " ".join(WORDS[(n * 7 + k) % len(WORDS)] for k in range(8))
            content = f"message {n}: {words} **bold** `code`"
            if n % 50 == 49:
                mid, _ = check_send_message(sender, message_type="direct", to=[users[(n + 1) % len(users)].id],
                                            topic=None, content=content, client_name="generator", limits=limits)
            else:
                mid, _ = check_send_message(sender, message_type="stream", to=names[n % len(names)],
                                            topic=f"topic {n % 40}", content=content, client_name="generator",
                                            limits=limits)
            ids.append(mid)
            if progress and (n + 1) % 500 == 0:
                progress(n + 1, messages)
        user_ids = {u.email: (u.id, u.api_key) for u in users}
    uploads = []
    for k in range(3):
        response = client.post("/api/v1/user_uploads", headers=_auth(owner),
                               data={"file": (io.BytesIO(f"file {k} ".encode() * 100), f"notes-{k}.txt")})
        url = response.get_json()["url"]
        body = client.post("/api/v1/messages", headers=_auth(owner),
                           data={"type": "stream", "to": names[0], "topic": "files",
                                 "content": f"[notes {k}]({url})"}).get_json()
        uploads.append({"url": url, "message_id": body["id"]})
    reacted = ids[::10]
    for mid in reacted:
        client.post(f"/api/v1/messages/{mid}/reactions", headers=_auth(users[1]), data={"emoji_name": "octopus"})
    starred = ids[::7]
    client.post("/api/v1/messages/flags", headers=_auth(owner),
                data={"messages": json.dumps(starred), "op": "add", "flag": "starred"})
    read = ids[::3]
    client.post("/api/v1/messages/flags", headers=_auth(users[2]),
                data={"messages": json.dumps(read), "op": "add", "flag": "read"})
    from chat_appliance.app import close_app

    close_app(app)
    return {"messages": ids, "users": user_ids, "uploads": uploads, "reacted": reacted, "starred": starred,
            "read_by_user2": read}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instance", required=True, help="a new instance folder")
    parser.add_argument("--messages", type=int, default=10000)
    args = parser.parse_args()

    def progress(done, total):
        sys.stderr.write(f"\r  generated {done:,}/{total:,} messages")
        sys.stderr.flush()

    summary = generate(args.instance, args.messages, progress)
    sys.stderr.write("\n")
    print(json.dumps({key: (len(value) if isinstance(value, (list, dict)) else value)
                      for key, value in summary.items()}))


if __name__ == "__main__":
    main()
