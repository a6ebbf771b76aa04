"""The `chat-appliance` command: init, serve, and the admin commands a self-hoster needs."""

import argparse
import contextlib
import logging
import secrets
import sys
from pathlib import Path
from urllib.parse import urlparse

from chat_appliance.config import STRING_KEYS, ConfigError, Limits, instance_path_from_env, load_config
from chat_appliance.db.runtime import current as current_runtime
from chat_appliance.ops.instance_files import (InstanceBusy, exclusively, hold_for_serving, make_instance_folder,
                                              restrict_new_files, tighten)

DEFAULT_PORT = 9991
# Worker threads of the Flask app (every endpoint except GET/DELETE /events, which wait on the
# event loop and hold no thread). Change with --threads.
DEFAULT_THREADS = 64


class CommandError(Exception):
    """A user-facing failure: printed without a traceback, exit status 1."""


def open_instance(args, *, must_exist=True, overrides=None):
    """Load the instance's configuration (with the command line's `overrides`), open its
    database and apply pending migrations."""
    from chat_appliance.db.connection import init_database, migrate
    from chat_appliance.web.auth import CREDENTIALS_MARKER, set_credentials_marker

    instance = instance_path_from_env(args.instance)
    if must_exist and not instance.exists():
        raise CommandError(f"No instance at {instance}. Create one with: chat-appliance init --instance {instance} ...")
    config = load_config(instance, overrides)
    if instance.exists():
        tighten(instance)
    init_database(config["DATABASE_URL"], pool_size=config["DATABASE_POOL_SIZE"],
                  pool_timeout=config["DATABASE_POOL_TIMEOUT_SECONDS"])
    # Credential changes made here reach a running server's long-poll cache (lib/auth.py).
    set_credentials_marker(instance / CREDENTIALS_MARKER)
    applied = migrate(progress=True)
    if applied:
        print(f"Applied {len(applied)} migration(s).", file=sys.stderr)
    return instance, config


def current_realm():
    """The instance's organization, or None before init."""
    from chat_appliance.lib.access import instance_realm

    return instance_realm()


def require_realm():
    """The organization; a clear error when the instance has none."""
    realm = current_realm()
    if realm is None:
        raise CommandError("This instance has no organization yet. Run: chat-appliance init ...")
    return realm


def find_user(realm, email):
    """An account by email, or a CommandError naming the address."""
    from chat_appliance.models import UserProfile

    user = UserProfile.get_by_login_email(email)
    if user is None or user.realm_id != realm.id:
        raise CommandError(f"No user with email {email!r}. List them with: chat-appliance list-users")
    return user


def create_organization(config, org_name, email, full_name, password, realm_url):
    """Create the organization and its owner; returns the owner."""
    from chat_appliance.actions.realm import do_create_realm

    host = urlparse(realm_url).hostname or "localhost"
    _realm, owner = do_create_realm(org_name, host, realm_url, email, full_name, password,
                                    password_method=config["PASSWORD_HASH_METHOD"])
    return owner


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


def ensure_organization(config, realm_url):
    """On an instance with no organization, create one from defaults and print its owner's
    credentials once, so that `chat-appliance serve` alone gives a working server."""
    from chat_appliance.models import database

    with database.connection_context():
        if current_realm() is not None:
            return
        password = secrets.token_urlsafe(12)
        owner = create_organization(config, "chat-appliance", "owner@localhost", "Owner", password, realm_url)
        print("Created a new organization. Sign in with these credentials (shown once):")
        print(f"  email:    {owner.email}")
        print(f"  password: {password}")
        print(f"  API key:  {owner.api_key}")
        sys.stdout.flush()


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
    from chat_appliance.app import create_app
    from chat_appliance.server.asgi import limit_malloc_arenas

    limit_malloc_arenas()  # before any thread starts
    configure_logging(not args.quiet)
    instance = instance_path_from_env(args.instance)
    make_instance_folder(instance)
    _instance, config = open_instance(args, overrides={"LOG_REQUESTS": False} if args.quiet else None)
    realm_url = args.realm_url or f"http://{args.host}:{args.port}"
    ensure_organization(config, realm_url)
    current_runtime().close()  # the app opens its own
    return run_server(create_app(config), args, instance)


