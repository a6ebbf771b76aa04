"""Sign-in to the web client, its session cookie, and the /json API it calls with a CSRF token."""

import io

from chat_appliance.web.sessions import SESSION_COOKIE
from chat_appliance.models import Message, database

from ..support.helpers import PASSWORD
from ..support.helpers import err, ok
from ..support.webclient import SessionClient, sign_in


def session_cookie(flask_client):
    return flask_client.get_cookie(SESSION_COOKIE)


def test_sign_in_sets_an_httponly_lax_cookie(org, flask_client):
    """Does signing in with email and password answer with the user and a CSRF token, and set a
    session cookie that scripts cannot read (HttpOnly), sent on same-site navigation only (Lax),
    not marked Secure over plain HTTP?"""
    response = sign_in(flask_client, "hamlet@zulip.example", PASSWORD)
    body = response.get_json()
    assert response.status_code == 200 and body["result"] == "success", body
    assert body["user_id"] == org.hamlet.id and body["csrf_token"]
    header = response.headers["Set-Cookie"]
    assert header.startswith(SESSION_COOKIE + "=")
    assert "HttpOnly" in header and "SameSite=Lax" in header and "Secure" not in header
    assert session_cookie(flask_client) is not None


def test_cookie_is_secure_over_https(org, flask_client):
    """Is the session cookie marked Secure when the page is served over HTTPS?"""
    response = flask_client.post("/accounts/login", base_url="https://chat.example",
                                 data={"username": "hamlet@zulip.example", "password": PASSWORD},
                                 headers={"X-Requested-With": "XMLHttpRequest"})
    assert response.status_code == 200
    assert "Secure" in response.headers["Set-Cookie"]


def test_wrong_password_and_bots_get_no_session(org, flask_client):
    """Do a wrong password, an unknown email and a bot's email get Zulip's 401 and no cookie?"""
    for email, password in (("hamlet@zulip.example", "wrong"), ("nobody@zulip.example", PASSWORD),
                            (org.bot.email, PASSWORD)):
        response = sign_in(flask_client, email, password)
        assert response.status_code == 401
        assert response.get_json()["code"] == "AUTHENTICATION_FAILED"
        assert response.get_json()["msg"] == "Your username or password is incorrect"
        assert "Set-Cookie" not in response.headers and "WWW-Authenticate" not in response.headers
    assert session_cookie(flask_client) is None


def test_sign_in_from_another_site_is_refused(org, flask_client):
    """Is a sign-in without the X-Requested-With header (a cross-site form post) refused?"""
    response = flask_client.post("/accounts/login", data={"username": "hamlet@zulip.example", "password": PASSWORD})
    assert response.status_code == 403 and response.get_json()["code"] == "CSRF_FAILED"
    assert session_cookie(flask_client) is None


def test_deactivated_user_cannot_sign_in_and_loses_the_session(org, flask_client):
    """Is a deactivated account refused at sign-in, and does an open session stop working?"""
    web = SessionClient.signed_in(flask_client, "othello@zulip.example", PASSWORD)
    ok(web.get("users/me"))
    ok(org.client(org.owner).delete(f"users/{org.othello.id}"))
    # The session is gone with the deactivation (as Zulip flushes its sessions): signed out.
    response = web.get("users/me")
    assert response.status_code == 401 and response.get_json()["code"] == "UNAUTHORIZED"
    # The same answer as a wrong password (answers do not tell accounts apart).
    response = sign_in(flask_client, "othello@zulip.example", PASSWORD)
    assert response.status_code == 401 and response.get_json()["code"] == "AUTHENTICATION_FAILED"


def test_reactivation_does_not_revive_old_sessions(org, flask_client):
    """Does a browser session opened before a deactivation stay ended after the account is
    reactivated (its row deleted at deactivation), while a new sign-in works?"""
    web = SessionClient.signed_in(flask_client, "othello@zulip.example", PASSWORD)
    ok(web.get("users/me"))
    owner = org.client(org.owner)
    ok(owner.delete(f"users/{org.othello.id}"))
    ok(owner.post(f"users/{org.othello.id}/reactivate"))
    assert web.get("users/me").status_code == 401
    fresh = SessionClient.signed_in(flask_client, "othello@zulip.example", PASSWORD)
    ok(fresh.get("users/me"))


