"""Configuration: documented defaults, and the only place that reads the environment.

An instance folder holds the SQLite database and an optional `config.json` whose keys
override these defaults (for example DATABASE_URL to move to PostgreSQL).
"""

import json
import os
from pathlib import Path

DEFAULTS = {
    # Where the database and local configuration live.
    "INSTANCE_PATH": "instance",
    # sqlite:///absolute/path or postgresql://user@host:port/dbname; None = instance/chat.sqlite3.
    "DATABASE_URL": None,
    # PostgreSQL only: connections kept in the pool (at most this many open at once), and seconds a
    # request waits for a free one before failing. A long poll holds none while it waits, so the
    # pool needs at most one connection per worker thread (serve's --threads).
    "DATABASE_POOL_SIZE": 20,
    "DATABASE_POOL_TIMEOUT_SECONDS": 30,
    # werkzeug's password hashing method; tests use a cheap one.
    "PASSWORD_HASH_METHOD": "scrypt",
    # Largest request body accepted (uploads included): Zulip's default upload limit is 25 MiB.
    "MAX_CONTENT_LENGTH": 26 * 1024 * 1024,
    "MAX_FILE_UPLOAD_SIZE_MIB": 25,
    # Largest custom emoji image accepted by POST /realm/emoji/{name} (Zulip's default).
    "MAX_EMOJI_FILE_SIZE_MIB": 5,
    # Zulip's limits, reported by /register; clients read them from there.
    "MAX_MESSAGE_LENGTH": 10000,
    # Zulip's organization setting of that name: a link to an image on another server gets a
    # preview below it, pointing at /thumbnail?url=...&size=... as on Zulip. False renders the
    # link alone (for a deployment where nothing serves /thumbnail).
    "INLINE_IMAGE_PREVIEW": True,
    "MAX_TOPIC_LENGTH": 60,
    "MAX_STREAM_NAME_LENGTH": 60,
    "MAX_STREAM_DESCRIPTION_LENGTH": 1024,
    "MAX_CHANNEL_FOLDER_NAME_LENGTH": 60,
    "MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH": 1024,
    # Long polling: a heartbeat before the clients' 90 s timeout; idle queues collected after 10 min.
    "EVENT_HEARTBEAT_SECONDS": 55,
    "EVENT_QUEUE_IDLE_SECONDS": 600,
    # End-to-end encrypted push notifications: the relay (Zulip's "bouncer") that receives device
    # registrations, and the public keys it publishes. Unset: push is not configured and
    # POST /mobile_push/register answers PUSH_SERVICE_NOT_CONFIGURED.
    "PUSH_RELAY_URL": None,
    "PUSH_RELAY_PUBLIC_KEYS": [],
    # Seconds to wait for the relay before giving up on a registration.
    "PUSH_RELAY_TIMEOUT_SECONDS": 10,
    # POST /streams/{id}/delete_topic deletes in batches until this many seconds have passed,
    # then answers complete=false and the client repeats the request (Zulip's behaviour).
    "DELETE_TOPIC_TIME_BUDGET_SECONDS": 10,
    # Invitations expire after this many minutes unless the inviter chooses otherwise
    # (Zulip's INVITATION_LINK_VALIDITY_DAYS, 10 days).
    "INVITATION_LINK_VALIDITY_MINUTES": 10 * 24 * 60,
    # Outgoing webhook bots: a payload_url on a loopback or private address is refused unless this
    # is true (a guard against requests into the server's own network; `chat-appliance dev` and
    # the pytest fixture allow them, since the bots under test run on the same machine).
    "OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES": False,
    # Seconds to wait for an outgoing webhook's answer, and how many attempts a failing call gets
    # (timeouts and refused connections are retried) before the bot's owner is told.
    "OUTGOING_WEBHOOK_TIMEOUT_SECONDS": 10,
    "OUTGOING_WEBHOOK_ATTEMPTS": 3,
    # Log one line per request with its timing.
    "LOG_REQUESTS": True,
}


def instance_path_from_env(explicit=None):
    """--instance, else $CHAT_APPLIANCE_INSTANCE, else ./instance."""
    return Path(explicit or os.environ.get("CHAT_APPLIANCE_INSTANCE") or "instance").resolve()


def database_url_for(instance_path):
    """The default database of an instance: SQLite in the instance folder."""
    return f"sqlite:///{Path(instance_path) / 'chat.sqlite3'}"


def load_config(instance_path, overrides=None):
    """Defaults, then the instance's config.json, then $CHAT_APPLIANCE_DATABASE_URL, then overrides."""
    config = dict(DEFAULTS)
    config["INSTANCE_PATH"] = str(instance_path)
    local = Path(instance_path) / "config.json"
    if local.exists():
        config.update(json.loads(local.read_text()))
    if os.environ.get("CHAT_APPLIANCE_DATABASE_URL"):
        config["DATABASE_URL"] = os.environ["CHAT_APPLIANCE_DATABASE_URL"]
    config.update(overrides or {})
    if not config["DATABASE_URL"]:
        config["DATABASE_URL"] = database_url_for(instance_path)
    return config