def run_server(app, args, instance):
    """Serve `app` on --host/--port on an event loop (chat_appliance/server/asgi.py) until SIGINT or
    SIGTERM. Event queues saved in the instance folder by the previous graceful stop are
    restored first, and saved again after this one. The scheduler, which sends scheduled
    messages and reminders, runs beside the server."""
    from chat_appliance.server import asgi
    from chat_appliance.web.context import EXTENSION
    from chat_appliance.app import close_app
    from chat_appliance.events.queues import DUMP_FILENAME
    from chat_appliance.server.scheduler import Scheduler

    queues = app.extensions[EXTENSION].queues
    try:
        _lock = hold_for_serving(instance)  # held until the process ends: offline commands refuse meanwhile
    except InstanceBusy as error:
        raise CommandError(str(error)) from None
    open_files = raise_open_file_limit()
    queue_file = Path(instance) / DUMP_FILENAME
    restored = queues.restore(queue_file)
    if restored:
        print(f"Restored {restored} event queue(s).", flush=True)

    def started():
        print(f"Serving on http://{args.host}:{args.port} (instance {instance}, {args.threads} threads, "
              f"open-file limit {open_files})", flush=True)

    scheduler = Scheduler(app).start()
    try:
        server = asgi.run(app, host=args.host, port=args.port, threads=args.threads, on_started=started)
    finally:
        scheduler.stop()
    if not server.started:
        raise CommandError(f"could not listen on {args.host}:{args.port}")
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


DEV_MARKER = ".chat-appliance-dev"
DEV_SETTINGS = {"RATE_LIMITING": False, "OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES": True}


def cmd_dev(args):
    """A development server on the sample organization: rate limits off, /dev_fetch_api_key on,
    a zuliprc for every account and a botserverrc written into DIR/zuliprc/."""
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
    from chat_appliance.db.connection import init_database, migrate

    init_database(config["DATABASE_URL"])
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
          "(rate limits off; POST /api/v1/dev_fetch_api_key works here only).", flush=True)
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


def cmd_create_user(args):
    """Create an account."""
    from chat_appliance.actions.users import do_create_user
    from chat_appliance.lib.errors import JsonableError
    from chat_appliance.models import ROLES, database

    _instance, config = open_instance(args)
    if args.role not in ROLES:
        raise CommandError(f"--role must be one of {', '.join(map(str, ROLES))}")
    with database.connection_context():
        realm = require_realm()
        try:
            user = do_create_user(realm, args.email, args.password, args.full_name, role=args.role,
                                  password_method=config["PASSWORD_HASH_METHOD"])
        except JsonableError as error:
            raise CommandError(error.msg) from None
        print(f"Created {user.email} (user id {user.id}, role {user.role})")
        print(f"API key: {user.api_key}")
    return 0


def cmd_change_role(args):
    """Change an account's role."""
    from chat_appliance.actions.users import do_change_role
    from chat_appliance.lib.access import only_owner
    from chat_appliance.models import ROLE_OWNER, ROLES, database

    open_instance(args)
    if args.role not in ROLES:
        raise CommandError(f"--role must be one of {', '.join(map(str, ROLES))}")
    with database.connection_context():
        user = find_user(require_realm(), args.email)
        if user.role == ROLE_OWNER and args.role != ROLE_OWNER and only_owner(user):
            raise CommandError("That is the only owner; make another user owner first.")
        do_change_role(user, args.role)
        print(f"{user.email} now has role {args.role}")
    return 0


def cmd_reset_api_key(args):
    """Give an account a new API key and print it."""
    from chat_appliance.actions.users import do_regenerate_api_key
    from chat_appliance.models import database

    open_instance(args)
    with database.connection_context():
        user = find_user(require_realm(), args.email)
        print(do_regenerate_api_key(user))
    return 0


def cmd_set_permission(args):
    """Grant or revoke a special permission (Zulip's can_change_user_emails)."""
    from chat_appliance.actions.users import do_set_permission
    from chat_appliance.lib.errors import JsonableError
    from chat_appliance.models import database

    open_instance(args)
    with database.connection_context():
        user = find_user(require_realm(), args.email)
        try:
            do_set_permission(user, args.permission, not args.revoke)
        except JsonableError as error:
            raise CommandError(error.msg) from None
        print(f"{user.email}: {args.permission} {'revoked' if args.revoke else 'granted'}")
    return 0


