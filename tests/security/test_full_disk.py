"""A full disk: sends and uploads answer a clear
507 DISK_FULL (not `500 Internal server error`), /health reports it, a failed upload leaves no
file behind, and serve stopping on a full disk says in its log why the queues were not saved.
The main proof fills a real (tmpfs) file system under a running `serve`; the other tests inject
the errors a full disk raises, for the cases a real one cannot reach reliably."""

import errno
import os
import re
import sqlite3
import subprocess
import sys
import time

import peewee
import pytest
import requests

from chat_appliance.actions import uploads as upload_actions
from chat_appliance.lib import disk

from ..support.helpers import err, ok, upload
from ..support import pg
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


def test_a_send_failing_for_a_full_disk_in_its_view_answers_507(org, monkeypatch):
    """Does a send whose INSERT fails for a full disk (inside the view, before any COMMIT) answer
    507 DISK_FULL with a message saying so?"""
    fill_database(monkeypatch)
    response = org.client(org.hamlet).post("messages", type="stream", to="Denmark", topic="t", content="hi")
    err(response, 507, "DISK_FULL", "The server's disk is full: nothing was saved. An administrator must free "
                                    "space on the server; try again later.")


def test_health_probes_the_disk_instead_of_remembering_an_error(org, tmp_path):
    """After a disk-full error, does /health answer from a write it tries now (ok when the
    write works) rather than from the memory of the error?"""
    disk.note_disk_full()
    health = org.flask_client.get("/health")
    assert health.status_code == 200 and health.get_json()["disk"] == "ok"


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


@pytest.fixture
def small_filesystem(tmp_path):
    """A real 40 MiB tmpfs mounted for the test (root only): the instance lives on it, and a
    filler file takes its free space away."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root on Linux")
    if pg.ENABLED:
        pytest.skip("the database must live on the small file system: SQLite only")
    where = tmp_path / "small"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=40m", "tmpfs", str(where)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"could not mount a tmpfs: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(path):
    """Write zeros to `path` until the file system has no space left."""
    block = b"\0" * (256 * 1024)
    with open(path, "wb", buffering=0) as filler:
        try:
            while True:
                filler.write(block)
        except OSError as error:
            assert error.errno == errno.ENOSPC
        try:
            while True:  # the last few pages, a 4 KiB block at a time
                filler.write(block[:4096])
        except OSError:
            pass


def test_a_real_full_disk_answers_507_and_sends_work_again_once_space_is_freed(small_filesystem):
    """On a real file system that fills up under a running `serve`, do sends answer 507
    DISK_FULL (never 500) with the request log recording the 507 the client got, does /health
    say the disk is full, and once space is freed do sends work again and /health say ok within
    a few seconds?"""
    server = ServeProcess(small_filesystem / "instance", quiet=False)
    try:
        auth = (server.email, server.api_key)

        def send(n):
            return requests.post(server.url + "/api/v1/messages", auth=auth, timeout=30,
                                 data={"type": "stream", "to": "general", "topic": "disk",
                                       "content": f"{n} " + "x" * 9000})

        assert send(0).status_code == 200
        assert requests.get(server.url + "/health", timeout=5).json()["disk"] == "ok"
        fill(small_filesystem / "filler")
        statuses = []
        for n in range(1, 200):
            response = send(n)
            statuses.append(response.status_code)
            if response.status_code != 200:
                break
        assert statuses[-1] == 507, statuses
        assert response.json()["code"] == "DISK_FULL"
        assert response.json()["msg"] == disk.DISK_FULL_MESSAGE
        health = requests.get(server.url + "/health", timeout=5)
        assert health.status_code == 503 and health.json()["disk"] == "full"

        os.unlink(small_filesystem / "filler")
        deadline = time.monotonic() + 5
        while requests.get(server.url + "/health", timeout=5).status_code != 200:
            assert time.monotonic() < deadline, "/health still unhealthy 5 s after space was freed"
            time.sleep(0.2)
        assert requests.get(server.url + "/health", timeout=5).json()["disk"] == "ok"
        assert send(1000).status_code == 200
    finally:
        server.stop()
    log = "".join(server.output)
    sends = re.findall(r"POST /api/v1/messages (\d{3})", log)
    assert sends == ["200", *map(str, statuses), "200"], sends
    assert "Traceback" not in log, log
