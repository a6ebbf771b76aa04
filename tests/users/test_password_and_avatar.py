"""PATCH /settings with old_password/new_password and POST/DELETE /users/me/avatar, as Zulip."""

import io

from chat_appliance.web.sessions import SESSION_COOKIE

from ..support.helpers import PASSWORD
from ..support.helpers import err, ok
from ..support.webclient import SessionClient, sign_in

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


def test_change_password(org, flask_client):
    """Does a right old password change the password (the new one signs in, the old one no longer
    does), keeping the API key?"""
    client = org.client(org.hamlet)
    ok(client.patch("settings", old_password=PASSWORD, new_password="a brand new secret"))
    assert sign_in(flask_client, "hamlet@zulip.example", PASSWORD).status_code == 401
    assert sign_in(flask_client, "hamlet@zulip.example", "a brand new secret").status_code == 200
    ok(client.get("users/me"))


def test_password_change_refusals_change_nothing(org, flask_client):
    """Do a wrong old password, a missing old password and a weak new one get Zulip's errors,
    leaving the password as it was?"""
    client = org.client(org.hamlet)
    err(client.patch("settings", old_password="wrong", new_password="a brand new secret"), 400, "BAD_REQUEST",
        "Wrong password!")
    err(client.patch("settings", new_password="a brand new secret"), 400, "BAD_REQUEST",
        "Please fill out all fields.")
    err(client.patch("settings", old_password=PASSWORD, new_password="abc"), 400, "BAD_REQUEST",
        "New password is too weak!")
    assert sign_in(flask_client, "hamlet@zulip.example", PASSWORD).status_code == 200


def test_password_change_ends_other_sessions(org, app):
    """Does changing the password from one browser end the account's other browser sessions, and
    keep the one that made the change?"""
    first, second = app.test_client(), app.test_client()
    one = SessionClient.signed_in(first, "hamlet@zulip.example", PASSWORD)
    two = SessionClient.signed_in(second, "hamlet@zulip.example", PASSWORD)
    ok(one.patch("settings", old_password=PASSWORD, new_password="a brand new secret"))
    ok(one.get("users/me"))
    assert two.get("users/me").status_code == 401
    assert second.get_cookie(SESSION_COOKIE) is not None  # the browser still sends it; it is dead


def upload_avatar(org, user, content=PNG, files=1):
    data = {f"f{i}": (io.BytesIO(content), f"me{i}.png") for i in range(files)}
    return org.flask_client.post("/api/v1/users/me/avatar", headers=org.client(user).headers, data=data,
                                 content_type="multipart/form-data")


def test_avatar_upload_is_served_and_announced(org, flask_client):
    """Does an uploaded picture become the avatar: a new URL and version in GET /users/me and in a
    realm_user event to others, and the bytes served at that URL as an image?"""
    othello = org.client(org.othello)
    queue_id = ok(othello.post("register", event_types=["realm_user"]))["queue_id"]
    before = ok(org.client(org.hamlet).get("users/me"))["avatar_version"]
    url = ok(upload_avatar(org, org.hamlet))["avatar_url"]
    me = ok(org.client(org.hamlet).get("users/me"))
    assert me["avatar_url"] == url and me["avatar_version"] == before + 1
    events = ok(othello.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True))["events"]
    person = [e["person"] for e in events if e["type"] == "realm_user"][0]
    assert person["user_id"] == org.hamlet.id and person["avatar_url"] == url
    response = flask_client.get(url)
    assert response.status_code == 200 and response.mimetype == "image/png" and response.data == PNG
    ok(org.client(org.hamlet).delete("users/me/avatar"))
    assert ok(org.client(org.hamlet).get("users/me"))["avatar_url"].startswith("https://secure.gravatar.com/")
    assert flask_client.get(url).status_code == 404


def test_avatar_refusals(org):
    """Are no file, two files and a file that is not an image refused, leaving the avatar as it was?"""
    before = ok(org.client(org.hamlet).get("users/me"))["avatar_url"]
    err(upload_avatar(org, org.hamlet, files=0), 400, "BAD_REQUEST", "You must upload exactly one avatar.")
    err(upload_avatar(org, org.hamlet, files=2), 400, "BAD_REQUEST", "You must upload exactly one avatar.")
    err(upload_avatar(org, org.hamlet, content=b"<html><script>alert(1)</script>"), 400, "BAD_REQUEST",
        "Invalid image format")
    assert ok(org.client(org.hamlet).get("users/me"))["avatar_url"] == before
