"""What a user may not see stays out of reach by a side door: sending a file's URL grants nothing,
a hidden real address resolves through no narrow or lookup, and /thumbnail redirects only to
images the user may see."""

import json

from ..support.helpers import download, err, ok, upload


def send(client, stream, topic, content):
    return ok(client.post("messages", type="stream", to=stream, topic=topic, content=content))["id"]


def test_a_url_is_not_access(org):
    """Does sending a file's URL share the file only when the sender could open it? A user who
    cannot open a file gains nothing by sending its URL to themselves or to a channel."""
    url = ok(upload(org, org.hamlet, b"private notes"))["url"]
    othello, cordelia = org.client(org.othello), org.client(org.cordelia)
    ok(othello.post("messages", type="direct", to=[org.othello.id], content=f"[mine]({url})"))
    err(download(org, org.othello, url), 404, "NOT_FOUND", "File not found")
    send(othello, "Denmark", "leak", url)
    err(download(org, org.admin, url), 404, "NOT_FOUND", "File not found")
    # Its uploader shares it with Cordelia; Cordelia may then share it onward.
    ok(org.client(org.hamlet).post("messages", type="direct", to=[org.cordelia.id], content=url))
    assert download(org, org.cordelia, url).data == b"private notes"
    ok(cordelia.post("messages", type="direct", to=[org.guest.id], content=url))
    assert download(org, org.guest, url).data == b"private notes"
    # Othello's earlier messages still share nothing.
    err(download(org, org.othello, url), 404, "NOT_FOUND", "File not found")


def test_hidden_addresses_do_not_resolve(org):
    """When Hamlet lets only administrators see his real address, can a member neither confirm
    it nor tie it to his id through sender:/dm: narrows, a direct message's `to` or principals,
    while his placeholder address and an administrator's use of the real one still work?"""
    ok(org.client(org.hamlet).patch("settings", email_address_visibility=3))
    real = org.hamlet.delivery_email
    placeholder = f"user{org.hamlet.id}@zulip.example"
    othello, admin = org.client(org.othello), org.client(org.admin)
    for operator in ("sender", "dm"):
        narrow = [{"operator": operator, "operand": real}]
        err(othello.get("messages", anchor="newest", num_before=1, num_after=0, narrow=narrow), 400, "BAD_NARROW")
        ok(admin.get("messages", anchor="newest", num_before=1, num_after=0, narrow=narrow))
        ok(othello.get("messages", anchor="newest", num_before=1, num_after=0,
                       narrow=[{"operator": operator, "operand": placeholder}]))
    err(othello.post("messages", type="direct", to=json.dumps([real]), content="hi"), 400, "BAD_REQUEST",
        f"Invalid email '{real}'")
    ok(othello.post("messages", type="direct", to=json.dumps([placeholder]), content="hi"))
    refused = othello.post("users/me/subscriptions", subscriptions=[{"name": "Denmark"}], principals=[real])
    err(refused, 403, "UNAUTHORIZED_PRINCIPAL")
    ok(admin.post("users/me/subscriptions", subscriptions=[{"name": "Verona"}], principals=[real]))


def test_thumbnail_redirects_only_to_images_the_user_may_see(org):
    """Does /thumbnail send a signed-in user only to an image previewed in a message they may
    read, or to this server's own upload URLs, and refuse any other address, an image
    previewed only in a private channel they are not in included?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)

    def thumbnail(client, url):
        return client.flask_client.get("/thumbnail", query_string={"url": url, "size": "full"}, headers=client.headers)

    assert thumbnail(othello, "https://evil.example/phish.png").status_code == 400
    ok(hamlet.post("messages", type="stream", to="secret", topic="t", content="https://example.com/secret.png"))
    assert thumbnail(othello, "https://example.com/secret.png").status_code == 400
    assert thumbnail(hamlet, "https://example.com/secret.png").status_code == 302
    ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content="https://example.com/open.png?a=1&b=2"))
    response = thumbnail(othello, "https://example.com/open.png?a=1&b=2")
    assert response.status_code == 302 and response.headers["Location"] == "https://example.com/open.png?a=1&b=2"
    assert thumbnail(othello, "https://example.com/open.png").status_code == 400  # not that exact URL
    own = "http://localhost/user_uploads/1/ab/cat.png"
    response = thumbnail(othello, own)
    assert response.status_code == 302 and response.headers["Location"] == "/user_uploads/1/ab/cat.png"
    assert thumbnail(othello, "http://elsewhere.example/user_uploads/1/ab/cat.png").status_code == 400