def test_json_api_needs_the_session(org, flask_client):
    """Does /json answer as /api/v1 with a session, 401 without one, and without the Basic challenge
    that would make a browser open its own password dialog?"""
    response = flask_client.get("/json/users/me")
    assert response.status_code == 401 and response.get_json()["code"] == "UNAUTHORIZED"
    assert "WWW-Authenticate" not in response.headers
    web = SessionClient.signed_in(flask_client, "hamlet@zulip.example", PASSWORD)
    assert ok(web.get("users/me"))["user_id"] == org.hamlet.id


def test_api_v1_ignores_the_cookie_and_json_ignores_basic(org, flask_client):
    """Does /api/v1 stay HTTP Basic only (a session cookie alone is 401), and does /json ignore
    HTTP Basic credentials (no session, 401)?"""
    SessionClient.signed_in(flask_client, "hamlet@zulip.example", PASSWORD)
    err(flask_client.get("/api/v1/users/me"), 401, "UNAUTHORIZED")
    flask_client.delete_cookie(SESSION_COOKIE)
    response = flask_client.get("/json/users/me", headers=org.client(org.hamlet).headers)
    assert response.status_code == 401


def test_state_changes_need_the_csrf_token(org, flask_client):
    """Is a /json POST without the CSRF token, or with a wrong one, refused with 403 CSRF_FAILED
    and no message sent, while the same request with the token succeeds?"""
    web = SessionClient.signed_in(flask_client, "hamlet@zulip.example", PASSWORD)
    params = {"type": "stream", "to": "Denmark", "topic": "csrf", "content": "hello"}
    response = web.call("POST", "messages", params, csrf=False)
    assert response.status_code == 403
    assert response.get_json() == {"result": "error", "msg": "CSRF error: CSRF token missing.", "code": "CSRF_FAILED"}
    response = SessionClient(flask_client, "not-the-token").post("messages", **params)
    assert response.status_code == 403 and response.get_json()["msg"] == "CSRF error: CSRF token incorrect."
    with database.connection_context():
        assert not Message.select().where(Message.topic == "csrf").exists()
    message_id = ok(web.post("messages", **params))["id"]
    assert ok(org.client(org.othello).get(f"messages/{message_id}"))["message"]["content"] == "<p>hello</p>"


def test_events_over_json(org, flask_client):
    """Can the page register an event queue and long-poll it under /json with its session, and is
    a poll without a session refused?"""
    web = SessionClient.signed_in(flask_client, "hamlet@zulip.example", PASSWORD)
    queue_id = ok(web.post("register", event_types=["message"], apply_markdown=True))["queue_id"]
    ok(org.client(org.othello).post("messages", type="stream", to="Denmark", topic="t", content="live"))
    events = ok(web.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True))["events"]
    assert [e["message"]["content"] for e in events if e["type"] == "message"] == ["<p>live</p>"]
    flask_client.delete_cookie(SESSION_COOKIE)
    response = flask_client.get("/json/events", query_string={"queue_id": queue_id, "dont_block": "true"})
    assert response.status_code == 401


def test_logout_ends_the_session(org, flask_client):
    """Does logging out (with the CSRF token) end the session on the server, so the old cookie
    no longer works even if a browser kept it?"""
    web = SessionClient.signed_in(flask_client, "hamlet@zulip.example", PASSWORD)
    old_cookie = session_cookie(flask_client).value
    response = flask_client.post("/accounts/logout")
    assert response.status_code == 403  # no CSRF token: not logged out
    ok(web.get("users/me"))
    response = flask_client.post("/accounts/logout", headers={"X-CSRFToken": web.csrf_token})
    assert response.status_code == 200
    assert session_cookie(flask_client) is None
    flask_client.set_cookie(SESSION_COOKIE, old_cookie)
    assert web.get("users/me").status_code == 401