def cmd_set_password(args):
    """Set an account's password (the appliance sends no email, so an administrator resets lost ones)."""
    import getpass

    from chat_appliance.actions.users import do_change_password
    from chat_appliance.models import database

    _instance, config = open_instance(args)
    with database.connection_context():
        user = find_user(require_realm(), args.email)
        if user.is_bot:
            raise CommandError(f"{user.email} is a bot; bots sign in with their API key.")
        if args.password_stdin:
            password = sys.stdin.readline().rstrip("\n")
        else:
            password = getpass.getpass(f"New password for {user.email}: ")
            if getpass.getpass("Again: ") != password:
                raise CommandError("The passwords differ; nothing was changed.")
        if len(password) < 6:
            raise CommandError("A password needs at least 6 characters; nothing was changed.")
        do_change_password(user, password, config["PASSWORD_HASH_METHOD"])
    print(f"Password of {user.email} changed.")
    return 0


def cmd_backup(args):
    """Write a consistent archive of a (running) instance."""
    from chat_appliance.ops.backup import BackupError, backup

    instance = instance_path_from_env(args.instance)
    if not instance.exists():
        raise CommandError(f"No instance at {instance}.")
    config = load_config(instance)
    try:
        manifest = backup(instance, config, args.file)
    except BackupError as error:
        raise CommandError(str(error)) from None
    tables = manifest["database"].get("tables")
    rows = f"{tables.get('message', 0)} messages, " if tables else ""
    print(f"Backed up {instance} to {args.file}: {rows}{manifest['uploads']['count']} uploads.")
    return 0


def cmd_restore(args):
    """Unpack a backup into a new instance folder and verify it."""
    from chat_appliance.ops.backup import BackupError, restore

    instance = instance_path_from_env(args.instance)
    try:
        manifest = restore(instance, args.file)
    except BackupError as error:
        raise CommandError(str(error)) from None
    tables = manifest["database"].get("tables")
    rows = f"{tables.get('message', 0)} messages, " if tables else ""
    print(f"Restored {args.file} into {instance}: {rows}{manifest['uploads']['count']} uploads, verified. "
          f"Start it with: chat-appliance serve --instance {instance}")
    return 0


def cmd_list_users(args):
    """Print the organization's accounts."""
    from chat_appliance.models import UserProfile, database

    open_instance(args)
    with database.connection_context():
        realm = require_realm()
        print(f"{'id':>5}  {'role':>4}  {'active':6}  {'bot':3}  email / name")
        for user in UserProfile.select().where(UserProfile.realm == realm).order_by(UserProfile.id):
            print(f"{user.id:>5}  {user.role:>4}  {'yes' if user.is_active else 'no':6}  "
                  f"{'yes' if user.is_bot else 'no':3}  {user.email} / {user.full_name}")
    return 0


def cmd_migrate_database(args):
    """Copy the instance's SQLite database into an empty PostgreSQL database, then point the
    instance at it (chat_appliance/ops/migrate_database.py)."""
    from chat_appliance.ops.migrate_database import TransferError, migrate_database, point_instance_at

    instance = instance_path_from_env(args.instance)
    if not instance.exists():
        raise CommandError(f"No instance at {instance}.")
    config = load_config(instance)
    if config["DATABASE_URL"] == args.to:
        raise CommandError("The instance already uses that database.")
    try:
        with exclusively(instance, "migrate-database"):
            print(f"Copying {config['DATABASE_URL']} into {args.to} ...", file=sys.stderr)
            migrate_database(config["DATABASE_URL"], args.to)
            point_instance_at(instance, args.to)
    except (TransferError, InstanceBusy) as error:
        raise CommandError(str(error)) from None
    print(f"The instance {instance} now uses {args.to} (config.json). The SQLite file is unchanged; "
          "uploaded files stay in the instance folder.")
    return 0


CONFIG_HELP = f"""configuration:
  Every key of chat_appliance/config.py (MAX_TOPIC_LENGTH, DATABASE_URL, ...) is read from, the
  later winning: its default, the instance's config.json, the environment variable
  CHAT_APPLIANCE_<KEY>, then a command-line option (--instance; serve --quiet sets LOG_REQUESTS).
  Environment values are JSON (false, 25, ["a", "b"]) except for the string keys
  {", ".join(sorted(STRING_KEYS))}, taken as written. The instance folder is --instance, else
  $CHAT_APPLIANCE_INSTANCE, else ./instance."""


