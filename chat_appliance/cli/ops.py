"""The operator's commands on a whole instance: backup, restore, migrate-database, send-test-email,
thumbnail-uploads, upgrade and check-migrations."""

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from chat_appliance.cli.common import CommandError, open_instance
from chat_appliance.config import instance_path_from_env, load_config
from chat_appliance.ops.instance_files import InstanceBusy, exclusively


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
        manifest = restore(instance, args.file, trust_settings=args.yes)
    except BackupError as error:
        raise CommandError(str(error)) from None
    tables = manifest["database"].get("tables")
    rows = f"{tables.get('message', 0)} messages, " if tables else ""
    print(f"Restored {args.file} into {instance}: {rows}{manifest['uploads']['count']} uploads, verified. "
          f"Start it with: chat-appliance serve --instance {instance}")
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
    from chat_appliance.db.ownership import DatabaseBusy, own_database

    try:
        # The database's own lock, not only the folder's: another folder's DATABASE_URL may name
        # the file a server is writing.
        owned = own_database(config["DATABASE_URL"], "chat-appliance migrate-database")
    except DatabaseBusy as error:
        raise CommandError(f"{error} Nothing was changed.") from None
    try:
        with exclusively(instance, "migrate-database"):
            print(f"Copying {config['DATABASE_URL']} into {args.to} ...", file=sys.stderr)
            migrate_database(config["DATABASE_URL"], args.to)
            point_instance_at(instance, args.to)
    except (TransferError, InstanceBusy) as error:
        raise CommandError(str(error)) from None
    finally:
        owned.release()
    print(f"The instance {instance} now uses {args.to} (config.json). The SQLite file is unchanged; "
          "uploaded files stay in the instance folder.")
    return 0


def cmd_send_test_email(args):
    """Send one mail now, in the foreground, and say what the SMTP server answered."""
    import smtplib

    from chat_appliance.clients.send_email import EmailSettings, smtp_send, standard_email

    instance = instance_path_from_env(args.instance)
    config = load_config(instance)
    if not config["EMAIL_HOST"]:
        raise CommandError("EMAIL_HOST is not set: put the EMAIL_* keys in config.json (docs/deploy.md, Email).")
    try:
        settings = EmailSettings.from_config(config)
    except OSError as error:
        raise CommandError(f"Cannot read EMAIL_HOST_PASSWORD_FILE: {error}") from None
    try:
        message = standard_email(noreply=settings.noreply, sender_name="chat-appliance", to_name="",
                                 to_email=args.address, subject="chat-appliance test email",
                                 paragraphs=["This is a test email from chat-appliance.",
                                             "If you can read it, outgoing email works."])
        smtp_send(settings, message)
    except (OSError, smtplib.SMTPException, ValueError) as error:
        raise CommandError(f"Sending through {settings.host}:{settings.port} failed: "
                           f"{type(error).__name__}: {error}") from None
    print(f"Sent a test email to {args.address} through {settings.host}:{settings.port} "
          f"from {settings.noreply}.")
    return 0


def cmd_thumbnail_uploads(args):
    """Thumbnails for the images uploaded before this version made them at upload (once; a
    second run finds nothing to do). Runs beside a running server."""
    from chat_appliance.actions.uploads import do_thumbnail_existing_uploads

    instance, _config = open_instance(args)
    made, seen = do_thumbnail_existing_uploads(instance / "uploads", progress=progress_bar("thumbnail-uploads"))
    print(f"Made thumbnails for {made} image(s) among {seen} upload(s) that had none.")
    return 0


