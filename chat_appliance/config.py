"""Configuration: documented defaults, and the only place that reads the environment.

Every key below can be set, from the weakest to the strongest: here (the default), in the
instance's `config.json`, in the environment as CHAT_APPLIANCE_<KEY>, and by a command-line
option (`--instance`; `serve --quiet` sets LOG_REQUESTS). Environment values are JSON (`false`,
`25`, `["..."]`) except for the keys in STRING_KEYS, taken as they are. The instance folder
itself comes from `--instance`, else $CHAT_APPLIANCE_INSTANCE, else ./instance.

`create_app` turns the result into one `Limits` object (the limits /register reports are the
ones enforced) and hands it to the actions: nothing below the HTTP layer reads configuration.
"""

import json
import os
import re
import secrets
from dataclasses import dataclass, fields
from pathlib import Path

DEFAULTS: dict[str, object] = {
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
    # Zulip's INLINE_URL_EMBED_PREVIEW: website previews (Open Graph title, description, image)
    # below a message's links, fetched in the background after the send through the outgoing
    # webhooks' private-address guard (OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES lifts it for both),
    # 5 s and 512 KiB per page, at most 3 links per message. Off by default, as on Zulip.
    "INLINE_URL_EMBED_PREVIEW": False,
    # Where a Vimeo link's preview data come from when INLINE_URL_EMBED_PREVIEW is on (Vimeo's
    # oEmbed endpoint, as Zulip asks it); the link must also pass INLINE_IMAGE_PREVIEW, as on
    # Zulip. Changed only to point at a stand-in (the tests' local server).
    "VIMEO_OEMBED_URL": "https://vimeo.com/api/oembed.json",
    "MAX_TOPIC_LENGTH": 60,
    "MAX_STREAM_NAME_LENGTH": 60,
    "MAX_STREAM_DESCRIPTION_LENGTH": 1024,
    "MAX_CHANNEL_FOLDER_NAME_LENGTH": 60,
    "MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH": 1024,
    # Long polling: a heartbeat before the clients' 90 s timeout; idle queues collected after 10 min.
    "EVENT_HEARTBEAT_SECONDS": 55,
    "EVENT_QUEUE_IDLE_SECONDS": 600,
    # Mobile push notifications go through Zulip's Mobile Push Notification Service (Zulip's
    # settings of these names; README "Push notifications"). ZULIP_SERVICES_URL is the service;
    # PUSH_NOTIFICATION_BOUNCER_URL, when set, is used instead (Zulip's older name). Push is on
    # once this server has an org id and key: `chat-appliance register-push-service` stores them
    # in the instance (push_service_credentials.json, mode 600); ZULIP_ORG_ID and ZULIP_ORG_KEY
    # set here or as CHAT_APPLIANCE_ZULIP_ORG_ID/_KEY take precedence over that file.
    "ZULIP_SERVICES_URL": "https://push.zulipchat.com",
    "PUSH_NOTIFICATION_BOUNCER_URL": None,
    "ZULIP_ORG_ID": None,
    "ZULIP_ORG_KEY": None,
    # Seconds to wait for the service (Zulip's 30), and how many attempts a notification that
    # failed without an answer (or with a 5xx) gets, this many seconds apart, before it is logged
    # and dropped. Sending is off the request path either way.
    "PUSH_NOTIFICATION_TIMEOUT_SECONDS": 30,
    "PUSH_NOTIFICATION_ATTEMPTS": 3,
    "PUSH_NOTIFICATION_RETRY_SECONDS": 10,
    # POST /streams/{id}/delete_topic deletes in batches until this many seconds have passed,
    # then answers complete=false and the client repeats the request (Zulip's behaviour).
    "DELETE_TOPIC_TIME_BUDGET_SECONDS": 10,
    # Web client: how long a browser stays signed in without signing in again (Zulip: two weeks).
    "WEB_SESSION_SECONDS": 14 * 24 * 3600,
    # Invitations expire after this many minutes unless the inviter chooses otherwise
    # (Zulip's INVITATION_LINK_VALIDITY_DAYS, 10 days).
    "INVITATION_LINK_VALIDITY_MINUTES": 10 * 24 * 60,
    # Outgoing webhook bots: a payload_url on a loopback or private address (in any spelling, IPv4
    # inside IPv6 included) is refused unless this is true (a guard against requests into the
    # server's own network, lib/safe_fetch.py; `chat-appliance dev` and the pytest fixture allow
    # them, since the bots under test run on the same machine). Redirects are never followed.
    "OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES": False,
    # Seconds to wait for an outgoing webhook's answer, and how many attempts a failing call gets
    # (timeouts and refused connections are retried) before the bot's owner is told.
    "OUTGOING_WEBHOOK_TIMEOUT_SECONDS": 10,
    "OUTGOING_WEBHOOK_ATTEMPTS": 3,
    # Log one line per request with its timing.
    "LOG_REQUESTS": True,
    # Rate limits as Zulip's (lib/rate_limit.py). False turns every limit off: load tests,
    # benchmarks and the development server. Also $CHAT_APPLIANCE_RATE_LIMITING=false.
    "RATE_LIMITING": True,
    # Per domain, a list of [seconds, requests]; a domain given here replaces Zulip's default
    # (api_by_user [[60, 200]], api_by_ip [[60, 100]] for unauthenticated requests,
    # authenticate_by_username [[1800, 5]] failed logins per account).
    "RATE_LIMITING_RULES": {},
    # Addresses of reverse proxies whose X-Forwarded-For is believed (docs/deploy.md); requests
    # from anywhere else are identified by their peer address, whatever headers they carry.
    "TRUSTED_PROXIES": [],
    # Slow clients (serve): a request's headers must arrive within this many seconds, and its
    # body must progress by at least 1 KiB/s over every such period (a body that trickles in at
    # a byte a second held a thread-less connection forever); the answer is 408 and the
    # connection closes. Zulip's nginx uses 60 s.
    "REQUEST_READ_TIMEOUT_SECONDS": 60,
    # Open connections one client address may hold (serve); more are answered 429 and closed.
    # Loopback addresses and the TRUSTED_PROXIES are exempt (every client arrives through a
    # reverse proxy: limit there, e.g. nginx's limit_conn). 0: no limit.
    "MAX_CONNECTIONS_PER_CLIENT": 256,
    # Outgoing email (invitations, password resets, missed messages), with Zulip's setting names.
    # No EMAIL_HOST: nothing is sent (POST /invites with addresses says so; `chat-appliance dev`
    # keeps the mails and shows them at /emails). EMAIL_USE_TLS is STARTTLS on EMAIL_PORT (587);
    # EMAIL_USE_SSL is TLS from the first byte (465). EMAIL_HOST_PASSWORD_FILE, when set, is read
    # instead of EMAIL_HOST_PASSWORD, so that the password stays out of config.json.
    "EMAIL_HOST": None,
    "EMAIL_PORT": None,
    "EMAIL_HOST_USER": None,
    "EMAIL_HOST_PASSWORD": None,
    "EMAIL_HOST_PASSWORD_FILE": None,
    "EMAIL_USE_TLS": False,
    "EMAIL_USE_SSL": False,
    # The From address of every mail (Zulip's NOREPLY_EMAIL_ADDRESS).
    "NOREPLY_EMAIL_ADDRESS": "noreply@localhost",
    # Seconds to wait for the SMTP server, and how many attempts a mail gets, this many seconds
    # apart, before the failure is logged for good. Sending is off the request path either way.
    "EMAIL_TIMEOUT_SECONDS": 10,
    "EMAIL_SEND_ATTEMPTS": 3,
    "EMAIL_RETRY_SECONDS": 30,
    # A direct message or mention reaching someone away is mailed after this many seconds, with
    # whatever else reached them meanwhile (Zulip batches for two minutes); a message read by
    # then is left out.
    "MISSED_MESSAGE_EMAIL_DELAY_SECONDS": 120,
    # Several `serve` processes on one PostgreSQL database (docs/scaling.md): this process's shard
    # name (letters and digits, at most 16; `serve --shard-id` sets it). Queue ids start with it,
    # events cross processes through LISTEN/NOTIFY, rate limits count in the database. None: the
    # one process serves everything, all in memory. SQLite refuses it.
    "SHARD_ID": None,
    # The organization's address (Zulip's EXTERNAL_HOST): the host, with a port only when users
    # reach it on another than the scheme's default, e.g. "chat.example.com". Every `serve`
    # start sets the organization's URL from it (https:// when TLS is on, else http://, with
    # serve's port appended when EXTERNAL_HOST names none and it is not the default), so that
    # invitations and mails carry it. None: the URL stored when the organization was made, or
    # the one `chat-appliance set-realm-url` set.
    "EXTERNAL_HOST": None,
    # Automatic HTTPS (docs/deploy.md). TLS_DOMAIN, one DNS name: `serve` gets a certificate for
    # it from the ACME server at ACME_DIRECTORY (HTTP-01 on --http-port), renews it while
    # serving, serves HTTPS on --https-port and redirects plain HTTP there; the organization's
    # URL is then https://TLS_DOMAIN. ACME_CA_BUNDLE: the CA certificates trusted for the
    # connection to the ACME server only (it wins over REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE).
    # ACME_EMAIL: the contact address given to the ACME server, if any.
    "TLS_DOMAIN": None,
    "ACME_DIRECTORY": "https://acme-v02.api.letsencrypt.org/directory",
    "ACME_CA_BUNDLE": None,
    "ACME_EMAIL": None,
    # Your own certificate (PEM chain) and key instead of ACME: both or neither. SIGHUP to the
    # `serve` process re-reads them.
    "TLS_CERT_FILE": None,
    "TLS_KEY_FILE": None,
}