def build_parser():
    """The argument parser for every subcommand."""
    parser = argparse.ArgumentParser(
        prog="chat-appliance",
        description="A one-process team chat server that speaks the Zulip REST API.",
        epilog=CONFIG_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name, func, help_text):
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        cmd.add_argument("--instance", help="instance folder (default: $CHAT_APPLIANCE_INSTANCE, else ./instance)")
        cmd.set_defaults(func=func)
        return cmd

    init = add("init", cmd_init, "Create an instance: database, organization and owner.")
    init.add_argument("--org-name", required=True, help="the organization's name")
    init.add_argument("--owner-email", required=True, help="the owner's email address (their login)")
    init.add_argument("--owner-name", required=True, help="the owner's full name")
    init.add_argument("--owner-password", required=True, help="the owner's password")
    init.add_argument("--realm-url", default=f"http://localhost:{DEFAULT_PORT}",
                      help="the URL users reach the server at; its host names bot emails (default: %(default)s)")

    serve = add("serve", cmd_serve, "Serve the API until SIGINT/SIGTERM.")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default: %(default)s)")
    serve.add_argument("--threads", type=int, default=DEFAULT_THREADS,
                       help="worker threads for the REST API; long polls hold none (default: %(default)s)")
    serve.add_argument("--realm-url", default=None, help="organization URL used when creating a default one")
    serve.add_argument("--quiet", action="store_true", help="log warnings only, not every request")

    dev = add("dev", cmd_dev, "A development server on a ready sample organization (people, bots, channels, "
              "messages), rate limits off, a zuliprc per account in DIR/zuliprc/. DIR defaults to ./dev-instance.")
    dev.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    dev.add_argument("--port", type=int, default=DEFAULT_PORT, help="port (default: %(default)s)")
    dev.add_argument("--threads", type=int, default=DEFAULT_THREADS, help="worker threads (default: %(default)s)")
    dev.add_argument("--reset", action="store_true", help="rebuild the sample organization from scratch "
                     "(only in a folder `dev` created)")
    dev.add_argument("--quiet", action="store_true", help="log warnings only, not every request")

    create = add("create-user", cmd_create_user, "Create an account.")
    create.add_argument("--email", required=True)
    create.add_argument("--full-name", required=True)
    create.add_argument("--password", required=True)
    create.add_argument("--role", type=int, default=400, help="100 owner, 200 admin, 300 moderator, "
                        "400 member (default), 600 guest")

    role = add("change-role", cmd_change_role, "Change an account's role.")
    role.add_argument("--email", required=True)
    role.add_argument("--role", type=int, required=True, help="100, 200, 300, 400 or 600")

    reset = add("reset-api-key", cmd_reset_api_key, "Give an account a new API key and print it.")
    reset.add_argument("--email", required=True)

    perm = add("set-permission", cmd_set_permission,
               "Grant (or with --revoke, revoke) a special permission such as can_change_user_emails, "
               "which an owner needs to change other users' email addresses.")
    perm.add_argument("--email", required=True)
    perm.add_argument("--permission", required=True, help="can_change_user_emails")
    perm.add_argument("--revoke", action="store_true")

    add("list-users", cmd_list_users, "List the organization's accounts.")

    password = add("set-password", cmd_set_password,
                   "Set an account's password (asked twice on the terminal, or read from stdin).")
    password.add_argument("email")
    password.add_argument("--password-stdin", action="store_true", help="read the new password from stdin")

    backup = add("backup", cmd_backup,
                 "Archive the database (SQLite online backup), uploads and configuration while serve runs.")
    backup.add_argument("file", help="the archive to write (.tar.gz)")

    restore = add("restore", cmd_restore,
                  "Unpack a backup into a new, empty instance folder and verify it against its manifest.")
    restore.add_argument("file", help="the archive written by chat-appliance backup")

    move = add("migrate-database", cmd_migrate_database,
               "Copy the instance's SQLite database into an empty PostgreSQL database (ids, search index and "
               "all), verify row counts, and point the instance's config.json at it. The source is not changed.")
    move.add_argument("--to", required=True, metavar="URL", help="postgresql://user@host:port/dbname (empty)")

    from chat_appliance.cli.transfer import add_transfer_commands

    add_transfer_commands(add)
    return parser


def main(argv=None):
    """Entry point of the console script and of `python -m chat_appliance`."""
    args = build_parser().parse_args(argv)
    restrict_new_files()
    try:
        return args.func(args)
    except (CommandError, ConfigError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
