"""Archives in and out: `import-zulip` reads only regular files inside an export and never
follows a link; a .tar.gz unpacks regular files and folders only, within limits of size and ratio,
and a damaged one says so; an export follows the access model."""

import io
import json
import tarfile

import pytest

from chat_appliance.ops.transfer import importer
from chat_appliance.ops.transfer.importer import ArchiveError, import_export

from ..support.helpers import zulip_export

UPLOAD = ("uploads", "7", "ab", "Xyz123", "plan.txt")


def tarball_of(folder, target, extra=()):
    """A .tar.gz of an export folder as Zulip writes it, plus `extra` (TarInfo, bytes) entries."""
    with tarfile.open(target, "w:gz") as tar:
        tar.add(folder, arcname=folder.name)
        for info, data in extra:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return target


def test_a_link_to_a_file_outside_the_export_is_refused(tmp_path):
    """Is an upload that is a symbolic link (here to another instance's secret_key) refused, and
    nothing of it copied into the new instance?"""
    folder = zulip_export(tmp_path / "export")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "secret_key").write_text("ab" * 32)
    upload = folder.joinpath(*UPLOAD)
    upload.unlink()
    upload.symlink_to(tmp_path / "other" / "secret_key")
    with pytest.raises(ArchiveError, match="plan.txt in the export is a symbolic link"):
        import_export(folder, tmp_path / "instance")
    assert not (tmp_path / "instance").exists()


def test_a_linked_folder_inside_the_export_is_refused(tmp_path):
    """Is a folder on an upload's path that is a link refused too (not only the file itself)?"""
    folder = zulip_export(tmp_path / "export")
    linked = folder / "uploads" / "7"
    linked.rename(tmp_path / "elsewhere")
    linked.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ArchiveError, match="uploads/7 in the export is a symbolic link"):
        import_export(folder, tmp_path / "instance")
    assert not (tmp_path / "instance").exists()


def test_a_linked_json_file_is_refused(tmp_path):
    """Is realm.json as a link refused rather than read through?"""
    folder = zulip_export(tmp_path / "export")
    (folder / "realm.json").rename(tmp_path / "realm.json")
    (folder / "realm.json").symlink_to(tmp_path / "realm.json")
    with pytest.raises(ArchiveError, match="realm.json in the export is a symbolic link"):
        import_export(folder, tmp_path / "instance")


@pytest.mark.parametrize("kind", [tarfile.FIFOTYPE, tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.SYMTYPE])
def test_special_entries_in_a_tarball_are_refused(tmp_path, kind):
    """Are FIFO, device and link entries refused before anything is imported?"""
    folder = zulip_export(tmp_path / "zulip-export-x")
    info = tarfile.TarInfo("zulip-export-x/uploads/odd")
    info.type = kind
    info.linkname = "/etc/passwd" if kind == tarfile.SYMTYPE else ""
    tarball = tarball_of(folder, tmp_path / "x.tar.gz", [(info, None)])
    with pytest.raises(ArchiveError, match="unsafe entry .*uploads/odd"):
        import_export(tarball, tmp_path / "instance")
    assert not (tmp_path / "instance").exists()


def test_an_archive_bomb_is_refused(tmp_path, monkeypatch):
    """Is an archive that unpacks to far more than its size refused with a clear message, before
    it has filled the disk? (The floor is lowered so that the bomb stays small.)"""
    monkeypatch.setattr(importer, "RATIO_FLOOR_BYTES", 1024 * 1024)
    folder = zulip_export(tmp_path / "zulip-export-x")
    info = tarfile.TarInfo("zulip-export-x/uploads/zeros")
    zeros = bytes(8 * 1024 * 1024)
    info.size = len(zeros)
    tarball = tarball_of(folder, tmp_path / "x.tar.gz", [(info, zeros)])
    assert tarball.stat().st_size < 100 * 1024
    written = []
    monkeypatch.setattr(importer.shutil, "copyfileobj",
                        lambda src, dst, *a: written.append(dst.write(src.read())))
    with pytest.raises(ArchiveError, match="unpacks to more than 1 MiB .*archive bomb"):
        import_export(tarball, tmp_path / "instance")
    assert sum(written) < 1024 * 1024


