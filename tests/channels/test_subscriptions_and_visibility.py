"""Channels and subscriptions, with the visibility rules for private channels and guests."""

from ..support.helpers import err, ok


def test_subscribe_creates_channel(org):
    """Does POST /users/me/subscriptions create a missing channel and subscribe the requester?"""
    client = org.client(org.othello)
    body = ok(client.post("users/me/subscriptions", subscriptions=[{"name": "new-one", "description": "Hi"}]))
    assert body["subscribed"] == {str(org.othello.id): ["new-one"]}
    assert body["already_subscribed"] == {}
    subs = ok(client.get("users/me/subscriptions"))["subscriptions"]
    new = next(s for s in subs if s["name"] == "new-one")
    assert new["description"] == "Hi" and new["creator_id"] == org.othello.id
    assert new["color"].startswith("#") and len(new["color"]) == 7


def test_subscribe_twice_reports_already(org):
    """Is an existing subscription reported under already_subscribed?"""
    body = ok(org.client(org.hamlet).post("users/me/subscriptions", subscriptions=[{"name": "Denmark"}]))
    assert body["already_subscribed"] == {str(org.hamlet.id): ["Denmark"]} and body["subscribed"] == {}


def test_subscribe_principals(org):
    """Can a member subscribe others (by email and by id)?"""
    body = ok(org.client(org.hamlet).post("users/me/subscriptions", subscriptions=[{"name": "Verona"}],
                                          principals=[org.othello.email]))
    assert body["subscribed"] == {str(org.othello.id): ["Verona"]}
    body = ok(org.client(org.hamlet).post("users/me/subscriptions", subscriptions=[{"name": "Denmark"}],
                                          principals=[org.cordelia.id]))
    assert body["subscribed"] == {str(org.cordelia.id): ["Denmark"]}


def test_unknown_principal(org):
    """Is an unknown principal refused without subscribing anyone?"""
    err(org.client(org.hamlet).post("users/me/subscriptions", subscriptions=[{"name": "Verona"}],
                                    principals=["ghost@zulip.example"]), 403, "UNAUTHORIZED_PRINCIPAL")


def test_private_channel_invisible_to_outsiders(org):
    """Does a non-subscriber see a private channel anywhere? (No, through every endpoint.)"""
    client = org.client(org.othello)
    names = [s["name"] for s in ok(client.get("streams"))["streams"]]
    assert "secret" not in names and "Denmark" in names
    err(client.get("get_stream_id", stream="secret"), 400, "BAD_REQUEST", "Invalid channel name 'secret'")
    err(client.get(f"streams/{org.secret.id}"), 400, "BAD_REQUEST", "Invalid channel ID")
    err(client.get(f"streams/{org.secret.id}/members"), 400, "BAD_REQUEST", "Invalid channel ID")
    # Nor by trying to join it: the same error as a channel one may not access.
    err(client.post("users/me/subscriptions", subscriptions=[{"name": "secret"}]), 400, "BAD_REQUEST",
        "Unable to access channel (secret).")


def test_private_channel_visible_to_subscribers(org):
    """Do subscribers see a private channel and its members?"""
    client = org.client(org.hamlet)
    assert ok(client.get("get_stream_id", stream="secret"))["stream_id"] == org.secret.id
    stream = ok(client.get(f"streams/{org.secret.id}"))["stream"]
    assert stream["invite_only"] is True and stream["history_public_to_subscribers"] is False
    assert ok(client.get(f"streams/{org.secret.id}/members"))["subscribers"] == sorted([org.admin.id, org.hamlet.id])


def test_guest_sees_only_subscribed_channels(org):
    """Does a guest see only the channels it is in, even public ones?"""
    client = org.client(org.guest)
    names = {s["name"] for s in ok(client.get("streams"))["streams"]}
    assert names == {"Verona", "general"}
    err(client.get("get_stream_id", stream="Denmark"), 400, "BAD_REQUEST")


def test_guest_cannot_create_channels(org):
    """Is channel creation refused to a guest, creating nothing?"""
    err(org.client(org.guest).post("users/me/subscriptions", subscriptions=[{"name": "guestland"}]), 400,
        "BAD_REQUEST", "Insufficient permission")
    names = {s["name"] for s in ok(org.client(org.owner).get("streams"))["streams"]}
    assert "guestland" not in names


def test_private_channel_creation(org):
    """Does invite_only create a private channel visible only to its subscribers?"""
    ok(org.client(org.othello).post("users/me/subscriptions", subscriptions=[{"name": "hush"}], invite_only=True))
    assert "hush" not in {s["name"] for s in ok(org.client(org.cordelia).get("streams"))["streams"]}
    assert "hush" in {s["name"] for s in ok(org.client(org.othello).get("streams"))["streams"]}


def test_unsubscribe(org):
    """Does DELETE /users/me/subscriptions remove and report removed/not_removed?"""
    client = org.client(org.hamlet)
    body = ok(client.delete("users/me/subscriptions", subscriptions=["Denmark"]))
    assert body == {"result": "success", "msg": "", "removed": ["Denmark"], "not_removed": []}
    body = ok(client.delete("users/me/subscriptions", subscriptions=["Denmark"]))
    assert body["not_removed"] == ["Denmark"]
    assert ok(client.get(f"streams/{org.denmark.id}/members"))["subscribers"] == sorted([org.othello.id, org.admin.id])


