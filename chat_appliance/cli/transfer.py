"""`chat-appliance export` and `chat-appliance import-zulip`: moving an organization between
servers in Zulip's export layout (see transfer/)."""

import argparse
import sys
import time
from pathlib import Path

from chat_appliance.cli.common import CommandError, open_instance, require_realm


def cmd_export(args):
    """Write the organization to a folder in Zulip's export layout, and a .tar.gz of it."""
    from chat_appliance.models import database
    from chat_appliance.ops.transfer.exporter import export_realm, make_tarball
    from chat_appliance.ops.transfer.progress import ProgressBar

    instance, config = open_instance(args)
    output = Path(args.output) if args.output else instance / "exports" / f"zulip-export-{int(time.time())}"
    if output.exists():
        raise CommandError(f"{output} already exists: choose another --output")
    bar = ProgressBar()
    with database.connection_context():
        folder = export_realm(require_realm(), config["INSTANCE_PATH"], output, progress=bar)
    bar.close()
    tarball = make_tarball(folder)
    print(f"Exported to {folder}\nArchive: {tarball}")
    return 0


def cmd_import_zulip(args):
    """Create a new instance from an export (this server's or a Zulip server's `manage.py export`)."""
    from chat_appliance.config import instance_path_from_env
    from chat_appliance.ops.transfer.importer import ArchiveError, import_export
    from chat_appliance.ops.transfer.progress import ProgressBar

    instance = instance_path_from_env(args.instance)
    bar = ProgressBar()
    try:
        helpers = {} if args.helpers is None else {"helpers": args.helpers}
        summary = import_export(args.export, instance, realm_url=args.realm_url, progress=bar, **helpers)
    except ArchiveError as error:
        bar.close()
        raise CommandError(str(error)) from None
    bar.close()
    print(f"Imported {summary['users']} users, {summary['channels']} channels, {summary['messages']} messages, "
          f"{summary['reactions']} reactions, {summary['uploads']} uploads and {summary['custom_emoji']} custom "
          f"emoji into {instance}.")
    print("Accounts have no passwords or API keys from the old server: give each user a key with "
          f"`chat-appliance reset-api-key --instance {instance} --email EMAIL`.", file=sys.stderr)
    return 0


def cmd_import_slack(args):
    """Create a new instance from a Slack workspace export (.zip), downloading its files."""
    from chat_appliance.config import instance_path_from_env
    from chat_appliance.ops.transfer.importer import ArchiveError
    from chat_appliance.ops.transfer.progress import ProgressBar
    from chat_appliance.ops.transfer.slack import import_slack

    instance = instance_path_from_env(args.instance)
    bar = ProgressBar()
    try:
        summary = import_slack(args.export, instance, token=args.token, realm_url=args.realm_url,
                               org_name=args.org_name, progress=bar, files_host=args.files_host)
    except ArchiveError as error:
        bar.close()
        raise CommandError(str(error)) from None
    bar.close()
    print(f"Imported {summary['users']} people ({summary['deactivated']} deactivated), {summary['bots']} bots, "
          f"{summary['channels']} channels, {summary['direct_conversations']} direct-message conversations, "
          f"{summary['messages']} messages, {summary['reactions']} reactions and {summary['uploads']} files "
          f"into {instance}.")
    if summary["skipped"]:
        print(f"Skipped ({len(summary['skipped'])}):")
        for line in summary["skipped"]:
            print(f"  - {line}")
    else:
        print("Skipped: nothing.")
    print("People have no passwords: they sign in after a password reset (or by single sign-on where it is "
          "configured); give one an API key with "
          f"`chat-appliance reset-api-key --instance {instance} --email EMAIL`.", file=sys.stderr)
    return 0


def helper_count(text):
    """--helpers: a count of processes, 0 or more."""
    try:
        count = int(text)
    except ValueError:
        count = -1
    if not 0 <= count <= 64:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes from 0 to 64")
    return count


def add_commands(add):
    """Register export and import-zulip on the parser (`add` is cli.main.build_parser's helper)."""
    export = add("export", cmd_export, "Export the organization in Zulip's export layout (folder and .tar.gz).")
    export.add_argument("--output", help="folder to create (default: INSTANCE/exports/zulip-export-TIME)")
    imp = add("import-zulip", cmd_import_zulip,
              "Create a new instance from a Zulip export (`manage.py export`) or a chat-appliance export. "
              "The whole archive is checked before anything is written.")
    imp.add_argument("export", help="the export folder or its .tar.gz")
    imp.add_argument("--realm-url", default="http://localhost:9991",
                     help="the URL users will reach the server at, for exports that do not carry one "
                          "(default: %(default)s)")
    imp.add_argument("--helpers", type=helper_count, default=None, metavar="N",
                     help="processes that read and check the message files while the import writes, at "
                          "most one per core; each holds about 8 times a message file's size in memory "
                          "(default: as many as fit in 128 MiB: two for files of up to 8 MiB, none for files "
                          "over 16 MiB; 0: the import reads them itself)")
    slack = add("import-slack", cmd_import_slack,
                "Create a new organization from a Slack export (.zip), with its files. Everything is read, "
                "checked and downloaded before anything is written.")
    slack.add_argument("export", help="the .zip from Slack's export page")
    slack.add_argument("--token", help="a Slack token that can read the export's files (sent only to Slack's "
                                       "file URLs, never stored)")
    slack.add_argument("--realm-url", default="http://localhost:9991",
                       help="the URL users will reach the server at (default: %(default)s)")
    slack.add_argument("--org-name", help="the organization's name (default: from the export's file name)")
    slack.add_argument("--files-host", default="files.slack.com",
                       help="the host of the files Slack hosts, the only one the token is sent to; files "
                            "elsewhere stay links (default: %(default)s)")
