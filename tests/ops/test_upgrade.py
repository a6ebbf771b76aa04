"""`chat-appliance upgrade`: a backup, the new version's migrations proven on a copy of the
database, what changed, and the way back when anything fails."""

import os
import sqlite3
import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e


def chat_appliance(*args):
    """The command on SQLite whatever the suite's database (the copy check is SQLite's)."""
    env = {k: v for k, v in os.environ.items() if k != "CHAT_APPLIANCE_DATABASE_URL"}
    return subprocess.run([sys.executable, "-m", "chat_appliance", *args], capture_output=True, text=True,
                          timeout=120, env=env)


def older_instance(folder, below):
    """An instance whose database stops before migration `below`, as an older release left it."""
    folder.mkdir()
    code = ("from chat_appliance import migrations; from chat_appliance.db import connection as c; "
            f"c.MIGRATIONS = [m for m in migrations.MIGRATIONS if m[0] < {below}]; "
            f"c.init_database('sqlite:///{folder / 'chat.sqlite3'}'); c.migrate()")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    return folder


def applied(folder):
    with sqlite3.connect(folder / "chat.sqlite3") as connection:
        return {row[0] for row in connection.execute("SELECT version FROM schema_migration")}


def dump(folder):
    """The database's whole content, as SQL (its file's bytes change when SQLite checkpoints)."""
    with sqlite3.connect(folder / "chat.sqlite3") as connection:
        return list(connection.iterdump())


def newest_migration():
    from chat_appliance import migrations

    return max(migrations.versions())


def test_upgrade_backs_up_and_proves_the_migrations_on_a_copy(tmp_path):
    """Does `upgrade` write a backup, list the migrations the installed version will apply, apply
    them to a copy (not the instance), and say what changed and how to go back?"""
    newest = newest_migration()
    instance = older_instance(tmp_path / "instance", newest)
    archive = tmp_path / "before.tar.gz"
    result = chat_appliance("upgrade", "--instance", str(instance), "--no-install", "--backup", str(archive))
    assert result.returncode == 0, result.stderr
    assert f"{newest:04d}:" in result.stdout and "apply cleanly" in result.stdout
    assert "Upgraded chat-appliance" in result.stdout and f"chat-appliance restore {archive}" in result.stdout
    assert archive.exists()
    assert newest not in applied(instance)  # the instance waits for serve's start
    restored = chat_appliance("restore", str(archive), "--instance", str(tmp_path / "restored"))
    assert restored.returncode == 0, restored.stderr


def test_a_failed_upgrade_changes_nothing_and_says_how_to_go_back(tmp_path):
    """When pip fails, and when a migration fails on the copy, does `upgrade` exit non-zero with
    the way back to the backup, the instance's database unchanged?"""
    instance = older_instance(tmp_path / "instance", newest_migration())
    # A database that claims to lack its first migration: applying it again fails.
    with sqlite3.connect(instance / "chat.sqlite3") as connection:
        connection.execute("DELETE FROM schema_migration WHERE version = 1")
    before = dump(instance)

    pip = chat_appliance("upgrade", "--instance", str(instance), "--package", str(tmp_path / "no-such-package"))
    assert pip.returncode == 1
    assert "pip could not install" in pip.stderr and "chat-appliance restore" in pip.stderr

    failed = chat_appliance("upgrade", "--instance", str(instance), "--no-install",
                            "--backup", str(tmp_path / "b.tar.gz"))
    assert failed.returncode == 1
    assert "a migration fails on a copy" in failed.stderr
    assert f"chat-appliance restore {tmp_path / 'b.tar.gz'}" in failed.stderr
    assert dump(instance) == before
