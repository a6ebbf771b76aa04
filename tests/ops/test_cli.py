"""The command line: init, the admin commands, --help, and clear errors."""

import os

import pytest

from ..support import pg
from ..support.helpers import INIT_ARGS, run


def test_init_creates_owner(instance):
    """Does init create the organization with its owner (role 100)?"""
    listing = run("list-users", "--instance", str(instance))
    assert listing.returncode == 0
    owner_line = next(line for line in listing.stdout.splitlines() if "boss@acme.example" in line)
    assert " 100 " in owner_line


def database_snapshot(instance):
    """The instance's whole database: the SQLite file's bytes, or every PostgreSQL row."""
    if not pg.ENABLED:
        return (instance / "chat.sqlite3").read_bytes()
    return pg.snapshot(os.environ["CHAT_APPLIANCE_DATABASE_URL"])


def test_second_init_fails_and_changes_nothing(instance):
    """Does a second init on the same folder fail clearly and leave the data alone?"""
    before = database_snapshot(instance)
    result = run("init", "--instance", str(instance), *INIT_ARGS[:-1], "other-password")
    assert result.returncode != 0 and "already" in result.stderr
    assert database_snapshot(instance) == before


def test_instance_from_environment(tmp_path):
    """Does --instance default to $CHAT_APPLIANCE_INSTANCE?"""
    env = dict(os.environ, CHAT_APPLIANCE_INSTANCE=str(tmp_path / "from-env"))
    assert run("init", *INIT_ARGS, env=env).returncode == 0
    assert (tmp_path / "from-env").is_dir()
    if not pg.ENABLED:
        assert (tmp_path / "from-env" / "chat.sqlite3").exists()
    listing = run("list-users", env=env)
    assert listing.returncode == 0 and "boss@acme.example" in listing.stdout


def test_create_user_change_role_reset_key(instance):
    """Do create-user, change-role and reset-api-key work and print what they did?"""
    created = run("create-user", "--instance", str(instance), "--email", "ann@acme.example", "--full-name", "Ann",
                  "--password", "pw-12345")
    assert created.returncode == 0 and "ann@acme.example" in created.stdout
    old_key = created.stdout.split("API key: ")[1].strip()
    assert run("change-role", "--instance", str(instance), "--email", "ann@acme.example",
               "--role", "200").returncode == 0
    assert " 200 " in next(l for l in run("list-users", "--instance", str(instance)).stdout.splitlines()
                           if "ann@" in l)
    reset = run("reset-api-key", "--instance", str(instance), "--email", "ann@acme.example")
    new_key = reset.stdout.strip()
    assert reset.returncode == 0 and len(new_key) == 32 and new_key != old_key


def test_admin_commands_refuse_bad_input(instance):
    """Do the admin commands exit non-zero with a clear message on bad input?"""
    result = run("change-role", "--instance", str(instance), "--email", "nobody@acme.example", "--role", "200")
    assert result.returncode == 1 and "No user with email" in result.stderr
    result = run("change-role", "--instance", str(instance), "--email", "boss@acme.example", "--role", "999")
    assert result.returncode == 1 and "--role" in result.stderr
    result = run("change-role", "--instance", str(instance), "--email", "boss@acme.example", "--role", "400")
    assert result.returncode == 1 and "only owner" in result.stderr
    result = run("create-user", "--instance", str(instance), "--email", "bad", "--full-name", "B", "--password", "p")
    assert result.returncode == 1 and "Invalid email" in result.stderr
    result = run("list-users", "--instance", str(instance.parent / "missing"))
    assert result.returncode == 1 and "chat-appliance init" in result.stderr


@pytest.mark.parametrize("command", ["init", "serve", "create-user", "change-role", "reset-api-key", "list-users"])
def test_every_command_has_help(command):
    """Does every command document itself with --help?"""
    result = run(command, "--help")
    assert result.returncode == 0 and "--instance" in result.stdout


def test_a_command_is_parsed_by_its_own_parser_alone_as_by_the_whole_one():
    """main() builds only the parser of the command asked for (start-up time): the same
    arguments come out as from the parser of every command, and a name that is no command still
    gets the whole parser's error, listing them all."""
    from chat_appliance.cli.main import build_parser

    whole = build_parser()
    for words in (["serve", "--instance", "x", "--port", "1234", "--quiet"], ["list-users", "--instance", "y"],
                  ["init", "--instance", "z", *INIT_ARGS]):
        assert vars(build_parser(only=words[0]).parse_args(words)) == vars(whole.parse_args(words))
    alone = build_parser(only="serve")
    assert list(alone._subparsers._group_actions[0].choices) == ["serve"]
    assert build_parser(only="no-such-command")._subparsers._group_actions[0].choices.keys() == \
        whole._subparsers._group_actions[0].choices.keys()
    result = run("no-such-command")
    assert result.returncode == 2
    assert "invalid choice: 'no-such-command'" in result.stderr and "'serve'" in result.stderr
    assert "'list-users'" in result.stderr
