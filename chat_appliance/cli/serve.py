"""`chat-appliance init`, `serve` and `dev`: creating an instance and running it."""

import contextlib
import gc
import logging
import os
import secrets
import socket
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from chat_appliance.cli.common import (
    CommandError,
    create_organization,
    current_realm,
    open_instance,
    set_realm_url,
)
from chat_appliance.config import ConfigError, Limits, check_shard_id, instance_path_from_env, load_config
from chat_appliance.db.runtime import current as current_runtime
from chat_appliance.ops.instance_files import InstanceBusy, hold_for_serving, make_instance_folder

DEFAULT_PORT = 9991
# With TLS on (TLS_DOMAIN, or TLS_CERT_FILE and TLS_KEY_FILE), the ports browsers and ACME
# servers expect: Let's Encrypt validates HTTP-01 on port 80 only.
DEFAULT_HTTP_PORT = 80
DEFAULT_HTTPS_PORT = 443
# Listening addresses that reach every interface: no one can browse to them, so they must never
# become the address invitations and mails carry.
EVERY_INTERFACE = frozenset({"0.0.0.0", "::", "[::]", ""})
# Worker threads of the Flask app (every endpoint except GET/DELETE /events, which wait on the
# event loop and hold no thread). Change with --threads.
DEFAULT_THREADS = 64
# The scheduler's first look at the schedule waits this long after start (or until the schedule
# changes): it loads the models, which a restarted server's first requests may not need yet.
SCHEDULER_FIRST_PASS_SECONDS = 1.0
# The workers with work left in the database (thumbnails of images uploaded just before a
# restart) take it up this long after start, for the same reason.
RESUME_WORKERS_SECONDS = 1.0


def cmd_init(args):
    """Create an instance folder with its database, organization and owner."""
    from chat_appliance.lib.errors import JsonableError
    from chat_appliance.models import database

    instance = instance_path_from_env(args.instance)
    if instance.exists() and any(instance.iterdir()) and (instance / "chat.sqlite3").exists():
        raise CommandError(f"{instance} already holds an instance; nothing was changed.")
    make_instance_folder(instance)
    _instance, config = open_instance(args)
    with database.connection_context():
        if current_realm() is not None:
            raise CommandError(f"{instance} already holds an organization; nothing was changed.")
        try:
            owner = create_organization(config, args.org_name, args.owner_email, args.owner_name,
                                        args.owner_password, args.realm_url)
        except JsonableError as error:
            raise CommandError(error.msg) from None
    print(f"Created organization {args.org_name!r} in {instance}")
    print(f"Owner: {owner.email} (user id {owner.id})")
    return 0


def ensure_organization(config, realm_url, refusal=None):
    """On an instance with no organization, create one from defaults (its address from the
    function `realm_url`) so that `chat-appliance serve` alone gives a working server; or, given
    a `refusal`, raise it as a CommandError instead. Returns the lines that give its owner's
    credentials (shown once, once the port is bound), or None when there was an organization
    already."""
    from chat_appliance.models import database

    with database.connection_context():
        if current_realm() is not None:
            return None
        if refusal is not None:
            raise CommandError(refusal)
        password = secrets.token_urlsafe(12)
        owner = create_organization(config, "chat-appliance", "owner@localhost", "Owner", password, realm_url())
        return ["Created a new organization. Sign in with these credentials (shown once):",
                f"  email:    {owner.email}", f"  password: {password}", f"  API key:  {owner.api_key}"]


def unused_credentials_hint(instance):
    """While the owner has never signed in (no web session, no presence), a line saying how to
    get new credentials: the ones the first start printed may have been lost. None afterwards."""
    from chat_appliance.models import ROLE_OWNER, UserPresence, UserProfile, WebSession, database

    with database.connection_context():
        realm = current_realm()
        owners = list(UserProfile.select().where(UserProfile.realm == realm, UserProfile.role == ROLE_OWNER,
                                                 UserProfile.is_bot == False))  # noqa: E712
        if not owners or any(WebSession.select().where(WebSession.user == o).exists()
                             or UserPresence.select().where(UserPresence.user_profile == o).exists() for o in owners):
            return None
        email = owners[0].email
    return (f"The owner {email} has not signed in yet. The credentials were shown at the first start; for new "
            f"ones run `chat-appliance set-password {email} --instance {instance}` or "
            f"`chat-appliance reset-api-key --email {email} --instance {instance}`.")


