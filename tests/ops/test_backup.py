"""Backup and restore of a running instance, set-password, and GET /health."""

import io
import json
import os
import subprocess
import sys
import tarfile
import threading
import time

import pytest
import requests

from ..support import pg
from ..support.clients import wait_for
from ..support.helpers import ok
from ..support.serve_process import ServeProcess


def run(*args, input=None):
    """`python -m chat_appliance ARGS` on the instance's own configuration (its SQLite file unless
    its config.json names another database, whatever engine the suite runs on); the completed process."""
    env = {k: v for k, v in os.environ.items() if k != "CHAT_APPLIANCE_DATABASE_URL"}
    return subprocess.run([sys.executable, "-m", "chat_appliance", *args], capture_output=True, text=True,
                          timeout=120, input=input, env=env)


class Sender(threading.Thread):
    """Sends direct messages (and every tenth time a file) as fast as the server acknowledges,
    recording each acknowledgement with the time it arrived."""

    def __init__(self, server):
        super().__init__(daemon=True)
        self.session = requests.Session()
        self.session.auth = (server.email, server.api_key)
        self.url = server.url + "/api/v1"
        self.user_id = self.session.get(self.url + "/users/me").json()["user_id"]
        self.messages = []  # (acknowledged at, id, content)
        self.uploads = []  # (acknowledged at, url, bytes)
        self.stopping = threading.Event()

    def run(self):
        count = 0
        while not self.stopping.is_set():
            count += 1
            if count % 10 == 0:
                data = f"file {count} ".encode() * 50
                answer = self.session.post(self.url + "/user_uploads", files={"file": (f"f{count}.txt", data)})
                self.uploads.append((time.monotonic(), answer.json()["url"], data))
            content = f"message number {count}"
            answer = self.session.post(self.url + "/messages",
                                       data={"type": "direct", "to": json.dumps([self.user_id]), "content": content})
            self.messages.append((time.monotonic(), answer.json()["id"], content))


@pytest.mark.skipif(pg.ENABLED, reason="SQLite's online backup; on PostgreSQL the database is pg_dump's "
                    "(test_backup_on_postgresql_says_pg_dump_and_copies_uploads)")
def test_backup_under_send_load_restores_every_acknowledged_message(tmp_path):
    """Does a backup taken while a client sends messages and files restore into a new instance
    that holds every message and upload acknowledged before the backup began, byte for byte?"""
    server = ServeProcess(tmp_path / "instance")
    archive = tmp_path / "backups" / "chat.tar.gz"
    try:
        sender = Sender(server)
        sender.start()
        # Enough acknowledged before the backup (at least 20 messages and two files), however
        # busy the machine: a fixed second gave ten messages on a loaded one.
        wait_for(lambda: (len(sender.messages) >= 20 and len(sender.uploads) >= 2) or not sender.is_alive(),
                 timeout=60)
        started = time.monotonic()
        result = run("backup", "--instance", str(tmp_path / "instance"), str(archive))
        time.sleep(0.3)
        sender.stopping.set()
        sender.join(30)
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr
    assert "database: copying" in result.stderr and "uploads:" in result.stderr
    before = [m for m in sender.messages if m[0] < started]
    uploads_before = [u for u in sender.uploads if u[0] < started]
    assert len(before) > 10 and uploads_before
    assert len(sender.messages) > len(before)  # the load went on during the backup

    restored = run("restore", "--instance", str(tmp_path / "restored"), str(archive))
    assert restored.returncode == 0, restored.stderr
    assert "match the manifest" in restored.stderr

    copy = ServeProcess(tmp_path / "restored")
    try:
        session = requests.Session()
        session.auth = (sender.session.auth)
        ids = [m[1] for m in before]
        fetched = session.get(copy.url + "/api/v1/messages", params={
            "message_ids": json.dumps(ids), "apply_markdown": "false"}).json()
        assert fetched["result"] == "success", fetched
        assert {m["id"]: m["content"] for m in fetched["messages"]} == {m[1]: m[2] for m in before}
        for _at, url, data in uploads_before:
            download = session.get(copy.url + url)
            assert download.status_code == 200 and download.content == data
        health = requests.get(copy.url + "/health")
        assert health.status_code == 200 and health.json()["status"] == "ok"
    finally:
        copy.stop()


@pytest.fixture
def instance(tmp_path):
    path = tmp_path / "inst"
    result = run("init", "--instance", str(path), "--org-name", "Acme", "--owner-email", "boss@acme.example",
                 "--owner-name", "Boss", "--owner-password", "first-pass")
    assert result.returncode == 0, result.stderr
    (path / "uploads" / "1" / "abc").mkdir(parents=True)
    (path / "uploads" / "1" / "abc" / "a.txt").write_bytes(b"hello")
    return path


