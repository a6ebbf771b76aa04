"""The two commands of a move: `chat-appliance export` and `chat-appliance import-zulip`, as a
self-hoster runs them."""

import json

from ..support import pg
from ..support.helpers import run, zulip_export


def test_export_then_import_with_the_cli(instance, tmp_path, monkeypatch):
    """Does `export` write Zulip's layout (folder and .tar.gz) and `import-zulip` make a new instance
    from the tarball, whose owner then gets an API key from reset-api-key?"""
    exported = run("export", "--instance", str(instance), "--output", str(tmp_path / "out"))
    assert exported.returncode == 0, exported.stderr
    assert {"realm.json", "messages-000001.json", "attachment.json", "migration_status.json"} <= {
        p.name for p in (tmp_path / "out").iterdir()}
    realm = json.loads((tmp_path / "out" / "realm.json").read_text())
    assert realm["zerver_userprofile"][0]["delivery_email"] == "boss@acme.example"
    assert "messages" in exported.stderr  # the progress bars
    pg.use_fresh_database(monkeypatch)  # the new instance's database, on PostgreSQL
    imported = run("import-zulip", str(tmp_path / "out.tar.gz"), "--instance", str(tmp_path / "new"))
    assert imported.returncode == 0, imported.stderr
    assert "Imported 1 users" in imported.stdout
    listing = run("list-users", "--instance", str(tmp_path / "new"))
    assert "boss@acme.example" in listing.stdout and "welcome-bot" in listing.stdout
    key = run("reset-api-key", "--instance", str(tmp_path / "new"), "--email", "boss@acme.example")
    assert key.returncode == 0 and len(key.stdout.strip()) == 32


def test_import_refusal_is_a_clear_error(tmp_path):
    """Does import-zulip of an export with an unknown version exit 1 with the reason and no traceback?"""
    folder = zulip_export(tmp_path / "export", version="99.0")
    result = run("import-zulip", str(folder), "--instance", str(tmp_path / "new"))
    assert result.returncode == 1
    assert "Unknown export format" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "new").exists()


def test_a_backup_given_to_import_zulip_is_named_in_the_refusal(instance, tmp_path):
    """Does import-zulip of a backup (not an export) name the file given, not the temporary folder
    it was unpacked into, and point at restore?"""
    backup = tmp_path / "team.tar.gz"
    made = run("backup", "--instance", str(instance), str(backup))
    assert made.returncode == 0, made.stderr
    result = run("import-zulip", str(backup), "--instance", str(tmp_path / "new"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"{backup} is not an export" in result.stderr and "chat-appliance restore" in result.stderr
