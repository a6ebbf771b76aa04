"""Markup and URLs from users never run in the server's origin: a topic's markup is escaped in
search highlights, linkifier templates are web URLs only, and uploads other than raster images
are served as downloads."""

from chat_appliance.models import Linkifier, database

from ..support.helpers import download, err, ok, upload

XSS_TOPIC = "<img src=x onerror=alert(1)>"


def send(client, stream, topic, content):
    return ok(client.post("messages", type="stream", to=stream, topic=topic, content=content))["id"]


def test_match_subject_is_escaped(org):
    """Is a topic holding markup escaped in match_subject, in search results and in
    /messages/matches_narrow, while the highlight markup stays?"""
    hamlet = org.client(org.hamlet)
    message_id = send(hamlet, "Denmark", XSS_TOPIC + " alert", "findme please")
    narrow = [{"operator": "search", "operand": "alert"}]
    found = ok(hamlet.get("messages", anchor="newest", num_before=5, num_after=0, narrow=narrow))["messages"]
    subject = next(m["match_subject"] for m in found if m["id"] == message_id)
    assert "<img" not in subject and "&lt;img src=x onerror=" in subject
    assert '<span class="highlight">alert</span>' in subject
    matched = ok(hamlet.get("messages/matches_narrow", msg_ids=[message_id], narrow=narrow))["messages"]
    assert "<img" not in matched[str(message_id)]["match_subject"]
    assert "&lt;img" in matched[str(message_id)]["match_subject"]


def test_linkifier_templates_are_web_urls(org):
    """Is a linkifier with a javascript: (or relative) URL template refused, and does a stored one
    never reach topic_links?"""
    admin = org.client(org.admin)
    for template in ("javascript:alert({id})", "data:text/html,{id}", "/relative/{id}"):
        err(admin.post("realm/filters", pattern="#(?P<id>[0-9]+)", url_template=template), 400, "BAD_REQUEST",
            "Invalid URL template.")
    with database.connection_context():
        Linkifier.create(realm=org.realm.id, pattern="#(?P<id>[0-9]+)", url_template="javascript:alert({id})",
                         order=99)
    hamlet = org.client(org.hamlet)
    message_id = send(hamlet, "Denmark", "ticket #12 https://example.com", "see")
    message = ok(hamlet.get(f"messages/{message_id}"))["message"]
    urls = [link["url"] for link in message["topic_links"]]
    assert urls == ["https://example.com"]


PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e5270f8d0000000049454e44ae426082")


def test_only_raster_images_are_shown_inline(org):
    """Are uploaded .js, .html, .htm, .svg and .xml files served as downloads (Content-Disposition:
    attachment), raster images inline, and every upload with `Content-Security-Policy: sandbox`
    and nosniff?"""
    cases = {"page.html": False, "page.htm": False, "script.js": False, "drawing.svg": False, "feed.xml": False,
             "notes.txt": False, "dot.png": True, "photo.jpg": True, "anim.gif": True}
    for name, inline in cases.items():
        url = ok(upload(org, org.hamlet, PNG if inline else b"<script>alert(document.cookie)</script>", name=name))["url"]
        response = download(org, org.hamlet, url)
        assert response.status_code == 200, name
        disposition = response.headers["Content-Disposition"]
        assert disposition.startswith("inline" if inline else "attachment"), (name, disposition)
        assert response.headers["Content-Security-Policy"] == "sandbox", name
        assert response.headers["X-Content-Type-Options"] == "nosniff", name
