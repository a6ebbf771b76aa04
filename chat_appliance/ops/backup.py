"""Online backup and restore of an instance: `chat-appliance backup` and `chat-appliance restore`.

A backup is one gzipped tar archive holding `manifest.json`, the database (`chat.sqlite3`, on
SQLite), the uploads (`uploads/...`), `config.json`, the push notification service credentials
(when the server registered) and the TLS files (`tls/...`: the ACME account key and the
certificate with its key, so that a restored server serves at once without a new order). It is taken while `serve` keeps running:

- The database is copied with SQLite's online backup API in a single step, which in WAL mode is
  one read transaction: a consistent snapshot that never blocks the server's writers (a stepwise
  copy would restart whenever the server commits, that is, forever under load).
- Uploads are copied after the snapshot. A file is written before its database row commits, so
  every file the snapshot knows of is already on disk; files uploaded later come along too and
  are harmless.
- The manifest records the row count of every table, the schema version, and the size and SHA-256
  of every file in the archive (config.json included), so that `restore` can verify what it
  unpacked; an entry the manifest does not list is refused.
- The archive is created with mode 0600: it holds API keys and password hashes.

On PostgreSQL the database is not in the archive: the backup says to use `pg_dump`, and still
copies the uploads and the configuration.
"""

import gzip
import hashlib
import io
import json
import os
import shutil
import sqlite3
import sys
import tarfile
import tempfile
import time
import zlib
from pathlib import Path

from chat_appliance import __version__
from chat_appliance.config import DEFAULTS
from chat_appliance.db.backends import sqlite as sqlite_backend
from chat_appliance.lib.push_credentials import CREDENTIALS_FILE
from chat_appliance.ops.instance_files import (
    LOCK_NAME,
    TLS_FOLDER,
    InstanceBusy,
    exclusively,
    make_instance_folder,
)

FORMAT = 1
DATABASE_NAME = "chat.sqlite3"
MANIFEST_NAME = "manifest.json"


class BackupError(Exception):
    """A failure to report to the operator, without a traceback."""


def say(message):
    """Progress and results go to stderr, so that stdout stays clean for scripts."""
    print(message, file=sys.stderr, flush=True)