def test_restore_refuses_a_non_empty_instance_and_a_tampered_archive(instance, tmp_path):
    """Does restore refuse to write into a folder that holds anything, and refuse (leaving
    nothing behind) an archive whose contents do not match its manifest?"""
    archive = tmp_path / "b.tar.gz"
    assert run("backup", "--instance", str(instance), str(archive)).returncode == 0
    refused = run("restore", "--instance", str(instance), str(archive))
    assert refused.returncode == 1 and "not empty" in refused.stderr

    with tarfile.open(archive) as source:
        members = [(m, source.extractfile(m).read()) for m in source.getmembers()]
    tampered = tmp_path / "tampered.tar.gz"
    with tarfile.open(tampered, "w:gz") as target:
        for member, data in members:
            if member.name == "manifest.json":
                manifest = json.loads(data)
                manifest["database"]["tables"]["user_profile"] += 1
                data = json.dumps(manifest).encode()
                member.size = len(data)
            target.addfile(member, io.BytesIO(data))
    failed = run("restore", "--instance", str(tmp_path / "new"), str(tampered))
    assert failed.returncode == 1 and "user_profile" in failed.stderr
    assert not (tmp_path / "new").exists()

    good = run("restore", "--instance", str(tmp_path / "good"), str(archive))
    assert good.returncode == 0, good.stderr
    assert (tmp_path / "good" / "uploads" / "1" / "abc" / "a.txt").read_bytes() == b"hello"
    listing = run("list-users", "--instance", str(tmp_path / "good"))
    assert "boss@acme.example" in listing.stdout


def test_backup_on_postgresql_says_pg_dump_and_copies_uploads(instance, tmp_path):
    """On PostgreSQL, does backup point to pg_dump and still archive the uploads and config?"""
    (instance / "config.json").write_text(json.dumps({"DATABASE_URL": "postgresql://postgres@127.0.0.1/none"}))
    archive = tmp_path / "pg.tar.gz"
    result = run("backup", "--instance", str(instance), str(archive))
    assert result.returncode == 0, result.stderr
    assert "pg_dump" in result.stderr
    with tarfile.open(archive) as source:
        names = source.getnames()
        manifest = json.load(source.extractfile("manifest.json"))
    assert "uploads/1/abc/a.txt" in names and "config.json" in names and "chat.sqlite3" not in names
    assert manifest["database"] == {"engine": "postgresql"}


def test_set_password(instance):
    """Does set-password change an account's password, so the new one signs in and the old one
    no longer does, and refuse unknown accounts?"""
    changed = run("set-password", "--instance", str(instance), "boss@acme.example", "--password-stdin",
                  input="second-pass\n")
    assert changed.returncode == 0, changed.stderr
    missing = run("set-password", "--instance", str(instance), "nobody@acme.example", "--password-stdin",
                  input="whatever-pass\n")
    assert missing.returncode == 1 and "No user" in missing.stderr

    from chat_appliance.app import create_app

    app = create_app({"INSTANCE_PATH": str(instance), "LOG_REQUESTS": False, "RATE_LIMITING": False})
    client = app.test_client()
    good = client.post("/api/v1/fetch_api_key", data={"username": "boss@acme.example", "password": "second-pass"})
    assert good.status_code == 200
    old = client.post("/api/v1/fetch_api_key", data={"username": "boss@acme.example", "password": "first-pass"})
    assert old.status_code == 401


def test_health(flask_client, anon):
    """Does GET /health answer 200 with the database's state, without credentials?"""
    response = flask_client.get("/health")
    assert response.status_code == 200
    assert response.get_json() == {"result": "success", "msg": "", "status": "ok", "database": "ok", "disk": "ok"}
    ok(anon.get("server_settings"))


def test_restore_lists_the_settings_it_brings_and_asks_before_widening_trust(instance, tmp_path):
    """Does restore list the settings the backup's config.json sets, refuse (leaving nothing) those
    that widen trust (trusted proxies, a mail server) unless given --yes, and keep them with it?"""
    config_file = instance / "config.json"
    config = json.loads(config_file.read_text()) if config_file.exists() else {}
    config.update(TRUSTED_PROXIES=["0.0.0.0/0"], EMAIL_HOST="mail.elsewhere.example", RATE_LIMITING=False)
    config_file.write_text(json.dumps(config))
    archive = tmp_path / "b.tar.gz"
    assert run("backup", "--instance", str(instance), str(archive)).returncode == 0
    refused = run("restore", "--instance", str(tmp_path / "new"), str(archive))
    assert refused.returncode == 1
    assert 'config.json sets TRUSTED_PROXIES = ["0.0.0.0/0"] (widens trust)' in refused.stderr
    assert "config.json sets RATE_LIMITING = false" in refused.stderr
    assert "TRUSTED_PROXIES, EMAIL_HOST" in refused.stderr or "EMAIL_HOST, TRUSTED_PROXIES" in refused.stderr
    assert "--yes" in refused.stderr and not (tmp_path / "new").exists()
    kept = run("restore", "--instance", str(tmp_path / "new"), str(archive), "--yes")
    assert kept.returncode == 0, kept.stderr
    assert json.loads((tmp_path / "new" / "config.json").read_text())["TRUSTED_PROXIES"] == ["0.0.0.0/0"]