def test_unsubscribe_unknown_channel(org):
    """Is unsubscribing from a channel that does not exist an error?"""
    err(org.client(org.hamlet).delete("users/me/subscriptions", subscriptions=["nope"]), 400, "BAD_REQUEST")


def test_subscriptions_with_subscribers(org):
    """Does include_subscribers add each channel's subscriber ids?"""
    subs = ok(org.client(org.hamlet).get("users/me/subscriptions", include_subscribers="true"))["subscriptions"]
    denmark = next(s for s in subs if s["name"] == "Denmark")
    assert denmark["subscribers"] == sorted([org.hamlet.id, org.othello.id, org.admin.id])
    assert denmark["subscriber_count"] == 3


def test_get_stream_id_case_insensitive(org):
    """Does GET /get_stream_id find a channel regardless of case?"""
    assert ok(org.client(org.hamlet).get("get_stream_id", stream="denmark"))["stream_id"] == org.denmark.id


def test_include_all_needs_admin(org):
    """Is include_all_active refused to members and honoured for administrators?"""
    err(org.client(org.hamlet).get("streams", include_all_active=True), 400, "BAD_REQUEST")
    names = {s["name"] for s in ok(org.client(org.admin).get("streams", include_all_active=True))["streams"]}
    assert {"secret", "Denmark", "Verona", "general"} <= names


def test_channel_name_rules(org):
    """Are empty and over-long channel names refused?"""
    client = org.client(org.hamlet)
    err(client.post("users/me/subscriptions", subscriptions=[{"name": "  "}]), 400, "BAD_REQUEST")
    err(client.post("users/me/subscriptions", subscriptions=[{"name": "x" * 61}]), 400, "BAD_REQUEST")


def test_new_user_joins_default_channels(org):
    """Is a new account subscribed to the default channel (general)?"""
    body = ok(org.client(org.admin).post("users", email="newbie@zulip.example", password="pw123456",
                                         full_name="Newbie"))
    members = ok(org.client(org.admin).get(f"streams/{org.general.id}/members"))["subscribers"]
    assert body["user_id"] in members


def test_update_stream_name_and_description(org):
    """Can an administrator rename and describe a channel, with a clash refused, and do its
    viewers get stream update events with the rendered description?"""
    from ..support.helpers import get_events, register

    queue = register(org.client(org.othello), event_types=["stream"])["queue_id"]
    client = org.client(org.admin)
    ok(client.patch(f"streams/{org.denmark.id}", new_name="Danmark", description="**Hej**"))
    stream = ok(client.get(f"streams/{org.denmark.id}"))["stream"]
    assert stream["name"] == "Danmark" and stream["rendered_description"] == "<p><strong>Hej</strong></p>"
    events = get_events(org.client(org.othello), queue)
    assert {(e["property"], e["value"]) for e in events} == {("name", "Danmark"), ("description", "**Hej**")}
    err(client.patch(f"streams/{org.denmark.id}", new_name="verona"), 400, "BAD_REQUEST", "Channel 'verona' already exists")
    err(org.client(org.hamlet).patch(f"streams/{org.denmark.id}", description="x"), 400, "UNAUTHORIZED_PRINCIPAL")


def test_update_stream_privacy(org):
    """Does making a channel private hide it from non-subscribers (stream delete event) and keep
    shared history unless asked; does making it public again share history?"""
    from ..support.helpers import get_events, register

    queue = register(org.client(org.cordelia), event_types=["stream"])["queue_id"]
    client = org.client(org.admin)
    ok(client.patch(f"streams/{org.denmark.id}", is_private=True, history_public_to_subscribers=False))
    assert "Denmark" not in {s["name"] for s in ok(org.client(org.cordelia).get("streams"))["streams"]}
    assert ("stream", "delete") in [(e["type"], e["op"]) for e in get_events(org.client(org.cordelia), queue)]
    stream = ok(client.get(f"streams/{org.denmark.id}"))["stream"]
    assert stream["invite_only"] and not stream["history_public_to_subscribers"]
    ok(client.patch(f"streams/{org.denmark.id}", is_private=False))
    stream = ok(client.get(f"streams/{org.denmark.id}"))["stream"]
    assert not stream["invite_only"] and stream["history_public_to_subscribers"]


def test_update_stream_default_and_group_setting(org):
    """Do is_default_stream and a group permission setting apply, and is a private default refused?"""
    from chat_appliance.lib.groups import system_group
    from chat_appliance.models import database

    client = org.client(org.admin)
    ok(client.patch(f"streams/{org.verona.id}", is_default_stream=True))
    assert org.verona.id in [s["stream_id"] for s in ok(client.get("streams", include_default=True))["streams"]
                             if s["is_default"]]
    err(client.patch(f"streams/{org.secret.id}", is_default_stream=True), 400, "BAD_REQUEST")
    with database.connection_context():
        admins = system_group(org.realm.id, "role:administrators").id
    ok(client.patch(f"streams/{org.verona.id}", can_send_message_group={"new": admins}))
    err(org.client(org.cordelia).post("messages", type="stream", to="Verona", topic="t", content="x"), 400,
        "BAD_REQUEST", "You do not have permission to post in this channel.")
    err(client.patch(f"streams/{org.verona.id}", can_send_message_group=99999), 400, "BAD_REQUEST")
