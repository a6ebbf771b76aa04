"""End to end: a file left without its upload record (the process died between the two) is
removed at the next start; files with their record stay."""

import requests

from ..support.serve_process import ServeProcess


def test_a_start_removes_uploaded_files_without_a_record(tmp_path):
    """After a file is left in uploads/ with no Attachment row (as kill -9 between the write and
    the commit leaves it), does the next `serve` remove it and keep the real upload served?"""
    instance = tmp_path / "instance"
    first = ServeProcess(instance)
    auth = (first.email, first.api_key)
    answer = requests.post(first.url + "/api/v1/user_uploads", auth=auth,
                           files={"file": ("kept.txt", b"kept bytes")}, timeout=10).json()
    assert answer["result"] == "success", answer
    first.stop()
    realm_folder = next(p for p in (instance / "uploads").iterdir() if p.name.isdigit())
    orphan = realm_folder / "orphanfolder" / "half.bin"
    orphan.parent.mkdir()
    orphan.write_bytes(b"x" * 1000)
    second = ServeProcess(instance)
    try:
        assert not orphan.exists() and not orphan.parent.exists()
        assert "Removed 1 uploaded file(s)" in "".join(second.output)
        served = requests.get(second.url + answer["url"], auth=auth, timeout=10)
        assert served.status_code == 200 and served.content == b"kept bytes"
    finally:
        second.stop()
