"""The `chat-appliance` command: init, serve, and the admin commands a self-hoster needs.

This module builds the parser; each group of commands lives in its own module (serve, admin,
ops, transfer, push), which registers its commands through `add_commands` and loads what a command
needs only when it runs. They share cli/common.py and import nothing from here.
"""

import argparse
import sys

from chat_appliance.cli import admin, ops, push, serve, transfer
from chat_appliance.cli.common import CommandError
from chat_appliance.config import STRING_KEYS, ConfigError
from chat_appliance.db.drivers import import_peewee_without_drivers
from chat_appliance.ops.instance_files import restrict_new_files


CONFIG_HELP = f"""configuration:
  Every key of chat_appliance/config.py (MAX_TOPIC_LENGTH, DATABASE_URL, ...) is read from, the
  later winning: its default, the instance's config.json, the environment variable
  CHAT_APPLIANCE_<KEY>, then a command-line option (--instance; serve --quiet sets LOG_REQUESTS).
  Environment values are JSON (false, 25, ["a", "b"]) except for the string keys
  {", ".join(sorted(STRING_KEYS))}, taken as written. The instance folder is --instance, else
  $CHAT_APPLIANCE_INSTANCE, else ./instance."""


class _NotAsked:
    """Stands in for the parser of a subcommand that was not asked for (build_parser's `only`)."""

    def add_argument(self, *args, **kwargs):
        return None

    def set_defaults(self, **kwargs):
        return None


def build_parser(only=None):
    """The argument parser for every subcommand; with `only`, a subcommand's name, for that one
    alone: a command's run needs no other, and building all forty took 9 ms of every start
    (start-up time). A name that is no subcommand gets the whole parser, whose error lists them."""
    parser = argparse.ArgumentParser(
        prog="chat-appliance",
        description="A one-process team chat server that speaks the Zulip REST API.",
        epilog=CONFIG_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    added = []

    def add(name, func, help_text):
        if only is not None and name != only:
            return _NotAsked()
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        cmd.add_argument("--instance", help="instance folder (default: $CHAT_APPLIANCE_INSTANCE, else ./instance)")
        cmd.set_defaults(func=func)
        added.append(name)
        return cmd

    for group in (serve, admin, ops, transfer, push):
        group.add_commands(add)
    if only is not None and not added:
        return build_parser()
    return parser


def main(argv=None):
    """Entry point of the console script and of `python -m chat_appliance`."""
    # This process is the command's: peewee comes without the drivers of backends not in use,
    # before anything imports it (db/drivers.py).
    import_peewee_without_drivers()
    words = sys.argv[1:] if argv is None else list(argv)
    asked = words[0] if words and not words[0].startswith("-") else None
    args = build_parser(only=asked).parse_args(words)
    restrict_new_files()
    try:
        return args.func(args)
    except (CommandError, ConfigError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