def test_the_total_size_is_limited(tmp_path):
    """Is an archive whose files add up to more than the total limit refused?"""
    folder = zulip_export(tmp_path / "zulip-export-x")
    tarball = tarball_of(folder, tmp_path / "x.tar.gz")
    with pytest.raises(ArchiveError, match="unpacks to more than 0 MiB"):
        importer.open_archive(tarball, max_unpacked_bytes=100)


def test_a_damaged_tarball_says_it_is_damaged(tmp_path):
    """Does a flipped byte in a .tar.gz answer that the archive is damaged, rather than blame
    missing uploads or end in a traceback?"""
    folder = zulip_export(tmp_path / "zulip-export-x")
    tarball = tarball_of(folder, tmp_path / "x.tar.gz")
    data = bytearray(tarball.read_bytes())
    data[len(data) // 2] ^= 0xFF
    tarball.write_bytes(bytes(data))
    with pytest.raises(ArchiveError, match="is damaged"):
        import_export(tarball, tmp_path / "instance")
    assert not (tmp_path / "instance").exists()


def test_a_truncated_tarball_says_it_is_damaged(tmp_path):
    """Is a .tar.gz cut short (an interrupted copy) reported as damaged?"""
    folder = zulip_export(tmp_path / "zulip-export-x")
    tarball = tarball_of(folder, tmp_path / "x.tar.gz")
    tarball.write_bytes(tarball.read_bytes()[:-300])
    with pytest.raises(ArchiveError, match="is damaged"):
        import_export(tarball, tmp_path / "instance")


def test_json_nested_beyond_the_recursion_limit_is_a_clear_error(tmp_path):
    """Does a JSON document nested deeper than Python's recursion limit answer a clear error?"""
    folder = zulip_export(tmp_path / "export")
    (folder / "attachment.json").write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(ArchiveError, match="attachment.json is nested too deeply"):
        import_export(folder, tmp_path / "instance")
    assert not (tmp_path / "instance").exists()


def test_an_intact_tarball_still_imports(tmp_path):
    """Control: does an intact tarball still import after all these checks?"""
    folder = zulip_export(tmp_path / "zulip-export-x")
    tarball = tarball_of(folder, tmp_path / "x.tar.gz")
    assert import_export(tarball, tmp_path / "instance")["uploads"] == 1
    assert (tmp_path / "instance" / "uploads" / "7" / "ab" / "Xyz123" / "plan.txt").is_file()


# --- Exports follow the access model -------------------------------------------------------


def exported_topic_names(org, app, export_type):
    """The topic names in zerver_usertopic of an export made through the API."""
    from pathlib import Path

    from chat_appliance.models import RealmExport, database

    from ..support.helpers import ok

    export_id = ok(org.client(org.admin).post("export/realm", export_type=export_type))["id"]
    with database.connection_context():
        folder = Path(app.config["INSTANCE_PATH"]) / RealmExport.get_by_id(export_id).path
    realm = json.loads((folder / "realm.json").read_text())
    return {(row["user_profile"], row["topic_name"]) for row in realm["zerver_usertopic"]}


def private_and_public_topic_settings(org):
    from ..support.helpers import ok

    secret = ok(org.client(org.admin).get("get_stream_id", stream="secret"))["stream_id"]
    for user in (org.admin, org.hamlet):
        ok(org.client(user).post("user_topics", stream_id=secret, topic=f"hush plans {user.id}", visibility_policy=1))
    ok(org.client(org.othello).post("user_topics", stream_id=org.denmark.id, topic="open noise", visibility_policy=1))


def test_public_export_leaves_out_private_channels_topic_names(org, app):
    """Does the public export leave out people's settings for topics of private channels (their
    names are private), keeping those of public channels?"""
    private_and_public_topic_settings(org)
    assert exported_topic_names(org, app, 1) == {(org.othello.id, "open noise")}


def test_export_with_consent_holds_consenting_peoples_private_topics_only(org, app):
    """Does the export with consent add the private channels' topic settings of the people who
    consented, and only theirs?"""
    from ..support.helpers import ok

    private_and_public_topic_settings(org)
    ok(org.client(org.hamlet).patch("settings", allow_private_data_export=True))
    assert exported_topic_names(org, app, 2) == {(org.othello.id, "open noise"),
                                                 (org.hamlet.id, f"hush plans {org.hamlet.id}")}