def cmd_upgrade(args):
    """Upgrade in one command that cannot leave the team half-way: back up, install the new
    version, prove its migrations on a copy of the database, and say what changed. The instance
    itself is not touched: `serve` applies the migrations at its next start, which the copy
    showed will work. Every failure says how to go back."""
    from chat_appliance import __version__ as old_version
    from chat_appliance.ops.backup import BackupError, backup

    instance = instance_path_from_env(args.instance)
    if not (instance / "chat.sqlite3").exists() and not (instance / "config.json").exists():
        raise CommandError(f"No instance at {instance}.")
    config = load_config(instance)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    archive = Path(args.backup or instance.parent / f"{instance.name}-before-upgrade-{stamp}.tar.gz").resolve()
    back = (f"To go back: pip install 'chat-appliance=={old_version}' (the version you had), then, if the data "
            f"must go back too, `chat-appliance restore {archive} --instance NEW_FOLDER` and serve NEW_FOLDER.")

    print(f"[1/3] Backing up {instance} to {archive} ...", flush=True)
    try:
        backup(instance, config, archive)
    except (BackupError, OSError) as error:
        raise CommandError(f"The backup failed ({error}); nothing was installed or changed.") from None
    if args.no_install:
        print("[2/3] Not installing (--no-install): checking the version installed now.", flush=True)
    else:
        command = [sys.executable, "-m", "pip", "install", "--upgrade", args.package]
        print(f"[2/3] Installing: {' '.join(command)}", flush=True)
        if subprocess.run(command).returncode != 0:
            raise CommandError(f"pip could not install {args.package} (above); the instance was not touched, and "
                               f"pip leaves the installed version as it was when an install fails. {back}")
    print("[3/3] Checking that the migrations apply, on a copy of the database ...", flush=True)
    # The new version checks its own migrations: this process still runs the old code.
    checked = subprocess.run([sys.executable, "-m", "chat_appliance", "check-migrations", "--instance", str(instance),
                              "--from-backup", str(archive)])
    if checked.returncode != 0:
        raise CommandError(f"The new version's migrations fail on a copy of the database (above); the instance was "
                           f"not touched. Do not start serve with this version. {back}")
    new_version = subprocess.run([sys.executable, "-c", "from chat_appliance import __version__; print(__version__)"],
                                 capture_output=True, text=True).stdout.strip() or "?"
    change = f"{old_version} -> {new_version}" if new_version != old_version else f"{old_version} (unchanged)"
    print(f"Upgraded chat-appliance {change}. Restart serve to finish (systemctl restart chat-appliance): it "
          f"applies the migrations above at start. Backup: {archive}. {back}", flush=True)
    return 0


def cmd_check_migrations(args):
    """Apply the migrations this version has and the database lacks to a copy of it (from a
    backup, or a snapshot of the live SQLite database), and list them; nothing else changes."""
    from chat_appliance import __version__
    from chat_appliance.ops.backup import BackupError, snapshot_sqlite

    instance = instance_path_from_env(args.instance)
    config = load_config(instance)
    url = config["DATABASE_URL"]
    if not url.startswith("sqlite:"):
        print(f"chat-appliance {__version__}: the database is PostgreSQL, which this check cannot copy. Restore a "
              "pg_dump into a scratch database and start serve on it (DATABASE_URL) to try the migrations there "
              "first; serve applies them at start, each in its own transaction.")
        return 0
    with tempfile.TemporaryDirectory(prefix="chat-appliance-check-") as folder:
        copy = Path(folder) / "chat.sqlite3"
        try:
            if args.from_backup:
                _database_from_backup(Path(args.from_backup), copy)
            else:
                from chat_appliance.db.backends import sqlite as sqlite_backend

                snapshot_sqlite(sqlite_backend.path_from_url(url), copy)
        except (BackupError, OSError, KeyError) as error:
            raise CommandError(f"Could not copy the database to check the migrations: {error}") from None
        return _check_copy(copy, __version__)


def _database_from_backup(archive, target):
    import shutil
    import tarfile

    from chat_appliance.ops.backup import DATABASE_NAME

    with tarfile.open(archive, "r:gz") as opened, opened.extractfile(DATABASE_NAME) as source, \
            open(target, "wb") as out:
        shutil.copyfileobj(source, out)


