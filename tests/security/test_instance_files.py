"""The instance's files: the instance folder and every file the commands write are the owner's
only; backups say when they are damaged and cover every file; the commands that must not run
beside a server refuse while one runs."""

import io
import json
import os
import stat
import subprocess
import sys
import tarfile

import pytest

from ..support import pg
from ..support.serve_process import ServeProcess


def run(*args):
    """`python -m chat_appliance ARGS` on the suite's database (the `instance` fixture's)."""
    return subprocess.run([sys.executable, "-m", "chat_appliance", *args], check=False, capture_output=True, text=True,
                          timeout=120)


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def loose_files(folder):
    """Entries under `folder` that someone other than the owner may read, write or enter."""
    found = []
    for root, dirs, files in os.walk(folder):
        for name in [root] + [os.path.join(root, f) for f in files]:
            if mode(name) & 0o077:
                found.append((name, oct(mode(name))))
    return found


# --- Permissions ---------------------------------------------------------------------------


def test_init_creates_a_private_instance(instance):
    """Is a new instance's folder 0700, and its database, WAL, secret key and everything else 0600,
    whatever the caller's umask (the suite's is 022)?"""
    assert mode(instance) == 0o700
    assert pg.ENABLED or (instance / "chat.sqlite3").exists()  # on PostgreSQL the folder starts empty
    assert loose_files(instance) == []


def test_backup_and_export_write_private_files(instance, tmp_path):
    """Do backup and export write archives (and the export's folder) only their owner may read?"""
    assert run("backup", "--instance", str(instance), str(tmp_path / "b.tar.gz")).returncode == 0
    assert mode(tmp_path / "b.tar.gz") == 0o600
    exported = run("export", "--instance", str(instance), "--output", str(tmp_path / "out"))
    assert exported.returncode == 0, exported.stderr
    assert mode(tmp_path / "out.tar.gz") == 0o600
    assert loose_files(tmp_path / "out") == []


def test_an_existing_loose_instance_is_tightened_with_a_log_line(instance):
    """Is an instance created with loose permissions tightened by the next command, saying so?"""
    os.chmod(instance, 0o755)
    (instance / "notes.txt").write_text("x")  # the database file, on SQLite
    os.chmod(instance / "notes.txt", 0o644)
    (instance / "uploads").mkdir(mode=0o755, exist_ok=True)
    (instance / "uploads" / "a.txt").write_text("x")
    os.chmod(instance / "uploads" / "a.txt", 0o664)
    listed = run("list-users", "--instance", str(instance))
    assert listed.returncode == 0, listed.stderr
    assert "Restricted the permissions of 4 files and folders" in listed.stderr
    assert loose_files(instance) == []
    assert "Restricted" not in run("list-users", "--instance", str(instance)).stderr


# --- backups: damaged, truncated, changed -------------------------------------------------------


@pytest.fixture
def archive(instance, tmp_path):
    (instance / "uploads" / "1").mkdir(parents=True)
    (instance / "uploads" / "1" / "a.txt").write_text("upload bytes")
    (instance / "config.json").write_text(json.dumps({"MAX_TOPIC_LENGTH": 60}))
    path = tmp_path / "backup.tar.gz"
    result = run("backup", "--instance", str(instance), str(path))
    assert result.returncode == 0, result.stderr
    return path


def test_a_truncated_backup_says_so_without_a_traceback(archive, tmp_path):
    """Is a backup cut short refused with a message about the file, not an EOFError traceback,
    leaving nothing behind?"""
    data = archive.read_bytes()
    for keep in (len(data) // 2, len(data) - 100):
        archive.write_bytes(data[:keep])
        result = run("restore", "--instance", str(tmp_path / "new"), str(archive))
        assert result.returncode == 1
        assert "Traceback" not in result.stderr
        assert "truncated or damaged" in result.stderr or "cut short" in result.stderr, result.stderr
        assert not (tmp_path / "new").exists()


def rewritten(archive, change):
    """The archive with its entries passed through change(name, bytes) -> bytes (None drops one)."""
    out = io.BytesIO()
    with tarfile.open(archive) as source, tarfile.open(fileobj=out, mode="w:gz") as target:
        for member in source.getmembers():
            data = change(member.name, source.extractfile(member).read() if member.isfile() else None)
            if data is not None:
                member.size = len(data)
                target.addfile(member, io.BytesIO(data))
    archive.write_bytes(out.getvalue())


def test_a_changed_config_json_in_a_backup_is_refused(archive, tmp_path):
    """Does the manifest cover config.json, so that a changed one is refused?"""
    rewritten(archive, lambda name, data: data.replace(b"60", b"99") if name == "config.json" else data)
    result = run("restore", "--instance", str(tmp_path / "new"), str(archive))
    assert result.returncode == 1 and "config.json does not match the manifest" in result.stderr
    assert not (tmp_path / "new").exists()


def test_a_file_the_manifest_does_not_list_is_refused(archive, tmp_path):
    """Is an entry added beside the manifest's files refused?"""
    out = io.BytesIO()
    with tarfile.open(archive) as source, tarfile.open(fileobj=out, mode="w:gz") as target:
        for member in source.getmembers():
            target.addfile(member, source.extractfile(member) if member.isfile() else None)
        extra = tarfile.TarInfo("secret_key")
        extra.size = 4
        target.addfile(extra, io.BytesIO(b"abcd"))
    archive.write_bytes(out.getvalue())
    result = run("restore", "--instance", str(tmp_path / "new"), str(archive))
    assert result.returncode == 1 and "files its manifest does not list: secret_key" in result.stderr


def test_an_intact_backup_restores_private_files(archive, tmp_path):
    """Control: does the untouched backup restore, config.json verified, into a private folder?"""
    result = run("restore", "--instance", str(tmp_path / "new"), str(archive))
    assert result.returncode == 0, result.stderr
    assert "config.json: matches the manifest" in result.stderr
    assert mode(tmp_path / "new") == 0o700 and loose_files(tmp_path / "new") == []


# --- commands beside a running server ------------------------------------------------------------


@pytest.mark.skipif(pg.ENABLED, reason="serve on the instance's own SQLite file (migrate-database's source)")
def test_offline_commands_refuse_while_serve_runs(tmp_path, archive):
    """Do migrate-database, restore and import-zulip refuse, saying "stop serve first", while a
    server uses the folder, changing nothing; and work again once it has stopped?"""
    from ..support.helpers import zulip_export

    folder = tmp_path / "served"
    server = ServeProcess(folder)
    try:
        config_before = (folder / "config.json").read_text() if (folder / "config.json").exists() else None
        moved = run("migrate-database", "--instance", str(folder), "--to", "postgresql://postgres@127.0.0.1:1/none")
        assert moved.returncode == 1 and "stop serve first" in moved.stderr, moved.stderr
        now = (folder / "config.json").read_text() if (folder / "config.json").exists() else None
        assert now == config_before
        restored = run("restore", "--instance", str(folder), str(archive))
        assert restored.returncode == 1 and "stop serve first" in restored.stderr, restored.stderr
        imported = run("import-zulip", str(zulip_export(tmp_path / "export")), "--instance", str(folder))
        assert imported.returncode == 1 and "stop serve first" in imported.stderr, imported.stderr
    finally:
        assert server.stop() == 0
    moved = run("migrate-database", "--instance", str(folder), "--to", "postgresql://postgres@127.0.0.1:1/none")
    assert moved.returncode == 1 and "stop serve first" not in moved.stderr