def check_ports_free(listening):
    """Refuse, before anything is created, a port another program listens on, naming the option
    that picks another (the credentials of a new organization must not be printed and lost)."""
    ports = ([(listening.https_port, "--https-port"), (listening.http_port, "--http-port")] if listening.tls
             else [(listening.port, "--port")])
    for port, option in ports:
        family = socket.AF_INET6 if ":" in listening.host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((listening.host.strip("[]"), port))
            except PermissionError:
                continue  # a privileged port: the real bind says what to do (server/tls.py)
            except OSError as error:
                raise CommandError(f"Cannot listen on {listening.host}:{port} ({error.strerror or error}): another "
                                   f"program uses it. Pick another port with {option} PORT.") from None


def configure_logging(verbose=True):
    """Request logs with timings on stderr."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)


def raise_open_file_limit():
    """Raise the soft limit on open files to the hard limit: every waiting long poll is an open
    connection, and the usual soft limit (1,024) would refuse clients long before memory runs
    out. Returns the soft limit in force."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for target in (hard, 1_048_576, 65_536):
        if target == resource.RLIM_INFINITY or (hard != resource.RLIM_INFINITY and target > hard) or target <= soft:
            continue
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            return target
        except (ValueError, OSError):
            continue
    return soft


def cmd_serve(args):
    """Serve the API until SIGINT or SIGTERM."""
    # Python's cyclic garbage collector is off while the server starts: start-up imports and
    # builds tens of thousands of long-lived objects and makes no cyclic garbage, yet the
    # collector ran about 100 times, 13-16 ms of a 230-260 ms start. The server turns
    # it back on when it starts serving (server/asgi.run), with start-up's objects frozen.
    gc.disable()
    try:
        return _serve(args)
    finally:
        gc.enable()


def _serve(args):
    from chat_appliance.app import create_app
    from chat_appliance.server.asgi import limit_malloc_arenas

    limit_malloc_arenas()  # before any thread starts
    configure_logging(not args.quiet)
    instance = instance_path_from_env(args.instance)
    refusal = creation_refusal(args, instance)
    if refusal is not None and not instance.exists():
        raise CommandError(refusal.replace("{found}", "there is no such folder"))
    make_instance_folder(instance)
    overrides = {"LOG_REQUESTS": False} if args.quiet else {}
    if args.shard_id is not None:
        overrides["SHARD_ID"] = args.shard_id
    try:
        loaded = dict(load_config(instance, overrides))
        check_shard_id(loaded)
    except ConfigError as error:
        raise CommandError(str(error)) from None
    # Held until the process ends, taken before anything touches the database (migrations
    # included): a second server on it would split its clients between two sets of event queues.
    _owned = own_database_or_explain(loaded["DATABASE_URL"], shard=args.shard_id is not None)
    _instance, config = open_instance(args, overrides=overrides)
    try:
        listening = listening_from(config, args)
    except ConfigError as error:
        raise CommandError(str(error)) from None
    configured = configured_url(config, listening)
    opened = current_runtime()
    check_ports_free(listening)
    found = f"its database ({config['DATABASE_URL']}) holds no organization"
    credentials = ensure_organization(config, lambda: configured or args.realm_url or quick_start_url(listening),
                                      refusal and refusal.replace("{found}", found))
    made = credentials is not None
    if not made:
        hint = unused_credentials_hint(instance)
        credentials = [hint] if hint else None
    if not made:
        made = update_organization_url(configured, listening)
    if configured is None and listening.host in EVERY_INTERFACE:
        print(f"Invitations and mails link to {organization_url()} (--host {listening.host or '0.0.0.0'} is no address "
              "to browse to); to change it, set EXTERNAL_HOST in config.json or run "
              f"`chat-appliance set-realm-url URL --instance {instance}`.", flush=True)
    sweep_orphans(config, instance, shard=args.shard_id is not None)
    if made:
        # Its caches were filled while the organization was made (or its address changed), with
        # no listener yet to empty them on the changes that followed: the app opens the
        # database afresh.
        opened.close()
        opened = None
    # On an existing organization the app serves from the database open_instance opened and
    # migrated, instead of closing it and doing that work again (about 5 ms of a restart).
    return run_server(create_app(config, opened=opened), args, instance, listening, credentials=credentials)


