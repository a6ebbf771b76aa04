"""A full disk: sends and uploads answer a clear
507 DISK_FULL (not `500 Internal server error`), /health reports it, a failed upload leaves no
file behind, and serve stopping on a full disk says in its log why the queues were not saved.
The disk is filled by injecting the errors a full disk raises."""

import errno
import os
import sqlite3

import peewee
import pytest

from chat_appliance.actions import uploads as upload_actions
from chat_appliance.lib import disk

from ..support.helpers import err, ok, upload
from ..support.serve_process import ServeProcess


@pytest.fixture(autouse=True)
def forget_disk_full():
    disk.reset()
    yield
    disk.reset()


def fill_database(monkeypatch):
    """Every INSERT into message fails as SQLite's "database or disk is full" does."""
    execute_sql = peewee.Database.execute_sql

    def full(self, sql, params=None, *args, **kwargs):
        if sql.lstrip().upper().startswith('INSERT INTO "MESSAGE"'):
            try:
                raise sqlite3.OperationalError("database or disk is full")
            except sqlite3.OperationalError as error:
                raise peewee.OperationalError("database or disk is full") from error
        return execute_sql(self, sql, params, *args, **kwargs)

    monkeypatch.setattr(peewee.Database, "execute_sql", full)


def test_a_send_on_a_full_disk_says_the_disk_is_full_and_health_reports_it(org, anon, monkeypatch):
    """Does a send that fails for a full disk answer 507 DISK_FULL with a message saying so, and
    does /health then answer 503 with the disk as full (the database still answering)?"""
    health = org.flask_client.get("/health")
    assert health.status_code == 200 and health.get_json()["disk"] == "ok"
    fill_database(monkeypatch)
    response = org.client(org.hamlet).post("messages", type="stream", to="Denmark", topic="t", content="hi")
    err(response, 507, "DISK_FULL", "The server's disk is full: nothing was saved. An administrator must free "
                                    "space on the server; try again later.")
    health = org.flask_client.get("/health")
    assert health.status_code == 503
    assert health.get_json()["disk"] == "full" and health.get_json()["database"] == "ok"


def test_a_failed_upload_leaves_no_file_behind(org, app, monkeypatch):
    """Does an upload that fails halfway for a full disk answer 507 and leave no partial file
    (nor its folder) in the instance?"""
    def half_then_full(source, target, *args):
        target.write(source.read(3))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(upload_actions.shutil, "copyfileobj", half_then_full)
    err(upload(org, org.hamlet, b"0123456789", name="big.bin"), 507, "DISK_FULL")
    uploads = os.path.join(app.config["INSTANCE_PATH"], "uploads")
    assert [files for _root, _dirs, files in os.walk(uploads) if files] == []
    monkeypatch.undo()
    disk.reset()
    ok(upload(org, org.hamlet, b"0123456789", name="big.bin"))  # control: space again, the upload works


def test_other_failures_stay_internal_errors(org, monkeypatch):
    """Control: is an unrelated database failure still a plain 500, and /health still ok?"""
    execute_sql = peewee.Database.execute_sql

    def broken(self, sql, params=None, *args, **kwargs):
        if sql.lstrip().upper().startswith('INSERT INTO "MESSAGE"'):
            raise peewee.OperationalError("disk I/O error")
        return execute_sql(self, sql, params, *args, **kwargs)

    monkeypatch.setattr(peewee.Database, "execute_sql", broken)
    response = org.client(org.hamlet).post("messages", type="stream", to="Denmark", topic="t", content="hi")
    err(response, 500, "INTERNAL_SERVER_ERROR")
    assert org.flask_client.get("/health").status_code == 200


def test_serve_says_why_it_could_not_save_the_queues(tmp_path):
    """When the event queues cannot be written at SIGTERM (here: the file's place is taken), does
    serve say why in its log and still exit cleanly, without a traceback?"""
    server = ServeProcess(tmp_path / "instance")
    (tmp_path / "instance" / "event_queues.json.tmp").mkdir()
    assert server.stop() == 0
    output = "".join(server.output)
    assert "Could not save the event queues" in output and "Traceback" not in output
