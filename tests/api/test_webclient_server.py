"""What the web client needs of the server, checked without a browser (the browser tests need
Chromium; these do not)."""

import re

from ..support.helpers import PASSWORD, ok
from ..support.webclient import SessionClient

CHROMIUM_USER_AGENT = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                       "Chrome/120.0.0.0 Safari/537.36")


def test_page_and_every_file_it_loads_are_served(flask_client):
    """Does / name its scripts and styles, and is each of them served (200, not the API's 404)?"""
    page = flask_client.get("/")
    assert page.status_code == 200
    paths = re.findall(r'(?:src|href)="(/static/[^"]+)"', page.get_data(as_text=True))
    assert any(path.endswith(".js") for path in paths) and any(path.endswith(".css") for path in paths)
    for path in sorted(set(paths)):
        response = flask_client.get(path)
        assert response.status_code == 200, path
        response.close()


def test_a_message_sent_from_the_page_starts_read_for_its_sender(org, flask_client):
    """Is a message sent from a browser's session (Zulip's client "website", whatever the browser
    calls itself) read for its sender at once, as Zulip has it? The page otherwise marked the
    sender's own message read a moment later, and a flag request for a message deleted in that
    moment failed (the 400 on /json/messages/flags the browser tests logged)."""
    page = SessionClient.signed_in(flask_client, "hamlet@zulip.example", PASSWORD)
    flask_client.environ_base["HTTP_USER_AGENT"] = CHROMIUM_USER_AGENT
    sent = ok(page.post("messages", type="stream", to="Denmark", topic="castle", content="typed"))["id"]
    [message] = ok(page.get("messages", message_ids=[sent]))["messages"]
    assert "read" in message["flags"]
    # The same browser signing a request with an API key is an integration: unread for its sender.
    api = org.client(org.hamlet)
    scripted = ok(api.post("messages", type="stream", to="Denmark", topic="castle", content="scripted"))["id"]
    [message] = ok(api.get("messages", message_ids=[scripted]))["messages"]
    assert "read" not in message["flags"]


def test_katex_stylesheet_and_its_fonts_are_served(flask_client):
    """Does the page link KaTeX's stylesheet, and is every font that stylesheet names served, so
    that the HTML the server typesets shows as maths in the browser (and nothing outside
    KaTeX's folder)?"""
    page = flask_client.get("/").get_data(as_text=True)
    assert 'href="/static/katex/katex.min.css"' in page
    css = flask_client.get("/static/katex/katex.min.css")
    assert css.status_code == 200
    fonts = set(re.findall(r"url\((fonts/[^)]+)\)", css.get_data(as_text=True)))
    assert any(f.endswith(".woff2") for f in fonts)
    css.close()
    for font in sorted(fonts):
        response = flask_client.get("/static/katex/" + font)
        assert response.status_code == 200, font
        response.close()
    # Only the vendored release's folder: not the renderer's modules beside it.
    assert flask_client.get("/static/katex/../../katex.py").status_code == 404
    assert flask_client.get("/static/katex/missing.css").status_code == 404


def test_static_files_are_compressed_and_revalidated_without_a_body(flask_client):
    """Are the client's files sent gzip-compressed to a browser that accepts it, with a
    content-hash ETag, so that a returning visit gets 304 Not Modified and no body for each
    unchanged file; and is a missing file or a path out of the folder a 404?"""
    import gzip

    from chat_appliance.webclient.views import STATIC_DIR

    for path in ("/static/webclient/js/feed.js", "/static/webclient/app.css"):
        plain = flask_client.get(path)
        assert plain.status_code == 200 and "Content-Encoding" not in plain.headers
        source = (STATIC_DIR / path.removeprefix("/static/webclient/")).read_bytes()
        assert plain.data == source
        packed = flask_client.get(path, headers={"Accept-Encoding": "gzip, deflate, br"})
        assert packed.headers["Content-Encoding"] == "gzip"
        assert packed.headers["Vary"] == "Accept-Encoding"
        assert gzip.decompress(packed.data) == source
        assert len(packed.data) < len(source) / 2
        assert packed.headers["Cache-Control"] == "no-cache"
        etag = packed.headers["ETag"]
        assert etag != plain.headers["ETag"]  # each encoding is its own variant
        again = flask_client.get(path, headers={"Accept-Encoding": "gzip", "If-None-Match": etag})
        assert again.status_code == 304 and again.data == b""
        assert flask_client.get(path, headers={"If-None-Match": plain.headers["ETag"]}).status_code == 304
        assert flask_client.get(path, headers={"If-None-Match": '"stale"'}).status_code == 200
    assert flask_client.get("/static/webclient/js/missing.js").status_code == 404
    assert flask_client.get("/static/webclient/../views.py").status_code == 404
    image = flask_client.get("/static/webclient/realm-icon.png", headers={"Accept-Encoding": "gzip"})
    assert image.status_code == 200 and "Content-Encoding" not in image.headers