# Other shards keep uploading while one starts: a file of theirs whose row is about to commit is
# no orphan. An upload's file and its row are seconds apart.
SHARD_ORPHAN_GRACE_SECONDS = 3600


def sweep_orphans(config, instance, shard=False):
    """Remove uploaded files left without their row by a process that died between the two
    (actions/uploads.py); alone on the database, nothing else is uploading meanwhile."""
    from chat_appliance.actions.uploads import sweep_orphan_uploads
    from chat_appliance.lib.uploads import UploadStore
    from chat_appliance.models import database

    with database.connection_context():
        removed = sweep_orphan_uploads(UploadStore(instance / "uploads", "unused"),
                                       SHARD_ORPHAN_GRACE_SECONDS if shard else 0)
    if removed:
        print(f"Removed {removed} uploaded file(s) that no upload record names (left by a stopped upload).",
              flush=True)


def creation_refusal(args, instance):
    """None when `serve` may create an organization on its own: in the default folder (the
    one-command start), or with --create. A folder named with --instance or
    CHAT_APPLIANCE_INSTANCE must hold one already, since a mistyped name would otherwise start a
    new, empty organization with new owner credentials. Otherwise the refusal, with {found} to
    fill in."""
    if args.create or (args.instance is None and not os.environ.get("CHAT_APPLIANCE_INSTANCE")):
        return None
    return (f"No organization at {instance}: {{found}}. Check the folder's name; to make a new organization "
            f"there on purpose, run `chat-appliance serve --create --instance {instance}` or "
            f"`chat-appliance init --instance {instance} ...`.")


def own_database_or_explain(database_url, shard=False):
    """The lock that makes this process the database's server (db/ownership.py), or a
    CommandError naming the process that has it."""
    from chat_appliance.db.ownership import DatabaseBusy, own_database

    try:
        return own_database(database_url, "chat-appliance serve", shard=shard)
    except DatabaseBusy as error:
        raise CommandError(str(error)) from None


@dataclass(frozen=True)
class Listening:
    """Where `serve` listens: `port` serves the app over plain HTTP when TLS is off; with TLS on,
    `https_port` serves it and `http_port` answers ACME's HTTP-01 and redirects the rest."""

    host: str
    port: int
    tls: bool = False
    http_port: int | None = None
    https_port: int | None = None

    @property
    def app_scheme(self):
        return "https" if self.tls else "http"

    @property
    def app_port(self):
        return self.https_port if self.tls else self.port


def listening_from(config, args):
    """The ports from the command line and the TLS keys; ConfigError for a combination that
    cannot work, with a line saying what to do instead."""
    domain, cert, key = config.get("TLS_DOMAIN"), config.get("TLS_CERT_FILE"), config.get("TLS_KEY_FILE")
    if domain:
        check_tls_domain(domain)
    if bool(cert) != bool(key):
        raise ConfigError("TLS_CERT_FILE and TLS_KEY_FILE go together: set both (your own certificate and its key) "
                          "or neither")
    tls = bool(domain or cert)
    http_port, https_port = getattr(args, "http_port", None), getattr(args, "https_port", None)
    if not tls:
        if http_port is not None or https_port is not None:
            raise ConfigError("--http-port and --https-port need TLS on (TLS_DOMAIN, or TLS_CERT_FILE and "
                              "TLS_KEY_FILE); without TLS the app is served on --port")
        return Listening(args.host, args.port if args.port is not None else DEFAULT_PORT)
    if args.port is not None:
        raise ConfigError("--port serves plain HTTP, which TLS replaces: with TLS on, use --https-port (default "
                          f"{DEFAULT_HTTPS_PORT}) and --http-port (default {DEFAULT_HTTP_PORT})")
    https_port = DEFAULT_HTTPS_PORT if https_port is None else https_port
    http_port = DEFAULT_HTTP_PORT if http_port is None else http_port
    return Listening(args.host, https_port, tls=True, http_port=http_port, https_port=https_port)