# Keys whose environment value is a plain string rather than JSON.
STRING_KEYS = frozenset({"INSTANCE_PATH", "DATABASE_URL", "PASSWORD_HASH_METHOD", "ZULIP_SERVICES_URL",
                         "PUSH_NOTIFICATION_BOUNCER_URL", "ZULIP_ORG_ID", "ZULIP_ORG_KEY", "EMAIL_HOST",
                         "EMAIL_HOST_USER", "EMAIL_HOST_PASSWORD", "EMAIL_HOST_PASSWORD_FILE",
                         "NOREPLY_EMAIL_ADDRESS", "SHARD_ID", "VIMEO_OEMBED_URL", "EXTERNAL_HOST",
                         "TLS_DOMAIN", "ACME_DIRECTORY", "ACME_CA_BUNDLE", "ACME_EMAIL", "TLS_CERT_FILE",
                         "TLS_KEY_FILE"})
ENV_PREFIX = "CHAT_APPLIANCE_"
# The instance folder has its own variable (CHAT_APPLIANCE_INSTANCE), read before any config.json.
NOT_FROM_ENV = frozenset({"INSTANCE_PATH"})


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names where it came from."""


@dataclass(frozen=True)
class Limits:
    """The limits the server enforces and /register reports (same names as its keys): one
    object, built from the configuration by create_app and passed to the actions."""

    max_message_length: int
    max_topic_length: int
    max_stream_name_length: int
    max_stream_description_length: int
    max_channel_folder_name_length: int
    max_channel_folder_description_length: int
    max_file_upload_size_mib: int

    @classmethod
    def from_config(cls, config):
        """The limits of a configuration mapping (upper-case keys, as in DEFAULTS)."""
        return cls(**{field.name: int(config[field.name.upper()]) for field in fields(cls)})

    def as_register_state(self):
        """The /register keys reporting these limits."""
        return {field.name: getattr(self, field.name) for field in fields(self)}


def environment_overrides(environ=None):
    """The CHAT_APPLIANCE_<KEY> variables set in the environment, parsed: JSON unless the key
    takes a string. Raises ConfigError naming the variable when a value is not JSON."""
    environ = os.environ if environ is None else environ
    overrides = {}
    for key in DEFAULTS:
        name = ENV_PREFIX + key
        if key in NOT_FROM_ENV or name not in environ:
            continue
        raw = environ[name]
        if key in STRING_KEYS:
            overrides[key] = raw
            continue
        try:
            overrides[key] = json.loads(raw)
        except ValueError:
            raise ConfigError(f"${name} is not JSON: {raw!r} (write strings in quotes, e.g. '\"text\"')") from None
    return overrides


def instance_secret(instance_path, name="secret_key"):
    """A random key generated once per instance and kept in it (mode 600), so that what it signs
    (temporary upload URLs) outlives a restart."""
    path = Path(instance_path) / name
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as out:
            out.write(secrets.token_hex(32))
    return bytes.fromhex(path.read_text().strip())


def instance_path_from_env(explicit=None):
    """--instance, else $CHAT_APPLIANCE_INSTANCE, else ./instance."""
    return Path(explicit or os.environ.get("CHAT_APPLIANCE_INSTANCE") or "instance").resolve()


def database_url_for(instance_path):
    """The default database of an instance: SQLite in the instance folder."""
    return f"sqlite:///{Path(instance_path) / 'chat.sqlite3'}"


SHARD_ID_PATTERN = re.compile(r"[A-Za-z0-9]{1,16}")


def check_shard_id(config):
    """Raise ConfigError unless SHARD_ID is unset, or a short name of letters and digits on a
    PostgreSQL database: shards share their database, and SQLite cannot be shared between
    processes (nor deliver notifications between them)."""
    shard = config.get("SHARD_ID")
    if shard is None:
        return
    if not isinstance(shard, str) or not SHARD_ID_PATTERN.fullmatch(shard):
        raise ConfigError(f"--shard-id (SHARD_ID) must be 1 to 16 letters or digits, not {shard!r}")
    url = str(config.get("DATABASE_URL") or "")
    if not url.startswith(("postgres://", "postgresql://")):
        raise ConfigError("--shard-id (SHARD_ID) needs a PostgreSQL database (DATABASE_URL=postgresql://...): "
                          "shards share one database and its notifications, which SQLite cannot do")


def load_config(instance_path, overrides=None, environ=None):
    """Defaults, then the instance's config.json, then CHAT_APPLIANCE_<KEY> variables, then
    `overrides` (the command line's options)."""
    config = dict(DEFAULTS)
    local = Path(instance_path) / "config.json"
    if local.exists():
        try:
            config.update(json.loads(local.read_text()))
        except ValueError as error:
            raise ConfigError(f"{local} is not valid JSON: {error}") from None
    config.update(environment_overrides(environ))
    config["INSTANCE_PATH"] = str(instance_path)
    config.update(overrides or {})
    if not config["DATABASE_URL"]:
        config["DATABASE_URL"] = database_url_for(instance_path)
    return config