def _check_copy(copy, version):
    from chat_appliance import migrations
    from chat_appliance.db.connection import applied_versions, init_database, migrate
    from chat_appliance.models import database

    init_database(f"sqlite:///{copy}")
    with database.connection_context():
        done = applied_versions()
    pending = [(number, doc) for number, doc, _step in migrations.MIGRATIONS if number not in done]
    if not pending:
        print(f"chat-appliance {version}: the database is up to date, no migration to apply.")
        return 0
    print(f"chat-appliance {version}: {len(pending)} migration(s) to apply:")
    for number, doc in pending:
        print(f"  {number:04d}: {doc}")
    try:
        migrate()
        with database.connection_context():
            missing = [number for number, _doc in pending if number not in applied_versions()]
    except Exception as error:  # any failure of a migration is what this check is for
        raise CommandError(f"a migration fails on a copy of the database: {type(error).__name__}: {error}") from None
    if missing:
        raise CommandError(f"migrations {missing} did not apply on a copy of the database")
    print(f"They apply cleanly to a copy of the database ({len(pending)} applied, the instance not touched).")
    return 0


def progress_bar(label):
    """A one-line progress bar on standard error: `label: [#####.....] done/total`."""
    def show(done, total):
        filled = int(30 * done / total) if total else 30
        end = "\n" if done >= total else ""
        print(f"\r{label}: [{'#' * filled}{'.' * (30 - filled)}] {done}/{total}", end=end, file=sys.stderr, flush=True)
    return show


def add_commands(add):
    """Register backup, restore and migrate-database on the parser (`add` is cli.main.build_parser's helper)."""
    backup = add("backup", cmd_backup,
                 "Archive the database (SQLite online backup), uploads and configuration while serve runs.")
    backup.add_argument("file", help="the archive to write (.tar.gz)")

    restore = add("restore", cmd_restore,
                  "Unpack a backup into a new, empty instance folder and verify it against its manifest.")
    restore.add_argument("file", help="the archive written by chat-appliance backup")
    restore.add_argument("--yes", action="store_true",
                         help="keep the backup's settings that widen trust (trusted proxies, host names, mail "
                              "server, push service), which restore otherwise refuses after listing them")

    move = add("migrate-database", cmd_migrate_database,
               "Copy the instance's SQLite database into an empty PostgreSQL database (ids, search index and "
               "all), verify row counts, and point the instance's config.json at it. The source is not changed.")
    move.add_argument("--to", required=True, metavar="URL", help="postgresql://user@host:port/dbname (empty)")

    test_email = add("send-test-email", cmd_send_test_email,
                     "Send a test email with the instance's EMAIL_* settings, now, and report the SMTP answer.")
    test_email.add_argument("address", help="where to send it")

    add("thumbnail-uploads", cmd_thumbnail_uploads,
        "Make thumbnails (Zulip's 840x560 webp) for images uploaded before thumbnails were made at upload, "
        "with a progress bar; messages sent or edited afterwards show them as previews.")

    upgrade = add("upgrade", cmd_upgrade,
                  "Upgrade chat-appliance: back up the instance, pip install --upgrade, check the new version's "
                  "migrations on a copy of the database, and say what changed and how to go back. Then restart "
                  "serve, which applies them.")
    upgrade.add_argument("--package", default="chat-appliance",
                         help="what pip installs (default: %(default)s; a version, path or URL works too)")
    upgrade.add_argument("--backup", default=None, metavar="FILE",
                         help="where to write the backup (default: next to the instance folder, dated)")
    upgrade.add_argument("--no-install", action="store_true",
                         help="install nothing (the new version was installed otherwise): back up and check only")

    check = add("check-migrations", cmd_check_migrations,
                "List the migrations this version would apply to the instance's database and apply them to a "
                "copy of it, to show that they work; the instance is not changed.")
    check.add_argument("--from-backup", default=None, metavar="FILE",
                       help="take the database from this backup instead of the live instance")