def check_tls_domain(domain):
    """One DNS name: a certificate is ordered for exactly it, and it becomes the organization's
    address."""
    if not isinstance(domain, str) or "," in domain:
        raise ConfigError(f"TLS_DOMAIN takes one DNS name, not a list ({domain!r}): the organization has one "
                          "address; serve other names through a reverse proxy (docs/deploy.md)")
    labels = domain.rstrip(".").split(".")
    if not domain or any(not label or len(label) > 63 or not all(c.isalnum() or c == "-" for c in label)
                         or label.startswith("-") or label.endswith("-") for label in labels):
        raise ConfigError(f"TLS_DOMAIN must be a DNS name such as chat.example.com, not {domain!r}")


def url_of(scheme, host, port):
    """scheme://host[:port], the port only where it is not the scheme's default."""
    default = DEFAULT_HTTPS_PORT if scheme == "https" else DEFAULT_HTTP_PORT
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{scheme}://{host}" if port in (None, default) else f"{scheme}://{host}:{port}"


def configured_url(config, listening):
    """The organization's address the configuration sets (TLS_DOMAIN, else EXTERNAL_HOST), or
    None when it sets none."""
    if config.get("TLS_DOMAIN"):
        return f"https://{config['TLS_DOMAIN'].rstrip('.')}"
    external = config.get("EXTERNAL_HOST")
    if not external:
        return None
    try:
        parts = urlsplit(f"//{external}")
        port = parts.port
    except ValueError:
        port = None
        parts = None
    if parts is None or not parts.hostname or parts.path or parts.query or parts.username:
        raise CommandError(f"EXTERNAL_HOST must be a host name, with a port if needed (chat.example.com or "
                           f"chat.example.com:8443), not {external!r}")
    return url_of(listening.app_scheme, parts.hostname, port if port is not None else listening.app_port)


def quick_start_url(listening):
    """The address of an organization `serve` makes on its own: where it listens, or the machine's
    host name when it listens on every interface (0.0.0.0 is no address anyone can browse to)."""
    host = listening.host
    if host in EVERY_INTERFACE:
        return url_of(listening.app_scheme, socket.gethostname(), listening.app_port)
    if listening.tls:
        return url_of("https", host, listening.https_port)
    return f"http://{host}:{listening.port}"


def organization_url():
    """The stored address of the organization."""
    from chat_appliance.models import database

    with database.connection_context():
        return current_realm().url


def update_organization_url(configured, listening):
    """Bring the stored address in line with the configuration at every start; an address on
    every interface (stored by older versions) becomes the host name's. True when it changed."""
    from chat_appliance.models import database

    with database.connection_context():
        realm = current_realm()
        target = configured
        if target is None:
            if (urlsplit(realm.url).hostname or "") not in EVERY_INTERFACE:
                return False
            target = quick_start_url(listening)
        return set_realm_url(realm, target)