def test_page_carries_the_csrf_token_only_when_signed_in(org, flask_client):
    """Is the page served at / with no CSRF token signed out, the session's token signed in, and
    headers that keep it out of caches and forbid inline scripts?"""
    page = flask_client.get("/")
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert 'name="csrf-token" content=""' in page.text
    web = SessionClient.signed_in(flask_client, "hamlet@zulip.example", PASSWORD)
    page = flask_client.get("/")
    assert f'name="csrf-token" content="{web.csrf_token}"' in page.text
    assert page.headers["Cache-Control"] == "no-store"
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert "unsafe-inline" not in page.headers["Content-Security-Policy"].split("script-src")[1].split(";")[0]


def test_downloads_with_the_session(org, flask_client):
    """Can the signed-in browser load a file linked from a message it may read, and an image
    preview (/thumbnail), with its cookie alone, and not a file it may not read?"""
    client = org.client(org.hamlet)
    url = ok(flask_client.post("/api/v1/user_uploads", headers=client.headers,
                               data={"file": (io.BytesIO(b"\x89PNG\r\n"), "pic.png")},
                               content_type="multipart/form-data"))["url"]
    ok(client.post("messages", type="stream", to="Denmark", topic="files", content=f"[pic]({url})"))
    # /thumbnail redirects only to images previewed in messages the user may read.
    ok(client.post("messages", type="stream", to="Denmark", topic="files", content="https://example.com/a.png"))
    private = ok(flask_client.post("/api/v1/user_uploads", headers=client.headers,
                                   data={"file": (io.BytesIO(b"secret"), "s.txt")},
                                   content_type="multipart/form-data"))["url"]
    preview = "/thumbnail?url=https%3A%2F%2Fexample.com%2Fa.png&size=thumbnail"
    assert flask_client.get(preview).status_code == 401
    SessionClient.signed_in(flask_client, "othello@zulip.example", PASSWORD)
    assert flask_client.get(url).data == b"\x89PNG\r\n"
    assert flask_client.get(private).status_code == 404
    # An image preview's /thumbnail follows the session too.
    response = flask_client.get(preview)
    assert response.status_code == 302 and response.headers["Location"] == "https://example.com/a.png"


def test_emoji_names_file_matches_the_renderer(org, flask_client):
    """Does the emoji name file list the names the renderer and reactions accept (a name from it
    reacts, with the code the file gives)?"""
    table = flask_client.get("/webclient/emoji.json").get_json()
    assert table["smile"] and table["thumbs_up"] and len(table) > 1500
    web = SessionClient.signed_in(flask_client, "hamlet@zulip.example", PASSWORD)
    message_id = ok(web.post("messages", type="stream", to="Denmark", topic="r", content="x"))["id"]
    ok(web.post(f"messages/{message_id}/reactions", emoji_name="thumbs_up"))
    reactions = ok(web.get(f"messages/{message_id}"))["message"]["reactions"]
    assert [(r["emoji_name"], r["emoji_code"]) for r in reactions] == [("thumbs_up", table["thumbs_up"])]
    rendered = ok(web.post("messages/render", content=":smile:"))["rendered"]
    assert table["smile"] in rendered


def test_header_only_session_check(org, flask_client):
    """Does the session check for handlers outside Flask (headers only) accept the page's cookie
    with its CSRF token, and refuse a missing token, a wrong one and a missing cookie?"""
    import pytest

    from chat_appliance.lib.errors import JsonableError
    from chat_appliance.web.sessions import authenticate_session_headers

    web = SessionClient.signed_in(flask_client, "hamlet@zulip.example", PASSWORD)
    cookie = f"other=1; {SESSION_COOKIE}={session_cookie(flask_client).value}"
    with database.connection_context():
        assert authenticate_session_headers({"cookie": cookie, "x-csrftoken": web.csrf_token}).id == org.hamlet.id
        for headers, status in (({"cookie": cookie}, 403), ({"cookie": cookie, "x-csrftoken": "nope"}, 403),
                                ({"x-csrftoken": web.csrf_token}, 401)):
            with pytest.raises(JsonableError) as raised:
                authenticate_session_headers(headers)
            assert raised.value.http_status == status


def make_link(org, **params):
    link = ok(org.client(org.owner).post("invites/multiuse", stream_ids=[org.denmark.id], **params))["invite_link"]
    return link.rsplit("/join/", 1)[1]


