"""POST /realm/icon and DELETE /realm/icon: the organization's icon, set by administrators."""

import io

from ..support.helpers import err, get_events, ok, register

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


def upload_icon(org, user, content=PNG, files=1):
    data = {f"f{i}": (io.BytesIO(content), f"icon{i}.png") for i in range(files)}
    return org.flask_client.post("/api/v1/realm/icon", headers=org.client(user).headers, data=data,
                                 content_type="multipart/form-data")


def test_icon_upload_is_served_and_announced(org, flask_client):
    """Does an administrator's upload become the icon: a new realm_icon_url in /register, in
    /server_settings and in a realm event to members, the bytes served at that URL without
    credentials; and does DELETE go back to the default icon?"""
    hamlet = org.client(org.hamlet)
    queue_id = register(hamlet, event_types=["realm"])["queue_id"]
    before = register(hamlet, fetch_event_types=["realm"])["realm_icon_url"]
    url = ok(upload_icon(org, org.admin))["icon_url"]
    assert url != before and "/realm/icon.png?version=" in url
    state = register(hamlet, fetch_event_types=["realm"])
    assert state["realm_icon_url"] == url and state["realm_icon_source"] == "U"
    assert ok(flask_client.get("/api/v1/server_settings"))["realm_icon"] == url
    events = get_events(hamlet, queue_id)
    icon = [e for e in events if e["type"] == "realm" and e.get("property") == "icon"][0]
    assert icon["op"] == "update_dict" and icon["data"] == {"icon_url": url, "icon_source": "U"}
    path = url.split("://", 1)[1].split("/", 1)[1]
    response = flask_client.get("/" + path)
    assert response.status_code == 200 and response.mimetype == "image/png" and response.data == PNG
    ok(org.client(org.admin).delete("realm/icon"))
    state = register(hamlet, fetch_event_types=["realm"])
    assert state["realm_icon_source"] == "G" and state["realm_icon_url"].endswith("/static/webclient/realm-icon.png")
    assert flask_client.get("/" + path).status_code == 404


def test_icon_refusals_change_nothing(org):
    """Are a member's upload, no file, two files and a file that is not an image refused, leaving
    the icon as it was?"""
    before = register(org.client(org.hamlet), fetch_event_types=["realm"])["realm_icon_url"]
    err(upload_icon(org, org.hamlet), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")
    err(upload_icon(org, org.admin, files=0), 400, "BAD_REQUEST", "You must upload exactly one icon.")
    err(upload_icon(org, org.admin, files=2), 400, "BAD_REQUEST", "You must upload exactly one icon.")
    err(upload_icon(org, org.admin, content=b"<svg onload=alert(1)>"), 400, "BAD_REQUEST", "Invalid image format")
    err(org.client(org.hamlet).delete("realm/icon"), 400, "UNAUTHORIZED_PRINCIPAL",
        "Must be an organization administrator")
    assert register(org.client(org.hamlet), fetch_event_types=["realm"])["realm_icon_url"] == before
