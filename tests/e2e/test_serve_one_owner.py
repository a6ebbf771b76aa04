"""End to end: one `serve` owns a database; a second one is refused and says who holds it."""

import os
import subprocess
import sys

import pytest

from ..support import pg
from ..support.serve_process import ServeProcess, free_port

needs_pg = pytest.mark.skipif(not pg.ENABLED, reason="needs PostgreSQL (set CHAT_APPLIANCE_DATABASE_URL)")


def second_serve(instance, *extra, env=None):
    """Run `serve` on `instance` beside a running one; it should end at once."""
    return subprocess.run([sys.executable, "-m", "chat_appliance", "serve", "--instance", str(instance),
                           "--port", str(free_port()), "--quiet", *extra],
                          capture_output=True, text=True, timeout=30, env=dict(os.environ, **(env or {})))


def test_a_second_serve_on_the_same_folder_is_refused_naming_the_first(tmp_path):
    """Does a second `serve` on the folder a server runs on exit non-zero, naming the first
    one's pid, without writing event queues into the live instance?"""
    first = ServeProcess(tmp_path / "instance")
    try:
        done = second_serve(tmp_path / "instance", env=same_database(tmp_path / "instance"))
        assert done.returncode == 1, done.stdout + done.stderr
        assert f"pid {first.process.pid}" in done.stderr
        assert "Serving on" not in done.stdout
        assert not (tmp_path / "instance" / "event_queues.json").exists()
    finally:
        assert first.stop() == 0


def same_database(instance):
    """The environment that points a `serve` at the database ServeProcess gave `instance`."""
    return {"CHAT_APPLIANCE_DATABASE_URL": pg.database_for_instance(instance)} if pg.ENABLED else None


@pytest.mark.skipif(pg.ENABLED, reason="a SQLite file named by two folders")
def test_a_second_folder_naming_the_same_sqlite_file_is_refused(tmp_path):
    """Is a `serve` on another folder whose DATABASE_URL names the live SQLite file refused too?"""
    first = ServeProcess(tmp_path / "instance")
    try:
        (tmp_path / "other").mkdir()
        url = f"sqlite:///{tmp_path / 'instance' / 'chat.sqlite3'}"
        done = second_serve(tmp_path / "other", env={"CHAT_APPLIANCE_DATABASE_URL": url})
        assert done.returncode == 1 and f"pid {first.process.pid}" in done.stderr
    finally:
        first.stop()
    # Once the first has stopped, the database is free again.
    again = ServeProcess(tmp_path / "instance")
    assert again.stop() == 0


@needs_pg
def test_on_postgresql_a_plain_second_serve_is_refused_but_shards_share(tmp_path):
    """On PostgreSQL, is a second plain `serve` (or a shard) refused while a plain one serves,
    naming it, and may shards run side by side while a plain `serve` is refused beside them?"""
    first = ServeProcess(tmp_path / "instance")
    url = same_database(tmp_path / "instance")
    try:
        plain = second_serve(tmp_path / "instance", env=url)
        assert plain.returncode == 1 and f"pid {first.process.pid}" in plain.stderr
        assert "--shard-id" in plain.stderr
        shard = second_serve(tmp_path / "instance", "--shard-id", "a", env=url)
        assert shard.returncode == 1 and f"pid {first.process.pid}" in shard.stderr
    finally:
        first.stop()
    a = ServeProcess(tmp_path / "instance", "--shard-id", "a")
    b = ServeProcess(tmp_path / "instance", "--shard-id", "b")
    try:
        plain = second_serve(tmp_path / "instance", env=url)
        assert plain.returncode == 1 and f"pid {a.process.pid}" in plain.stderr
    finally:
        a.stop()
        b.stop()