def run_server(app, args, instance, listening=None, credentials=None):
    """Serve `app` on --host/--port (with TLS on, --https-port beside --http-port) on an event loop
    (chat_appliance/server/asgi.py) until SIGINT or SIGTERM. Event queues saved in the instance folder by the previous graceful stop are
    restored first, and saved again after this one. The scheduler, which sends scheduled
    messages and reminders, runs beside the server. `credentials`, lines about the owner's
    credentials, are printed once the ports are bound."""
    from chat_appliance.server import asgi
    from chat_appliance.web.context import EXTENSION
    from chat_appliance.app import close_app, resume_workers
    from chat_appliance.events.queues import DUMP_FILENAME
    from chat_appliance.server.scheduler import Scheduler

    listening = listening or Listening(args.host, args.port)
    queues = app.extensions[EXTENSION].queues
    try:
        _lock = hold_for_serving(instance)  # held until the process ends: offline commands refuse meanwhile
    except InstanceBusy as error:
        raise CommandError(str(error)) from None
    tls, certificates = prepare_tls(app.config, listening, instance) if listening.tls else (None, None)
    open_files = raise_open_file_limit()
    link = app.extensions[EXTENSION].runtime.shard
    # A shard's queues are not kept across a restart: the other shards went on publishing
    # meanwhile, and what they missed cannot be replayed. Their clients register again.
    queue_file = Path(instance) / DUMP_FILENAME if link is None else None
    restored = queues.restore(queue_file) if queue_file is not None else 0
    if restored:
        print(f"Restored {restored} event queue(s).", flush=True)

    def started():
        for line in credentials or ():
            print(line, flush=True)
        shard = f", shard {link.shard_id}" if link is not None else ""
        where = f"http://{listening.host}:{listening.port}"
        if listening.tls:
            where = (f"https://{listening.host}:{listening.https_port}, HTTP on port {listening.http_port} for ACME "
                     "and redirects")
        print(f"Serving on {where} (instance {instance}, {args.threads} threads, "
              f"open-file limit {open_files}{shard})", flush=True)
        if certificates is not None:
            certificates.start()

    leadership = None
    if link is not None:
        from chat_appliance.events.shards import Leadership

        backend_module, url = app.extensions[EXTENSION].runtime.backend, app.config["DATABASE_URL"]
        leadership = Leadership(lambda: backend_module.autocommit_connection(url))
    scheduler = Scheduler(app, leadership=leadership, first_pass_after=SCHEDULER_FIRST_PASS_SECONDS).start()
    if app.config.get("EMAIL_HOST"):
        # Mail queued before a restart (or by another process) goes out without waiting for new mail.
        app.extensions[EXTENSION].mailer.start()
    resuming = threading.Timer(RESUME_WORKERS_SECONDS, resume_workers, (app,))
    resuming.daemon = True
    resuming.start()
    if link is not None:
        link.remote_listeners.append(scheduler)
    try:
        server = asgi.run(app, host=listening.host, port=listening.port, threads=args.threads, on_started=started,
                          tls=tls)
    finally:
        resuming.cancel()
        scheduler.stop()
        if certificates is not None:
            certificates.stop()
    if not server.started:
        raise CommandError(f"could not listen on {listening.host}:{listening.port}: pick another port with --port PORT")
    if queue_file is None:
        close_app(app)
        print("Shut down cleanly (a shard keeps no event queues across a restart).", flush=True)
        return 0
    try:
        saved = queues.dump(queue_file)
    except OSError as error:
        # A full disk (or a read-only one) must not turn a clean stop into a traceback: clients
        # re-register when their queue is gone, as after a crash.
        with contextlib.suppress(OSError):
            Path(f"{queue_file}.tmp").unlink(missing_ok=True)  # a partial file would only take space
        close_app(app)
        print(f"Could not save the event queues to {queue_file}: {error}. Clients will register new queues. "
              "Shut down otherwise cleanly.", flush=True)
        return 0
    close_app(app)
    print(f"Saved {saved} event queue(s). Shut down cleanly.", flush=True)
    return 0


def prepare_tls(config, listening, instance):
    """The certificate to serve (your own, or the stored ACME one), the listening sockets, and
    the ACME manager to start once serving (None with your own certificate). Your own pair
    that does not load, or a port that cannot be opened, is a CommandError naming it."""
    import signal

    from chat_appliance.server import tls

    served = tls.ServedCertificate()
    challenges: dict[str, str] = {}
    certificates = None
    cert_file, key_file = config.get("TLS_CERT_FILE"), config.get("TLS_KEY_FILE")
    if cert_file:
        try:
            served.use(tls.load_pair(cert_file, key_file))
        except tls.CertificateError as error:
            raise CommandError(f"TLS_CERT_FILE/TLS_KEY_FILE: {error}") from None

        def reload(_signal, _frame):
            # Runs on the main thread, which runs the loop: new handshakes get the new pair at
            # once, and open connections keep the one they negotiated.
            try:
                served.use(tls.load_pair(cert_file, key_file))
            except tls.CertificateError as error:
                print(f"SIGHUP: kept the certificate in use: {error}", flush=True)
            else:
                print(f"SIGHUP: reloaded the certificate from {cert_file}; new connections get it.", flush=True)

        signal.signal(signal.SIGHUP, reload)
    else:
        from chat_appliance.server.acme_client import CertificateManager

        certificates = CertificateManager(
            instance, config["TLS_DOMAIN"].rstrip("."), config["ACME_DIRECTORY"], served=served,
            challenges=challenges, ca_bundle=config.get("ACME_CA_BUNDLE"), email=config.get("ACME_EMAIL"),
            say=lambda line: print(line, flush=True))
        if certificates.serve_stored():
            print(f"Serving the stored certificate for {certificates.domain}, valid until "
                  f"{certificates.not_after:%Y-%m-%d %H:%M:%S} UTC.", flush=True)

        def renewed_by_acme(_signal, _frame):
            # The unit's `systemctl reload` must not stop a server whose certificate ACME keeps
            # (SIGHUP's default action ends the process).
            print("SIGHUP: the certificate of TLS_DOMAIN is renewed by ACME while serving; nothing to reload.",
                  flush=True)

        signal.signal(signal.SIGHUP, renewed_by_acme)
    sockets = []
    for port in (listening.https_port, listening.http_port):
        try:
            sockets.append(tls.bind(listening.host, port))
        except PermissionError:
            raise CommandError(f"cannot listen on port {port}: {tls.PRIVILEGED_PORT_HINT}") from None
        except OSError as error:
            raise CommandError(f"could not listen on {listening.host}:{port}: {error.strerror or error}") from None
    domain = config.get("TLS_DOMAIN")
    plain = tls.PlainPort(challenges, domain.rstrip(".") if domain else None)
    return tls.TlsListeners(served, sockets[0], sockets[1], plain), certificates


