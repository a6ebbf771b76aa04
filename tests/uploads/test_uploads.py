"""POST /user_uploads, the download URL it returns, GET/DELETE /attachments."""

import io

import pytest

from ..support.helpers import download, err, ok, upload


def test_upload_returns_a_url_the_uploader_can_download(org):
    """Does an upload under any field name return uri/url under /user_uploads/{realm_id}/, store
    the file under the instance folder, and give the exact bytes back to the uploader?"""
    body = ok(upload(org, org.hamlet, b"\x00binary\xff", name="my report (final).txt"))
    assert body["uri"] == body["url"]
    assert body["url"].startswith(f"/user_uploads/{org.realm.id}/")
    assert body["url"].endswith("/my_report_final.txt")
    assert body["filename"] == "my_report_final.txt"
    response = download(org, org.hamlet, body["url"])
    assert response.status_code == 200
    assert response.data == b"\x00binary\xff"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert "attachment" in response.headers["Content-Disposition"]


@pytest.mark.parametrize("name", ["café menu.PDF", "../../etc/passwd", "  .hidden  ", "a/b\\c d\tе.txt",
                                  "日本語.png", "___", "résumé – final (2).docx", "x" * 5 + "..tar.gz."])
def test_uploaded_file_names_are_what_they_always_were(org, name):
    """Is an uploaded file stored under the name werkzeug's secure_filename gave it, as before
    actions/uploads made the name itself (so that files uploaded before and after link alike)?"""
    from werkzeug.utils import secure_filename

    body = ok(upload(org, org.hamlet, b"bytes", name=name))
    assert body["filename"] == (secure_filename(name) or "uploaded-file")
    assert body["url"].endswith("/" + body["filename"])


def test_who_may_download(org):
    """May a user download a file only once a message they can read links it, and do missing and
    forbidden files look alike? Does a download need credentials?"""
    url = ok(upload(org, org.hamlet))["url"]
    err(download(org, org.othello, url), 404, "NOT_FOUND", "File not found")
    err(download(org, org.hamlet, url + "x"), 404, "NOT_FOUND", "File not found")
    err(download(org, None, url), 401, "UNAUTHORIZED")
    ok(org.client(org.hamlet).post("messages", type="stream", to="Denmark", topic="files",
                                   content=f"[notes.txt]({url})"))
    assert download(org, org.othello, url).data == b"hello file"
    # Cordelia is not subscribed, but Denmark is public with shared history: she may read it.
    assert download(org, org.cordelia, url).status_code == 200
    # A direct message shares a file with its participants only.
    secret_url = ok(upload(org, org.hamlet, b"for othello"))["url"]
    ok(org.client(org.hamlet).post("messages", type="direct", to=[org.othello.id], content=secret_url))
    assert download(org, org.othello, secret_url).data == b"for othello"
    err(download(org, org.cordelia, secret_url), 404, "NOT_FOUND")


def test_image_is_served_inline(org):
    """Is an image served inline with its type, so that clients can show it?"""
    url = ok(upload(org, org.hamlet, b"\x89PNG\r\n", name="pic.png"))["url"]
    response = download(org, org.hamlet, url)
    assert response.mimetype == "image/png"
    assert "inline" in response.headers["Content-Disposition"]


@pytest.mark.config(MAX_FILE_UPLOAD_SIZE_MIB=1)
def test_upload_errors(org, app):
    """Are no file, two files and a file over MAX_FILE_UPLOAD_SIZE_MIB clear errors?"""
    client = org.client(org.hamlet)
    err(org.flask_client.post("/api/v1/user_uploads", headers=client.headers, data={},
                              content_type="multipart/form-data"),
        400, "BAD_REQUEST", "You must specify a file to upload")
    err(org.flask_client.post("/api/v1/user_uploads", headers=client.headers,
                              data={"a": (io.BytesIO(b"1"), "a.txt"), "b": (io.BytesIO(b"2"), "b.txt")},
                              content_type="multipart/form-data"),
        400, "BAD_REQUEST", "You may only upload one file at a time")
    err(upload(org, org.hamlet, b"x" * (1024 * 1024 + 1)), 400, "BAD_REQUEST",
        "File is larger than the maximum upload size (1 MiB).")
    assert not list((org_uploads(app)).rglob("*.txt"))


