"""The operator's commands on a whole instance: backup, restore, migrate-database, send-test-email,
thumbnail-uploads."""

import sys

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
        manifest = restore(instance, args.file)
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
