"""`chat-appliance migrate-database`: a generated SQLite instance moved into PostgreSQL serves the
same messages, flags, reactions, uploads and search results; the source is unchanged; a
non-empty target is refused. Runs in the PostgreSQL run of the suite (it needs a server)."""

import hashlib
import importlib.util
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from chat_appliance.app import create_app
from chat_appliance.config import load_config
from chat_appliance.db.connection import backend, close_connection
from chat_appliance.models import PENDING_UNREAD_INDEX, database

from ..support import pg
from ..support.helpers import ApiClient

pytestmark = pytest.mark.skipif(not pg.ENABLED, reason="needs CHAT_APPLIANCE_DATABASE_URL=postgresql://...")

# The issue asks for 10,000; CHAT_APPLIANCE_TEST_MOVE_MESSAGES lowers it for a quick local run.
MESSAGES = int(os.environ.get("CHAT_APPLIANCE_TEST_MOVE_MESSAGES", "10000"))
ROOT = Path(__file__).resolve().parents[2]


def load_generator():
    spec = importlib.util.spec_from_file_location("generate_instance", ROOT / "scripts" / "generate_instance.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_cli(*args):
    env = {k: v for k, v in os.environ.items() if k != "CHAT_APPLIANCE_DATABASE_URL"}
    return subprocess.run([sys.executable, "-m", "chat_appliance", *args], capture_output=True, text=True,
                          env=env, timeout=600)


def files_digest(instance):
    """A digest of the SQLite database files (the source must not change)."""
    digest = hashlib.sha256()
    for suffix in ("", "-wal"):
        path = instance / f"chat.sqlite3{suffix}"
        digest.update(path.read_bytes() if path.exists() else b"")
    return digest.hexdigest()


def served(instance, users, monkeypatch, search_word="banana"):
    """What the instance serves, per user: every message (content, flags, reactions), a search."""
    monkeypatch.delenv("CHAT_APPLIANCE_DATABASE_URL", raising=False)
    config = load_config(instance)
    app = create_app(dict(config, PASSWORD_HASH_METHOD="pbkdf2:sha256:1000", LOG_REQUESTS=False, TESTING=True))
    flask_client = app.test_client()
    result = {}
    try:
        for email, (_user_id, api_key) in users.items():
            client = ApiClient(flask_client, email, api_key)
            messages, anchor = [], 0
            while True:
                body = client.get("messages", anchor=anchor, num_before=0, num_after=2000,
                                  include_anchor="false").get_json()
                assert body["result"] == "success", body
                messages += [{key: m[key] for key in ("id", "content", "flags", "reactions", "subject",
                                                      "sender_id", "timestamp")} for m in body["messages"]]
                if body["found_newest"]:
                    break
                anchor = body["messages"][-1]["id"]
            narrow = json.dumps([{"operator": "search", "operand": search_word}])
            found = client.get("messages", anchor="newest", num_before=5000, num_after=0, narrow=narrow).get_json()
            narrow = json.dumps([{"operator": "is", "operand": "unread"}])
            unread = client.get("messages", anchor="newest", num_before=5000, num_after=0, narrow=narrow).get_json()
            result[email] = {"messages": messages, "search": [m["id"] for m in found["messages"]],
                             "unread": [m["id"] for m in unread["messages"]]}
        return result, flask_client
    finally:
        close_connection()


@pytest.fixture
def generated(tmp_path):
    instance = tmp_path / "instance"
    summary = load_generator().generate(instance, MESSAGES)
    if hasattr(database.obj, "close_all"):
        database.close_all()
    return instance, summary


def test_migrate_database_moves_everything(generated, monkeypatch):
    """After migrate-database, does the instance (now on PostgreSQL) serve every message with its
    flags and reactions, the same search results and the uploads, give new messages fresh ids,
    and is the SQLite source unchanged?"""
    instance, summary = generated
    # The newest messages' unread rows as a send leaves them on SQLite, outside the unread index
    # (models/messages.py, PENDING_UNREAD_INDEX): PostgreSQL must get them in it.
    source = sqlite3.connect(instance / "chat.sqlite3")
    (newest,) = source.execute("SELECT max(id) FROM message").fetchone()
    source.execute("UPDATE user_message SET flags = flags | ? WHERE message_id > ? AND (flags & 1) = 0",
                   (PENDING_UNREAD_INDEX, newest - 20))
    source.execute("INSERT OR IGNORE INTO pending_unread_message (message_id) SELECT DISTINCT message_id"
                   " FROM user_message WHERE (flags & ?) != 0", (PENDING_UNREAD_INDEX,))
    source.commit()
    assert source.execute("SELECT count(*) FROM user_message WHERE (flags & ?) != 0",
                          (PENDING_UNREAD_INDEX,)).fetchone()[0] > 0
    source.close()
    before, _client = served(instance, summary["users"], monkeypatch)
    assert any(before[email]["unread"] for email in before)
    assert sum(len(v["messages"]) for v in before.values()) >= MESSAGES
    digest = files_digest(instance)
    target = pg.new_name("moved")
    url = pg.create(target)
    result = run_cli("migrate-database", "--instance", str(instance), "--to", url)
    assert result.returncode == 0, result.stderr
    assert "row counts verified" in result.stderr
    assert files_digest(instance) == digest
    assert json.loads((instance / "config.json").read_text())["DATABASE_URL"] == url

    after, flask_client = served(instance, summary["users"], monkeypatch)
    assert backend().NAME == "postgres"  # really served by PostgreSQL
    for email in before:
        assert after[email]["messages"] == before[email]["messages"], email
        assert after[email]["search"] == before[email]["search"] and before[email]["search"], email
        assert after[email]["unread"] == before[email]["unread"], email
    owner_email = "owner@example.com"
    owner = ApiClient(flask_client, owner_email, summary["users"][owner_email][1])
    for upload in summary["uploads"]:
        response = flask_client.get(upload["url"], headers=owner.headers)
        assert response.status_code == 200 and response.data.startswith(b"file ")
    newest = max(summary["messages"] + [u["message_id"] for u in summary["uploads"]])
    body = owner.post("messages", type="stream", to="random", topic="after the move", content="still here").get_json()
    assert body["result"] == "success" and body["id"] > newest
    close_connection()
    database.close_all()
    pg.drop(target)


def test_migrate_database_refuses_a_non_empty_target(tmp_path, monkeypatch):
    """Is a target that already holds tables refused with a clear message, leaving the target,
    the source and the instance's configuration as they were?"""
    instance = tmp_path / "instance"
    load_generator().generate(instance, 5)
    if hasattr(database.obj, "close_all"):
        database.close_all()
    digest = files_digest(instance)
    target = pg.new_name("busy")
    url = pg.create(target)
    import psycopg2

    conn = psycopg2.connect(url)
    conn.autocommit = True
    with conn.cursor() as cursor:
        cursor.execute("CREATE TABLE something_else (x INTEGER)")
        cursor.execute("INSERT INTO something_else VALUES (1)")
    conn.close()
    target_before = pg.snapshot(url)
    result = run_cli("migrate-database", "--instance", str(instance), "--to", url)
    assert result.returncode == 1
    assert "not empty" in result.stderr and "Nothing was changed" in result.stderr
    assert "Traceback" not in result.stderr
    assert pg.snapshot(url) == target_before
    assert files_digest(instance) == digest
    assert not (instance / "config.json").exists()
    pg.drop(target)


def test_migrate_database_refuses_a_database_a_server_is_serving(tmp_path):
    """Is migrate-database from a second folder whose DATABASE_URL names the live SQLite file
    refused while `serve` runs on it, naming the server's pid, with the target left empty?"""
    from ..support.serve_process import free_port

    instance = tmp_path / "instance"
    load_generator().generate(instance, 5)
    if hasattr(database.obj, "close_all"):
        database.close_all()
    env = {k: v for k, v in os.environ.items() if k != "CHAT_APPLIANCE_DATABASE_URL"}
    server = subprocess.Popen([sys.executable, "-m", "chat_appliance", "serve", "--instance", str(instance),
                               "--port", str(free_port()), "--quiet"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, env=env)
    try:
        for line in server.stdout:
            if line.startswith("Serving on"):
                break
        other = tmp_path / "other"
        other.mkdir()
        (other / "config.json").write_text(json.dumps({"DATABASE_URL": f"sqlite:///{instance / 'chat.sqlite3'}"}))
        target = pg.new_name("live")
        url = pg.create(target)
        result = run_cli("migrate-database", "--instance", str(other), "--to", url)
        assert result.returncode == 1, result.stderr
        assert f"pid {server.pid}" in result.stderr and "Traceback" not in result.stderr
        assert "postgres" not in (other / "config.json").read_text()
        conn = __import__("psycopg2").connect(url)
        with conn.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
            assert cursor.fetchone()[0] == 0
        conn.close()
        pg.drop(target)
    finally:
        server.terminate()
        server.wait(timeout=30)