def _sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def table_counts(connection):
    """{table: row count} of every ordinary table (FTS shadow tables left out: they are derived)."""
    names = [row[0] for row in connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
    virtual = {row[0] for row in connection.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'")}
    shadow = {name for name in names for v in virtual if name.startswith(v + "_")}
    return {name: connection.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()[0]
            for name in names if name not in shadow}


def _schema_version(connection):
    try:
        row = connection.execute("SELECT MAX(version) FROM schema_migration").fetchone()
    except sqlite3.DatabaseError:
        return 0
    return row[0] or 0


def snapshot_sqlite(source_path, target_path):
    """A consistent copy of a live SQLite database (online backup API, one step)."""
    source = sqlite3.connect(str(source_path), timeout=30)
    target = sqlite3.connect(target_path)
    try:
        source.execute("PRAGMA busy_timeout = 30000")
        source.backup(target, pages=-1)
        target.execute("PRAGMA journal_mode = DELETE")  # a single self-contained file in the archive
        result = target.execute("PRAGMA integrity_check").fetchone()[0]
        if result != "ok":
            raise BackupError(f"the copied database fails its integrity check: {result}")
        return table_counts(target), _schema_version(target)
    finally:
        target.close()
        source.close()


def _upload_files(uploads_dir):
    if not uploads_dir.is_dir():
        return []
    return sorted(path for path in uploads_dir.rglob("*") if path.is_file())


def _add_bytes(archive, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(time.time())
    info.mode = 0o600
    archive.addfile(info, io.BytesIO(data))


def backup(instance, config, target_file):
    """Write the archive of `instance` to `target_file`; return the manifest."""
    instance = Path(instance)
    target_file = Path(target_file)
    database_url = config["DATABASE_URL"]
    engine = "postgresql" if database_url.startswith(("postgres://", "postgresql://")) else "sqlite"
    manifest = {"format": FORMAT, "created": int(time.time()), "chat_appliance_version": __version__,
                "database": {"engine": engine}, "uploads": {"files": {}, "count": 0, "bytes": 0},
                "config": (instance / "config.json").exists()}
    target_file.parent.mkdir(parents=True, exist_ok=True)
    partial = target_file.with_name(target_file.name + ".partial")
    # Created empty with the final mode first, so that the archive is never readable by others.
    os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
    os.chmod(partial, 0o600)
    with tempfile.TemporaryDirectory(prefix="chat-appliance-backup-") as tmp:
        database_copy = Path(tmp) / DATABASE_NAME
        if engine == "sqlite":
            source = Path(sqlite_backend.path_from_url(database_url))
            if not source.exists():
                raise BackupError(f"no database at {source}")
            size_mb = source.stat().st_size / 1e6
            say(f"database: copying a consistent snapshot of {source} ({size_mb:.1f} MB)...")
            started = time.monotonic()
            counts, version = snapshot_sqlite(source, database_copy)
            manifest["database"].update({"file": DATABASE_NAME, "schema_version": version, "tables": counts,
                                         "sha256": _sha256(database_copy)})
            say(f"database: {sum(counts.values())} rows in {len(counts)} tables, schema version {version}, "
                f"integrity ok ({time.monotonic() - started:.1f} s)")
        else:
            say("database: PostgreSQL is not copied by this command. Back it up with pg_dump, e.g.\n"
                "    pg_dump --format=custom --file=chat.pgdump DATABASE_URL\n"
                "and restore it with pg_restore. Uploads and configuration are archived below.")
        files = _upload_files(instance / "uploads")
        total_bytes = sum(path.stat().st_size for path in files)
        say(f"uploads: {len(files)} files, {total_bytes / 1e6:.1f} MB")
        with tarfile.open(partial, "w:gz") as archive:
            if engine == "sqlite":
                archive.add(database_copy, DATABASE_NAME)
            done_bytes, last_report = 0, time.monotonic()
            for index, path in enumerate(files, 1):
                name = path.relative_to(instance).as_posix()
                try:
                    manifest["uploads"]["files"][name] = {"size": path.stat().st_size, "sha256": _sha256(path)}
                    archive.add(path, name)
                except FileNotFoundError:
                    continue  # deleted since it was listed: the snapshot no longer needs it either
                done_bytes += path.stat().st_size if path.exists() else 0
                if time.monotonic() - last_report > 2 or index == len(files):
                    say(f"uploads: {index}/{len(files)} files ({done_bytes / 1e6:.1f} MB)")
                    last_report = time.monotonic()
            manifest["uploads"]["count"] = len(manifest["uploads"]["files"])
            manifest["uploads"]["bytes"] = sum(f["size"] for f in manifest["uploads"]["files"].values())
            if manifest["config"]:
                config_bytes = (instance / "config.json").read_bytes()
                manifest["config_file"] = {"size": len(config_bytes), "sha256": hashlib.sha256(config_bytes).hexdigest()}
                _add_bytes(archive, "config.json", config_bytes)
            if (instance / CREDENTIALS_FILE).is_file():
                # This server's registration with the push notification service: without it a
                # restored server cannot push, nor register again under the same host name.
                credentials = (instance / CREDENTIALS_FILE).read_bytes()
                manifest["push_credentials_file"] = {"size": len(credentials),
                                                     "sha256": hashlib.sha256(credentials).hexdigest()}
                _add_bytes(archive, CREDENTIALS_FILE, credentials)
            tls_files = {}
            for path in _upload_files(instance / TLS_FOLDER):
                if path.name.endswith(".partial"):
                    continue  # a write in progress; the file it replaces is in the folder too
                data = path.read_bytes()
                name = path.relative_to(instance).as_posix()
                tls_files[name] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                _add_bytes(archive, name, data)
            if tls_files:
                manifest["tls_files"] = tls_files
                say(f"tls: {len(tls_files)} files (ACME account, certificates and their keys)")
            _add_bytes(archive, MANIFEST_NAME, json.dumps(manifest, indent=1).encode())
    os.replace(partial, target_file)
    say(f"backup written to {target_file} ({target_file.stat().st_size / 1e6:.1f} MB)")
    return manifest


def _safe_members(archive, destination):
    """The archive's members, refusing anything that would land outside `destination`."""
    root = destination.resolve()
    for member in archive.getmembers():
        target = (root / member.name).resolve()
        if not (member.isfile() or member.isdir()) or root not in (target, *target.parents):
            raise BackupError(f"refusing archive member {member.name!r}")
        yield member


def restore(instance, source_file, *, trust_settings=False):
    """Unpack `source_file` into the new instance folder `instance` and verify it; return the
    manifest. Refuses to write into a folder that holds anything, and (unless `trust_settings`)
    a configuration that widens whom the server trusts (TRUST_KEYS)."""
    instance = Path(instance)
    source_file = Path(source_file)
    try:
        with exclusively(instance, "restore"):
            return _restore(instance, source_file, trust_settings)
    except InstanceBusy as error:
        raise BackupError(str(error)) from None


def _restore(instance, source_file, trust_settings=False):
    if instance.exists() and any(child.name != LOCK_NAME for child in instance.iterdir()):
        raise BackupError(f"{instance} is not empty; restore only into a new or empty folder.")
    if not source_file.is_file():
        raise BackupError(f"no backup at {source_file}")
    created = not instance.exists()
    make_instance_folder(instance)
    try:
        return _restore_into(instance, source_file, trust_settings)
    except (EOFError, zlib.error, tarfile.TarError, gzip.BadGzipFile) as error:
        _remove_restored(instance, created)
        raise BackupError(f"{source_file} is truncated or damaged ({error or type(error).__name__}): it cannot be "
                          "restored. Use another copy of the backup.") from None
    except BaseException:
        _remove_restored(instance, created)
        raise


def _remove_restored(instance, created):
    """Leave nothing half-restored behind."""
    if created:
        shutil.rmtree(instance, ignore_errors=True)
    else:
        for child in instance.iterdir():
            if child.name != LOCK_NAME:
                shutil.rmtree(child) if child.is_dir() else child.unlink()


def _restore_into(instance, source_file, trust_settings=False):
    try:
        archive = tarfile.open(source_file, "r:gz")
    except (tarfile.TarError, OSError) as error:
        raise BackupError(f"{source_file} is not a chat-appliance backup: {error}") from None
    with archive:
        try:
            manifest = json.load(archive.extractfile(MANIFEST_NAME))
        except (KeyError, ValueError):
            raise BackupError(f"{source_file} has no readable {MANIFEST_NAME}: it is not a chat-appliance backup, "
                              "or it was cut short") from None
        if manifest.get("format") != FORMAT:
            raise BackupError(f"unknown backup format {manifest.get('format')!r}")
        members = [m for m in _safe_members(archive, instance) if m.name != MANIFEST_NAME]
        _check_listed(members, manifest)
        say(f"restoring {len(members)} entries from {source_file} into {instance}")
        last_report = time.monotonic()
        for index, member in enumerate(members, 1):
            archive.extract(member, instance, set_attrs=False)
            if member.isfile():
                os.chmod(instance / member.name, 0o600)  # the owner's only, whatever the umask
            if time.monotonic() - last_report > 2 or index == len(members):
                say(f"unpacked {index}/{len(members)}")
                last_report = time.monotonic()
    _verify(instance, manifest)
    _adapt_config(instance)
    _check_settings(instance, source_file, trust_settings)
    return manifest


def _check_listed(members, manifest):
    """Every file in the archive is one the manifest covers (nothing added beside it)."""
    listed = set(manifest["uploads"]["files"])
    if manifest["database"].get("file"):
        listed.add(manifest["database"]["file"])
    if manifest.get("config"):
        listed.add("config.json")
    if manifest.get("push_credentials_file"):
        listed.add(CREDENTIALS_FILE)
    listed.update(manifest.get("tls_files", {}))
    extra = sorted(m.name for m in members if m.isfile() and m.name not in listed)
    if extra:
        raise BackupError(f"the archive holds files its manifest does not list: {', '.join(extra[:5])}")


def _verify(instance, manifest):
    database = manifest["database"]
    if database["engine"] == "sqlite":
        path = instance / database["file"]
        if not path.exists() or _sha256(path) != database["sha256"]:
            raise BackupError("the database in the archive does not match its manifest")
        connection = sqlite3.connect(path)
        try:
            result = connection.execute("PRAGMA integrity_check").fetchone()[0]
            if result != "ok":
                raise BackupError(f"the restored database fails its integrity check: {result}")
            counts = table_counts(connection)
            connection.execute("PRAGMA journal_mode = WAL")
        finally:
            connection.close()
        if counts != database["tables"]:
            different = sorted(name for name in set(counts) | set(database["tables"])
                               if counts.get(name) != database["tables"].get(name))
            raise BackupError(f"row counts differ from the manifest in: {', '.join(different)}")
        say(f"database: integrity ok, {sum(counts.values())} rows in {len(counts)} tables match the manifest")
    else:
        say("database: this backup holds no database (PostgreSQL); restore it with pg_restore from your pg_dump.")
    for name, expected in manifest["uploads"]["files"].items():
        path = instance / name
        if not path.is_file() or path.stat().st_size != expected["size"] or _sha256(path) != expected["sha256"]:
            raise BackupError(f"upload {name} does not match the manifest")
    say(f"uploads: {manifest['uploads']['count']} files match the manifest")
    if manifest.get("config"):
        expected, path = manifest.get("config_file"), instance / "config.json"
        if expected is None:
            # Backups written before the manifest covered it: restored, but said so.
            say("config.json: not covered by this older backup's manifest; check it before serving")
        elif not path.is_file() or path.stat().st_size != expected["size"] or _sha256(path) != expected["sha256"]:
            raise BackupError("config.json does not match the manifest: the backup was changed or damaged")
        else:
            say("config.json: matches the manifest")
    expected = manifest.get("push_credentials_file")
    if expected:
        path = instance / CREDENTIALS_FILE
        if not path.is_file() or path.stat().st_size != expected["size"] or _sha256(path) != expected["sha256"]:
            raise BackupError(f"{CREDENTIALS_FILE} does not match the manifest: the backup was changed or damaged")
        os.chmod(path, 0o600)
        say("push notification service credentials: match the manifest")
    for name, expected in manifest.get("tls_files", {}).items():
        path = instance / name
        if not path.is_file() or path.stat().st_size != expected["size"] or _sha256(path) != expected["sha256"]:
            raise BackupError(f"{name} does not match the manifest: the backup was changed or damaged")
    if manifest.get("tls_files"):
        say(f"tls: {len(manifest['tls_files'])} files match the manifest")


# Settings that widen whom the server trusts or talks to: the proxies whose X-Forwarded-For it
# believes, the names it answers and links to, the mail server that receives password resets and
# invitations, the push service that receives notifications. The manifest's hash proves only that
# config.json and the manifest agree, not who wrote them, so a restore asks before it keeps them.
TRUST_KEYS = ("TRUSTED_PROXIES", "EXTERNAL_HOST", "TLS_DOMAIN", "ACME_DIRECTORY", "ACME_CA_BUNDLE",
              "OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES", "EMAIL_HOST", "EMAIL_PORT", "EMAIL_HOST_USER",
              "NOREPLY_EMAIL_ADDRESS", "ZULIP_SERVICES_URL", "PUSH_NOTIFICATION_BOUNCER_URL", "ZULIP_ORG_ID")


def _check_settings(instance, source_file, trust_settings):
    """Say which settings the restored config.json sets (those that differ from the defaults);
    refuse, unless `trust_settings`, those among them that widen trust (TRUST_KEYS)."""
    path = instance / "config.json"
    if not path.exists():
        return
    config = json.loads(path.read_text())
    changed = {key: value for key, value in sorted(config.items()) if DEFAULTS.get(key, object()) != value}
    for key, value in changed.items():
        shown = "(hidden)" if "PASSWORD" in key or key in ("ZULIP_ORG_KEY", "DATABASE_URL") else json.dumps(value)
        say(f"config.json sets {key} = {shown}" + (" (widens trust)" if key in TRUST_KEYS else ""))
    widening = [key for key in changed if key in TRUST_KEYS]
    if widening and not trust_settings:
        raise BackupError(f"{source_file} sets {', '.join(widening)} in config.json, which widen whom the server "
                          "trusts (proxies, host names, mail, push). Check them above; if they are yours, restore "
                          "again with --yes. Nothing was restored.")


def _adapt_config(instance):
    """A restored config.json must not point the new instance at the old instance's SQLite file."""
    path = instance / "config.json"
    if not path.exists():
        return
    config = json.loads(path.read_text())
    if str(config.get("DATABASE_URL") or "").startswith("sqlite:"):
        del config["DATABASE_URL"]
        path.write_text(json.dumps(config, indent=1))
        say("config.json: dropped DATABASE_URL, so the restored instance uses its own chat.sqlite3")
