"""What the web client needs of the server, checked without a browser (the browser tests need
Chromium; these do not)."""

import re

from .helpers import PASSWORD, ok
from .webclient import SessionClient

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
    that the HTML the server typesets shows as maths in the browser?"""
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