def test_emoji_font_parts_are_served_as_fonts_and_kept_a_year(flask_client):
    """Is every emoji font part app.css names served as font/woff2 with a year-long immutable
    Cache-Control (its folder's name carries the font's version), not compressed again (woff2 is
    compressed already), with the font's licence beside it; while the client's other files are
    still revalidated (no-cache)?"""
    css = flask_client.get("/static/webclient/app.css").get_data(as_text=True)
    parts = set(re.findall(r"url\((fonts/[^)]+\.woff2)\)", css))
    assert len(parts) > 5
    folders = {part.rsplit("/", 1)[0] for part in parts}
    assert len(folders) == 1 and re.fullmatch(r"fonts/noto-color-emoji-\d+(\.\d+)+", folders.pop())
    for part in sorted(parts):
        response = flask_client.get("/static/webclient/" + part, headers={"Accept-Encoding": "gzip"})
        assert response.status_code == 200, part
        assert response.headers["Content-Type"] == "font/woff2"
        assert response.headers["Cache-Control"] == "public, max-age=31536000, immutable"
        assert "Content-Encoding" not in response.headers
        assert response.data[:4] == b"wOF2"
        response.close()
    licence = flask_client.get("/static/webclient/" + next(iter(parts)).rsplit("/", 1)[0] + "/LICENSE")
    assert licence.status_code == 200 and b"SIL OPEN FONT LICENSE" in licence.data
    assert flask_client.get("/static/webclient/app.css").headers["Cache-Control"] == "no-cache"
    assert flask_client.get("/static/webclient/fonts/missing.woff2").status_code == 404


def test_the_page_names_its_scripts_by_version_and_browsers_keep_them(flask_client):
    """Does the page load its scripts from a prefix named by their content, served to be kept a
    year (a returning visit asks for none of its scripts again), while the same file at its plain
    path, or under another version (a page from before an upgrade), is to be revalidated; and
    is a path out of the scripts' folder a 404?"""
    from chat_appliance.webclient.views import STATIC_DIR, scripts_version

    page = flask_client.get("/").get_data(as_text=True)
    version = scripts_version()
    scripts = re.findall(r'(?:src|href)="(/static/webclient/[^"]+\.js)"', page)
    assert scripts and all(path.startswith(f"/static/webclient/v/{version}/js/") for path in scripts), scripts
    main = flask_client.get(f"/static/webclient/v/{version}/js/main.js")
    assert main.status_code == 200 and main.data == (STATIC_DIR / "js" / "main.js").read_bytes()
    assert main.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    # A script it imports, by a relative path, resolves under the same prefix.
    assert 'from "./api.js"' in main.get_data(as_text=True)
    assert flask_client.get(f"/static/webclient/v/{version}/js/api.js").headers["Cache-Control"].endswith("immutable")
    older = flask_client.get("/static/webclient/v/0123456789abcdef/js/main.js")
    assert older.status_code == 200 and older.headers["Cache-Control"] == "no-cache"
    assert flask_client.get("/static/webclient/js/main.js").headers["Cache-Control"] == "no-cache"
    assert flask_client.get(f"/static/webclient/v/{version}/js/../app.css").status_code == 404
    assert flask_client.get(f"/static/webclient/v/{version}/js/missing.js").status_code == 404


def test_the_development_server_names_its_scripts_by_their_plain_paths(app, flask_client):
    """Under `chat-appliance dev`, are the page's scripts at their plain paths, revalidated on
    each load, so that an edited script is the one a reload runs?"""
    app.config["DEV_MODE"] = True
    try:
        page = flask_client.get("/").get_data(as_text=True)
    finally:
        app.config["DEV_MODE"] = False
    scripts = re.findall(r'(?:src|href)="(/static/webclient/[^"]+\.js)"', page)
    assert scripts and all(path.startswith("/static/webclient/js/") for path in scripts), scripts