def test_join_with_an_invitation_link(org, flask_client):
    """Does the sign-up page's API show the organization for a valid link, create the account
    from an email, a name and a password (with the invitation's channels), and sign the person
    in with a session?"""
    key = make_link(org)
    info = flask_client.get(f"/accounts/join/{key}").get_json()
    assert info["result"] == "success" and info["realm_name"] == org.realm.name and info["email"] is None
    response = flask_client.post(f"/accounts/join/{key}", headers={"X-Requested-With": "XMLHttpRequest"},
                                 data={"email": "newcomer@zulip.example", "full_name": "New Comer",
                                       "password": "a fine password"})
    body = response.get_json()
    assert response.status_code == 200 and body["result"] == "success", body
    web = SessionClient(flask_client, body["csrf_token"])
    me = ok(web.get("users/me"))
    assert me["email"] == "newcomer@zulip.example" and me["full_name"] == "New Comer"
    subscribed = [s["name"] for s in ok(web.get("users/me/subscriptions"))["subscriptions"]]
    assert "Denmark" in subscribed


def test_join_refusals(org, flask_client, mail):
    """Are an unknown key, a revoked link, an email invitation used twice and a sign-up without the
    X-Requested-With header refused, creating no account?"""
    from chat_appliance.models import UserProfile

    headers = {"X-Requested-With": "XMLHttpRequest"}
    data = {"email": "someone@zulip.example", "full_name": "Some One", "password": "a fine password"}
    assert flask_client.get("/accounts/join/nope").status_code == 400
    assert flask_client.post("/accounts/join/nope", headers=headers, data=data).status_code == 400
    key = make_link(org)
    assert flask_client.post(f"/accounts/join/{key}", data=data).status_code == 403
    invite_id = [i for i in ok(org.client(org.owner).get("invites"))["invites"] if i["is_multiuse"]][0]["id"]
    ok(org.client(org.owner).delete(f"invites/multiuse/{invite_id}"))
    assert flask_client.post(f"/accounts/join/{key}", headers=headers, data=data).status_code == 400
    ok(org.client(org.owner).post("invites", invitee_emails="once@zulip.example", stream_ids=[org.denmark.id]))
    from chat_appliance.models import Invitation

    with database.connection_context():
        email_key = Invitation.get(Invitation.email == "once@zulip.example").key
    once = dict(data, email="once@zulip.example")
    assert flask_client.post(f"/accounts/join/{email_key}", headers=headers, data=once).status_code == 200
    assert flask_client.post(f"/accounts/join/{email_key}", headers=headers, data=once).status_code == 400
    with database.connection_context():
        assert not UserProfile.select().where(UserProfile.email == "someone@zulip.example").exists()


def test_page_says_whether_the_server_sends_email(org, app, flask_client):
    """Does the page tell its script whether this server sends email (the invitation screen
    offers invitations by email only then), following the configuration at each request?"""
    app.config["EMAIL_HOST"] = None
    assert '<meta name="email-configured" content="0">' in flask_client.get("/").text
    app.config["EMAIL_HOST"] = "127.0.0.1"
    assert '<meta name="email-configured" content="1">' in flask_client.get("/").text


def test_json_routes_as_api_v1_for_unknown_paths_and_methods(org, flask_client):
    """/json/... is matched as /api/v1/... (one URL map for both): is an unknown /json path
    Zulip's 404 envelope, and a wrong method 405 naming the allowed ones, as under /api/v1?"""
    web = SessionClient.signed_in(flask_client, "hamlet@zulip.example", PASSWORD)
    for prefix in ("/json/", "/api/v1/"):
        response = flask_client.get(prefix + "no_such_endpoint")
        assert response.status_code == 404 and response.get_json()["result"] == "error", prefix
    response = web.call("PUT", "users/me")
    assert response.status_code == 405 and "GET" in response.headers["Allow"]
    # The path a view sees stays the one sent: /json requests are told apart by it.
    assert ok(web.get("users/me"))["user_id"] == org.hamlet.id
    rules = {rule.rule for rule in flask_client.application.url_map.iter_rules()}
    assert "/api/v1/users/me" in rules and not any(rule.startswith("/json/") for rule in rules)