def cmd_proxy_config(args):
    """Print the proxy configuration."""
    from chat_appliance.ops.proxy_config import nginx_config, parse_shard

    try:
        shards = [parse_shard(text) for text in args.shard]
        print(nginx_config(args.listen, shards, server_name=args.server_name, tls_certificate=args.tls_certificate,
                           tls_certificate_key=args.tls_certificate_key, runtime_dir=args.runtime_dir), end="")
    except ValueError as error:
        raise CommandError(str(error)) from None
    return 0


DEV_MARKER = ".chat-appliance-dev"
DEV_SETTINGS = {"RATE_LIMITING": False, "OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES": True}


def cmd_dev(args):
    """A development server on the sample organization: rate limits off, /dev_fetch_api_key on,
    mail kept and shown at /emails, a zuliprc for every account and a botserverrc written into
    DIR/zuliprc/."""
    import json
    import shutil
    import time

    from chat_appliance.app import create_app
    from chat_appliance.models import UserProfile, database
    from chat_appliance.ops.sample_data import Account, build_sample_organization, write_client_files

    started = time.perf_counter()
    configure_logging(not args.quiet)
    instance = Path(args.instance or "dev-instance").resolve()
    marker = instance / DEV_MARKER
    if args.reset and instance.exists() and any(instance.iterdir()):
        if not marker.exists():
            raise CommandError(f"{instance} was not created by `chat-appliance dev`; --reset leaves it alone.")
        shutil.rmtree(instance)
    if instance.exists() and any(instance.iterdir()) and not marker.exists():
        raise CommandError(f"{instance} holds something `chat-appliance dev` did not create. "
                           "Name another folder with --instance.")
    instance.mkdir(parents=True, exist_ok=True)
    site_url = f"http://{args.host}:{args.port}"
    config = load_config(instance, DEV_SETTINGS)
    _owned = own_database_or_explain(config["DATABASE_URL"])
    from chat_appliance.db.connection import init_database, migrate

    init_database(config["DATABASE_URL"], inline_image_preview=config["INLINE_IMAGE_PREVIEW"])
    migrate()
    accounts_file = instance / "accounts.json"
    if not marker.exists():
        limits = Limits.from_config(config)
        print(f"Creating the sample organization in {instance} ...", file=sys.stderr)
        accounts, sections = build_sample_organization(
            site_url, password_method=config["PASSWORD_HASH_METHOD"], limits=limits,
            progress=lambda text: print(f"  {text}", file=sys.stderr))
        accounts_file.write_text(json.dumps({"accounts": [vars(a) for a in accounts],
                                             "botserver": sections}, indent=1))
        marker.write_text("Created by `chat-appliance dev`; `chat-appliance dev --reset` may delete this folder.\n")
    saved = json.loads(accounts_file.read_text())
    with database.connection_context():
        accounts = []
        for entry in saved["accounts"]:
            user = UserProfile.get_or_none(UserProfile.email == entry["email"])
            if user is not None:
                accounts.append(Account(**dict(entry, api_key=user.api_key)))
        keys = {a.email: a.api_key for a in accounts}
        sections = [(name, email, keys.get(email, key), token) for name, email, key, token in saved["botserver"]]
    paths, botserverrc = write_client_files(instance / "zuliprc", site_url, accounts, sections)
    print_accounts_table(accounts, paths, botserverrc)
    print(f"Ready in {time.perf_counter() - started:.1f} s. Web and API at {site_url} "
          "(rate limits off; POST /api/v1/dev_fetch_api_key works here only; without EMAIL_HOST, "
          f"mail is kept and shown at {site_url}/emails).", flush=True)
    return run_server(create_app(config, dev_mode=True), args, instance)