def org_uploads(app):
    from pathlib import Path

    return Path(app.config["INSTANCE_PATH"]) / "uploads"


def test_attachments_list_and_delete(org, app):
    """Does GET /attachments list my uploads with the messages linking them (times in ms) and
    the space used, and does DELETE remove the file?"""
    url = ok(upload(org, org.hamlet, b"12345"))["url"]
    message_id = ok(org.client(org.hamlet).post("messages", type="stream", to="Denmark", topic="t",
                                                content=url))["id"]
    body = ok(org.client(org.hamlet).get("attachments"))
    [attachment] = body["attachments"]
    assert body["upload_space_used"] == 5
    assert attachment["path_id"] == url.removeprefix("/user_uploads/")
    assert attachment["name"] == "notes.txt" and attachment["size"] == 5
    assert attachment["create_time"] > 10**12
    assert [m["id"] for m in attachment["messages"]] == [message_id]
    assert ok(org.client(org.othello).get("attachments"))["attachments"] == []
    err(org.client(org.othello).delete(f"attachments/{attachment['id']}"), 400, "BAD_REQUEST",
        "Invalid attachment")
    ok(org.client(org.hamlet).delete(f"attachments/{attachment['id']}"))
    err(download(org, org.hamlet, url), 404, "NOT_FOUND")
    assert not list(org_uploads(app).rglob("notes.txt"))


def test_request_over_the_body_limit(org, app):
    """Is a body over MAX_CONTENT_LENGTH refused with 413 and the upload limit in the message, and
    does the body limit grow to hold the largest allowed upload?"""
    assert app.config["MAX_CONTENT_LENGTH"] >= (app.config["MAX_FILE_UPLOAD_SIZE_MIB"] + 1) * 1024 * 1024
    app.config["MAX_CONTENT_LENGTH"] = 1000
    err(upload(org, org.hamlet, b"x" * 2000), 413, "BAD_REQUEST",
        f"File is larger than the maximum upload size ({app.config['MAX_FILE_UPLOAD_SIZE_MIB']} MiB).")


def test_temporary_url(org, monkeypatch):
    """Does GET /api/v1/user_uploads/{realm}/{path} give a URL that serves the file without
    credentials, only to those who may see the file, and only for a minute?"""
    from chat_appliance.actions import uploads

    url = ok(upload(org, org.hamlet, b"temporary"))["url"]
    api_path = "/api/v1" + url
    temporary = ok(org.flask_client.get(api_path, headers=org.client(org.hamlet).headers))["url"]
    assert temporary.startswith("/user_uploads/temporary/") and temporary.endswith("/notes.txt")
    assert org.flask_client.get(temporary).data == b"temporary"
    err(org.flask_client.get(api_path, headers=org.client(org.othello).headers), 404, "NOT_FOUND", "File not found")
    err(org.flask_client.get(temporary.replace("/temporary/", "/temporary/x")), 404, "NOT_FOUND")
    monkeypatch.setattr(uploads, "TEMPORARY_URL_SECONDS", -1)
    err(org.flask_client.get(temporary), 404, "NOT_FOUND", "File not found")


def test_thumbnail_redirects_signed_in_users_to_the_image(org, anon):
    """Does /thumbnail (the src of image previews) send an authenticated client to the image,
    refuse other schemes, and refuse anonymous requests (no open redirect)?"""
    hamlet = org.client(org.hamlet)
    ok(hamlet.post("messages", type="stream", to="Denmark", topic="pictures", content="https://example.com/a.png"))
    response = hamlet.flask_client.get("/thumbnail", query_string={"url": "https://example.com/a.png",
                                                                   "size": "thumbnail"}, headers=hamlet.headers)
    assert response.status_code == 302 and response.headers["Location"] == "https://example.com/a.png"
    bad = hamlet.flask_client.get("/thumbnail", query_string={"url": "javascript:alert(1)"}, headers=hamlet.headers)
    assert bad.status_code == 400 and bad.get_json()["result"] == "error"
    assert anon.flask_client.get("/thumbnail", query_string={"url": "https://example.com/a.png"}).status_code == 401
