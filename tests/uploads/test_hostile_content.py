"""Content a member or an archive brings cannot run in the app's origin: uploads outside the
inline allow-list are opaque downloads, and imported HTML goes through the allow-list."""

import json

from chat_appliance.models import Message, Stream, database
from chat_appliance.ops.transfer.importer import import_export

from ..support import pg
from ..support.helpers import PNG, download, new_instance_client, ok, upload, zulip_export

SCRIPT = b"fetch('/json/users/me/api_key/regenerate', {method: 'POST'})"


def test_uploads_outside_the_inline_list_are_opaque_downloads(org):
    """Is an uploaded .js (or .html, .svg, .css, .txt) served as application/octet-stream, as an
    attachment, with nosniff, so that no <script src> of a page here can run it; and a PNG still
    inline as image/png?"""
    for name in ("script.js", "module.mjs", "page.html", "drawing.svg", "style.css", "notes.txt"):
        url = ok(upload(org, org.hamlet, SCRIPT, name=name))["url"]
        response = download(org, org.hamlet, url)
        assert response.status_code == 200 and response.data == SCRIPT, name
        assert response.headers["Content-Type"] == "application/octet-stream", name
        assert response.headers["Content-Disposition"].startswith("attachment"), name
        assert response.headers["X-Content-Type-Options"] == "nosniff", name
    url = ok(upload(org, org.hamlet, PNG, name="dot.png"))["url"]
    response = download(org, org.hamlet, url)
    assert response.mimetype == "image/png" and response.headers["Content-Disposition"].startswith("inline")


def test_imported_html_goes_through_the_allow_list(tmp_path, monkeypatch):
    """Does `import-zulip` store an archive's rendered_content and rendered_description through
    the sanitiser (no script, handler or javascript: link), keeping the markup it allows?"""
    folder = zulip_export(tmp_path / "export")
    realm = json.loads((folder / "realm.json").read_text())
    realm["zerver_stream"][0]["rendered_description"] = '<p>Builders<img src="x" onerror="alert(1)"></p>'
    (folder / "realm.json").write_text(json.dumps(realm))
    messages = json.loads((folder / "messages-000001.json").read_text())
    messages["zerver_message"][2]["rendered_content"] = (
        '<p>same pair<script>alert(1)</script> <a href="javascript:alert(1)">x</a> <strong>ok</strong></p>')
    (folder / "messages-000001.json").write_text(json.dumps(messages))
    pg.use_fresh_database(monkeypatch)
    import_export(folder, tmp_path / "instance", realm_url="http://chat.team.example")
    new_instance_client(tmp_path / "instance", "bob@team.example")
    with database.connection_context():
        html = Message.get_by_id(1002).rendered_content
        description = Stream.get_by_id(20).rendered_description
    assert html == "<p>same pair <a>x</a> <strong>ok</strong></p>"
    assert description == '<p>Builders<img src="x"></p>'