def print_accounts_table(accounts, paths, botserverrc):
    """Who, password, key, file: everything a bot author needs to start."""
    rows = [(f"{a.full_name} ({a.kind})", a.email, a.password or "-", a.api_key, str(paths[a.short_name]))
            for a in accounts]
    headers = ("who", "email", "password", "API key", "zuliprc")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    for row in [headers] + rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    print(f"zulip-botserver: zulip-botserver --config-file {botserverrc} (runs helloworld on port 5002)")


def add_commands(add):
    """Register init, serve and dev on the parser (`add` is cli.main.build_parser's helper)."""
    init = add("init", cmd_init, "Create an instance: database, organization and owner.")
    init.add_argument("--org-name", required=True, help="the organization's name")
    init.add_argument("--owner-email", required=True, help="the owner's email address (their login)")
    init.add_argument("--owner-name", required=True, help="the owner's full name")
    init.add_argument("--owner-password", required=True, help="the owner's password")
    init.add_argument("--realm-url", default=f"http://localhost:{DEFAULT_PORT}",
                      help="the URL users reach the server at; its host names bot emails (default: %(default)s)")

    serve = add("serve", cmd_serve, "Serve the API until SIGINT/SIGTERM.")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    serve.add_argument("--port", type=int, default=None,
                       help=f"port of plain HTTP when TLS is off (default: {DEFAULT_PORT})")
    serve.add_argument("--http-port", type=int, default=None,
                       help=f"with TLS on: port of ACME's HTTP-01 challenges and of the redirects to HTTPS "
                            f"(default: {DEFAULT_HTTP_PORT})")
    serve.add_argument("--https-port", type=int, default=None,
                       help=f"with TLS on: port of the app over HTTPS (default: {DEFAULT_HTTPS_PORT})")
    serve.add_argument("--threads", type=int, default=DEFAULT_THREADS,
                       help="worker threads for the REST API; long polls hold none (default: %(default)s)")
    serve.add_argument("--realm-url", default=None, help="organization URL used when creating a default one")
    serve.add_argument("--create", action="store_true",
                       help="create an organization (printing its owner's credentials) when the folder named by "
                            "--instance holds none; without --instance, ./instance gets one anyway")
    serve.add_argument("--quiet", action="store_true", help="log warnings only, not every request")
    serve.add_argument("--shard-id", default=None,
                       help="run as one of several processes on one PostgreSQL database, under this name "
                            "(letters and digits; docs/scaling.md)")

    proxy = add("proxy-config", cmd_proxy_config,
                "Print a reverse proxy's configuration for several `serve --shard-id` processes (docs/deploy.md).")
    proxy.add_argument("kind", choices=["nginx"], help="the proxy (nginx)")
    proxy.add_argument("--listen", type=int, required=True, help="the port the proxy listens on")
    proxy.add_argument("--shard", action="append", default=[], metavar="K=HOST:PORT", required=True,
                       help="a shard: its --shard-id, address and port (repeat for each)")
    proxy.add_argument("--server-name", default="_", help="nginx server_name (default: any)")
    proxy.add_argument("--tls-certificate", default=None, help="serve HTTPS with this certificate (PEM chain)")
    proxy.add_argument("--tls-certificate-key", default=None, help="... and this key")
    proxy.add_argument("--runtime-dir", default=None,
                       help="directory for nginx's pid, logs and temporary files (default: nginx's prefix, -p)")

    dev = add("dev", cmd_dev, "A development server on a ready sample organization (people, bots, channels, "
              "messages), rate limits off, a zuliprc per account in DIR/zuliprc/. DIR defaults to ./dev-instance.")
    dev.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    dev.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default: %(default)s)")
    dev.add_argument("--threads", type=int, default=DEFAULT_THREADS, help="worker threads (default: %(default)s)")
    dev.add_argument("--reset", action="store_true", help="rebuild the sample organization from scratch "
                     "(only in a folder `dev` created)")
    dev.add_argument("--quiet", action="store_true", help="log warnings only, not every request")
