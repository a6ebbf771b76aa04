"""Configuration: documented defaults, and the only place that reads the environment.

Every key of SETTINGS can be set, from the weakest to the strongest: here (the default), in the
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
from typing import NamedTuple

class Setting(NamedTuple):
    """One configuration key: its name, its default, and what it does (docs/configuration.md is
    generated from these by scripts/gen_docs.py)."""

    name: str
    default: object
    doc: str


SETTINGS: tuple[Setting, ...] = (
    Setting("INSTANCE_PATH", "instance",
            "Where the database and local configuration live. Set by `--instance`, else "
            "$CHAT_APPLIANCE_INSTANCE, else ./instance; never read from config.json."),
    Setting("DATABASE_URL", None,
            "sqlite:///absolute/path or postgresql://user@host:port/dbname; unset: chat.sqlite3 in the "
            "instance folder."),
    Setting("DATABASE_POOL_SIZE", 20,
            "PostgreSQL only: connections kept in the pool (at most this many open at once). A long poll "
            "holds none while it waits, so the pool needs at most one connection per worker thread "
            "(serve's --threads)."),
    Setting("DATABASE_POOL_TIMEOUT_SECONDS", 30,
            "PostgreSQL only: seconds a request waits for a free connection before failing."),
    Setting("PASSWORD_HASH_METHOD", "scrypt", "werkzeug's password hashing method; tests use a cheap one."),
    Setting("MAX_CONTENT_LENGTH", 26 * 1024 * 1024,
            "Largest request body accepted, uploads included (bytes)."),
    Setting("MAX_FILE_UPLOAD_SIZE_MIB", 25, "Largest uploaded file (Zulip's default upload limit, 25 MiB)."),
    Setting("MAX_EMOJI_FILE_SIZE_MIB", 5,
            "Largest custom emoji image accepted by POST /realm/emoji/{name} (Zulip's default)."),
    Setting("SOFT_DEACTIVATION_DAYS", 28,
            "`chat-appliance soft-deactivate-users` marks people who have neither connected a client nor sent "
            "a message for this many days as long-term idle (Zulip's default, 28): a channel message then "
            "writes no per-user row for them unless it mentions them or notifies them, and their rows are "
            "added when they come back (docs/scaling.md)."),
    Setting("AUTO_CATCH_UP_SOFT_DEACTIVATED_USERS", True,
            "Whether `soft-deactivate-users` also adds the missing rows of people already idle, keeping "
            "them idle (Zulip's setting of that name): their return is then quick, whatever the backlog."),
    Setting("MAX_MESSAGE_LENGTH", 10000, "Zulip's limit, reported by /register (clients read it there) and enforced."),
    Setting("INLINE_IMAGE_PREVIEW", True,
            "Zulip's organization setting of that name: a link to an image on another server gets a preview "
            "below it, pointing at /thumbnail?url=...&size=... as on Zulip. False renders the link alone "
            "(for a deployment where nothing serves /thumbnail)."),
    Setting("INLINE_URL_EMBED_PREVIEW", False,
            "Zulip's INLINE_URL_EMBED_PREVIEW: website previews (Open Graph title, description, image) below "
            "a message's links, fetched in the background after the send through the outgoing webhooks' "
            "private-address guard (OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES lifts it for both), 5 s and "
            "512 KiB per page, at most 3 links per message. Off by default, as on Zulip."),
    Setting("VIMEO_OEMBED_URL", "https://vimeo.com/api/oembed.json",
            "Where a Vimeo link's preview data come from when INLINE_URL_EMBED_PREVIEW is on (Vimeo's oEmbed "
            "endpoint, as Zulip asks it); the link must also pass INLINE_IMAGE_PREVIEW, as on Zulip. Changed "
            "only to point at a stand-in (the tests' local server)."),
    Setting("MAX_TOPIC_LENGTH", 60, "Zulip's limit, reported by /register and enforced."),
    Setting("MAX_STREAM_NAME_LENGTH", 60, "Zulip's limit, reported by /register and enforced."),
    Setting("MAX_STREAM_DESCRIPTION_LENGTH", 1024, "Zulip's limit, reported by /register and enforced."),
    Setting("MAX_CHANNEL_FOLDER_NAME_LENGTH", 60, "Zulip's limit, reported by /register and enforced."),
    Setting("MAX_CHANNEL_FOLDER_DESCRIPTION_LENGTH", 1024, "Zulip's limit, reported by /register and enforced."),
    Setting("EVENT_HEARTBEAT_SECONDS", 55,
            "Longest wait of a long poll before its heartbeat (each wait is drawn between 45 s and this, so "
            "that polls started together do not come back together): below the clients' 90 s timeout."),
    Setting("EVENT_QUEUE_IDLE_SECONDS", 600, "An event queue nobody polls for this long is removed (10 min)."),
    Setting("ZULIP_SERVICES_URL", "https://push.zulipchat.com",
            "Zulip's Mobile Push Notification Service, through which notifications reach the mobile apps "
            "(Zulip's setting of that name). Push is on once this server has an org id and key: "
            "`chat-appliance register-push-service` stores them in the instance "
            "(push_service_credentials.json, mode 600)."),
    Setting("PUSH_NOTIFICATION_BOUNCER_URL", None,
            "Zulip's older name for the push service; when set, used instead of ZULIP_SERVICES_URL."),
    Setting("ZULIP_ORG_ID", None,
            "The push service's org id; takes precedence over the one stored in the instance, for "
            "deployments that keep secrets outside it."),
    Setting("ZULIP_ORG_KEY", None,
            "The push service's org key; takes precedence over the one stored in the instance."),
    Setting("PUSH_NOTIFICATION_TIMEOUT_SECONDS", 30, "Seconds to wait for the push service (Zulip's 30)."),
    Setting("PUSH_NOTIFICATION_ATTEMPTS", 3,
            "Attempts a notification that failed without an answer (or with a 5xx) gets before it is logged "
            "and dropped. Sending is off the request path either way."),
    Setting("PUSH_NOTIFICATION_RETRY_SECONDS", 10, "Seconds between those attempts."),
    Setting("DELETE_TOPIC_TIME_BUDGET_SECONDS", 10,
            "POST /streams/{id}/delete_topic deletes in batches until this many seconds have passed, then "
            "answers complete=false and the client repeats the request (Zulip's behaviour)."),
    Setting("WEB_SESSION_SECONDS", 14 * 24 * 3600,
            "Web client: how long a browser stays signed in without signing in again (Zulip: two weeks)."),
    Setting("INVITATION_LINK_VALIDITY_MINUTES", 10 * 24 * 60,
            "Invitations expire after this many minutes unless the inviter chooses otherwise (Zulip's "
            "INVITATION_LINK_VALIDITY_DAYS, 10 days)."),
    Setting("OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES", False,
            "Outgoing webhook bots: a payload_url on a loopback or private address (in any spelling, IPv4 "
            "inside IPv6 included) is refused unless this is true (a guard against requests into the "
            "server's own network, clients/safe_fetch.py; `chat-appliance dev` and the pytest fixture allow "
            "them, since the bots under test run on the same machine). Redirects are never followed."),
    Setting("OUTGOING_WEBHOOK_TIMEOUT_SECONDS", 10, "Seconds to wait for an outgoing webhook's answer."),
    Setting("OUTGOING_WEBHOOK_ATTEMPTS", 3,
            "Attempts a failing outgoing webhook call gets (timeouts and refused connections are retried) "
            "before the bot's owner is told."),
    Setting("LOG_REQUESTS", True, "Log one line per request with its timing (`serve --quiet` turns it off)."),
    Setting("RATE_LIMITING", True,
            "Rate limits as Zulip's (web/rate_limit.py). False turns every limit off: load tests, "
            "benchmarks and the development server."),
    Setting("RATE_LIMITING_RULES", {},
            "Per domain, a list of [seconds, requests]; a domain given here replaces Zulip's default "
            "(api_by_user [[60, 200]], api_by_ip [[60, 100]] for unauthenticated requests, "
            "authenticate_by_username [[1800, 5]] failed logins per account, email_change_by_user "
            "[[3600, 2], [86400, 5]] address-change mails per account)."),
    Setting("TRUSTED_PROXIES", [],
            "Addresses of reverse proxies whose X-Forwarded-For is believed (docs/deploy.md); requests from "
            "anywhere else are identified by their peer address, whatever headers they carry."),
    Setting("REQUEST_READ_TIMEOUT_SECONDS", 60,
            "Slow clients (serve): a request's headers must arrive within this many seconds, and its body "
            "must progress by at least 1 KiB/s over every such period (a body that trickles in at a byte a "
            "second would hold a thread-less connection forever); the answer is 408 and the connection "
            "closes. Zulip's nginx uses 60 s."),
    Setting("MAX_CONNECTIONS_PER_CLIENT", 256,
            "Open connections one client address may hold (serve); more are answered 429 and closed. "
            "Loopback addresses and the TRUSTED_PROXIES are exempt (every client arrives through a reverse "
            "proxy: limit there, e.g. nginx's limit_conn). 0: no limit."),
    Setting("EMAIL_HOST", None,
            "Outgoing email (invitations, password resets, missed messages), with Zulip's setting names. "
            "Unset: nothing is sent (POST /invites with addresses says so; `chat-appliance dev` keeps the "
            "mails and shows them at /emails)."),
    Setting("EMAIL_PORT", None, "The SMTP server's port."),
    Setting("EMAIL_HOST_USER", None, "The SMTP user name."),
    Setting("EMAIL_HOST_PASSWORD", None, "The SMTP password."),
    Setting("EMAIL_HOST_PASSWORD_FILE", None,
            "A file holding the SMTP password, read instead of EMAIL_HOST_PASSWORD when set, so that the "
            "password stays out of config.json."),
    Setting("EMAIL_USE_TLS", False, "STARTTLS on EMAIL_PORT (587)."),
    Setting("EMAIL_USE_SSL", False, "TLS from the first byte (465)."),
    Setting("NOREPLY_EMAIL_ADDRESS", "noreply@localhost", "The From address of every mail (Zulip's setting)."),
    Setting("EMAIL_TIMEOUT_SECONDS", 600,
            "Seconds to wait for each answer of the SMTP server once connected (RFC 5321 allows 10 minutes "
            "for the end of DATA; a connection must open within 30 seconds)."),
    Setting("EMAIL_SEND_ATTEMPTS", 20,
            "Attempts a mail gets before it is dropped and the failure logged for good. Mail waits in the "
            "database between attempts, across restarts."),
    Setting("EMAIL_RETRY_SECONDS", 30,
            "Seconds before the second attempt; each later wait doubles, up to an hour (20 attempts span "
            "about 16 hours)."),
    Setting("EMAIL_SENDERS", 4, "Mails sent at once, each on its own connection."),
    Setting("MISSED_MESSAGE_EMAIL_DELAY_SECONDS", 120,
            "A direct message or mention reaching someone away is mailed after this many seconds, with "
            "whatever else reached them meanwhile (Zulip batches for two minutes); a message read by then "
            "is left out."),
    Setting("AUTHENTICATION_BACKENDS", ["zproject.backends.EmailAuthBackend"],
            "Ways to sign in, with Zulip's names (docs/auth-ldap.md, docs/auth-oidc.md): "
            "zproject.backends.EmailAuthBackend (email and password kept here), "
            "zproject.backends.ZulipLDAPAuthBackend (an LDAP directory checks the password) and "
            "zproject.backends.GenericOpenIdConnectBackend (an OpenID Connect provider, "
            "SOCIAL_AUTH_OIDC_ENABLED_IDPS). Other names are refused at start."),
    Setting("SOCIAL_AUTH_OIDC_ENABLED_IDPS", {},
            "OpenID Connect providers as Zulip takes them: {\"<name>\": {\"oidc_url\": issuer, "
            "\"display_name\", \"display_icon\", \"client_id\", \"secret\", \"auto_signup\"}}. The "
            "issuer publishes /.well-known/openid-configuration; plain HTTP and loopback issuers are "
            "accepted, as on Zulip. The provider must allow the redirect URI <realm url>/complete/oidc/. "
            "One provider, as on Zulip."),
    Setting("SOCIAL_AUTH_OIDC_FULL_NAME_VALIDATED", False,
            "Zulip's setting: true when the provider's names are trusted. Without auto_signup, the sign-up "
            "confirmation then asks no name and takes the provider's; false lets the person correct it there. "
            "With auto_signup the provider's name is always taken."),
    Setting("AUTH_LDAP_SERVER_URI", None, "The LDAP server, e.g. ldaps://ldap.example.com or ldap://127.0.0.1:389."),
    Setting("AUTH_LDAP_BIND_DN", None,
            "The DN the server binds as to search the directory; unset: an anonymous search."),
    Setting("AUTH_LDAP_BIND_PASSWORD", None, "The password of AUTH_LDAP_BIND_DN."),
    Setting("AUTH_LDAP_USER_SEARCH", None,
            "Zulip's LDAPSearch arguments as a JSON list: [base DN, \"SCOPE_SUBTREE\" (or SCOPE_ONELEVEL, "
            "SCOPE_BASE), filter with %(user)s], e.g. [\"ou=People,dc=example,dc=com\", \"SCOPE_SUBTREE\", "
            "\"(uid=%(user)s)\"]. The user name is escaped (RFC 4515) before it goes into the filter."),
    Setting("AUTH_LDAP_USER_ATTR_MAP", {"full_name": "cn"},
            "Account fields taken from LDAP attributes, as Zulip's: {\"full_name\": \"cn\"}, or "
            "{\"first_name\": \"givenName\", \"last_name\": \"sn\"}. A name that LDAP manages cannot be "
            "changed in the app."),
    Setting("LDAP_APPEND_DOMAIN", None,
            "LDAP user names are not emails: the email is <user name>@<this domain> (Zulip's setting)."),
    Setting("LDAP_EMAIL_ATTR", None,
            "The LDAP attribute holding each person's email (Zulip's setting), instead of LDAP_APPEND_DOMAIN."),
    Setting("AUTH_LDAP_USERNAME_ATTR", None,
            "With LDAP_EMAIL_ATTR: the attribute holding the user name that goes into the search filter "
            "(Zulip's setting), so that people sign in with their user name or their email."),
    Setting("LDAP_DEACTIVATE_NON_MATCHING_USERS", None,
            "`chat-appliance sync-ldap-users` deactivates active people the directory no longer has. null: "
            "only when LDAP is the only way to sign in, as on Zulip."),
    Setting("SHARD_ID", None,
            "Several `serve` processes on one PostgreSQL database (docs/scaling.md): this process's shard "
            "name (letters and digits, at most 16; `serve --shard-id` sets it). Queue ids start with it, "
            "events cross processes through LISTEN/NOTIFY, rate limits count in the database. Unset: the one "
            "process serves everything, all in memory. SQLite refuses it."),
    Setting("EXTERNAL_HOST", None,
            "The organization's address (Zulip's name): the host, with a port only when users reach it on "
            "another than the scheme's default, e.g. \"chat.example.com\". Every `serve` start sets the "
            "organization's URL from it (https:// when TLS is on, else http://, with serve's port appended when "
            "it names none and that port is not the default), so that invitations and mails carry it. Unset: the "
            "URL stored when the organization was made, or the one `chat-appliance set-realm-url` set."),
    Setting("TLS_DOMAIN", None,
            "Automatic HTTPS (docs/deploy.md), one DNS name: `serve` gets a certificate for it from the ACME "
            "server at ACME_DIRECTORY (HTTP-01 on --http-port), renews it while serving, serves HTTPS on "
            "--https-port and redirects plain HTTP there; the organization's URL is then https://TLS_DOMAIN."),
    Setting("ACME_DIRECTORY", "https://acme-v02.api.letsencrypt.org/directory",
            "The ACME server's directory URL (Let's Encrypt's production directory by default)."),
    Setting("ACME_CA_BUNDLE", None,
            "CA certificates trusted for the connection to the ACME server only; it wins over "
            "REQUESTS_CA_BUNDLE and CURL_CA_BUNDLE."),
    Setting("ACME_EMAIL", None, "The contact address given to the ACME server, if any."),
    Setting("TLS_CERT_FILE", None,
            "Your own certificate chain (PEM) instead of ACME; with TLS_KEY_FILE, both or neither. SIGHUP to "
            "the `serve` process re-reads them."),
    Setting("TLS_KEY_FILE", None, "The private key (PEM) of TLS_CERT_FILE."),
)

DEFAULTS: dict[str, object] = {setting.name: setting.default for setting in SETTINGS}


# Keys whose environment value is a plain string rather than JSON.
STRING_KEYS = frozenset({"INSTANCE_PATH", "DATABASE_URL", "PASSWORD_HASH_METHOD", "ZULIP_SERVICES_URL",
                         "PUSH_NOTIFICATION_BOUNCER_URL", "ZULIP_ORG_ID", "ZULIP_ORG_KEY", "EMAIL_HOST",
                         "EMAIL_HOST_USER", "EMAIL_HOST_PASSWORD", "EMAIL_HOST_PASSWORD_FILE",
                         "NOREPLY_EMAIL_ADDRESS", "SHARD_ID", "VIMEO_OEMBED_URL", "EXTERNAL_HOST",
                         "TLS_DOMAIN", "ACME_DIRECTORY", "ACME_CA_BUNDLE", "ACME_EMAIL", "TLS_CERT_FILE",
                         "TLS_KEY_FILE", "AUTH_LDAP_SERVER_URI", "AUTH_LDAP_BIND_DN", "AUTH_LDAP_BIND_PASSWORD",
                         "LDAP_APPEND_DOMAIN", "LDAP_EMAIL_ATTR", "AUTH_LDAP_USERNAME_ATTR"})
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
