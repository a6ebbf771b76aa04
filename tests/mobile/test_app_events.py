"""The events the Zulip mobile app handles, sent when Zulip sends them and decoded with the
app's keys (tests/support/data/flutter_keys.json): presence and every kind of realm_user update."""

import io

from chat_appliance.actions.users import do_set_permission
from chat_appliance.models import database

from ..support.flutter_app import KEYS, app_client, app_register, problems_of
from ..support.helpers import PNG, err, get_events, ok, register

LAST_SEEN = {}


def app_events(client, queue_id, kind):
    """The queue's new events of this kind ("type" or "type/op"), each checked against the app's class."""
    found = []
    events = get_events(client, queue_id, last_event_id=LAST_SEEN.get(queue_id, -1))
    if events:
        LAST_SEEN[queue_id] = events[-1]["id"]
    for event in events:
        name = event["type"] if event["type"] in KEYS["events"] else f"{event['type']}/{event.get('op')}"
        if name == kind:
            assert problems_of(event, KEYS["events"][kind], kind) == [], event
            found.append(event)
    return found


def test_presence_events_follow_zulips_rules(org):
    """Is a presence event sent when a user comes online and when an idle user becomes active,
    but not for the pings of someone already known active, with the keys the app reads?"""
    hamlet = org.client(org.hamlet)
    queue_id = app_register(app_client(org, org.hamlet))["queue_id"]
    othello = org.client(org.othello)
    ok(othello.post("users/me/presence", status="idle"))
    [online] = app_events(hamlet, queue_id, "presence")
    assert online["user_id"] == org.othello.id and online["presence"]["website"]["status"] == "idle"
    ok(othello.post("users/me/presence", status="active"))
    [active] = app_events(hamlet, queue_id, "presence")
    assert active["presence"]["website"]["status"] == "active"
    ok(othello.post("users/me/presence", status="active"))
    ok(othello.post("users/me/presence", status="idle"))
    assert app_events(hamlet, queue_id, "presence") == []


def test_realm_user_update_for_each_change(org, app):
    """Does every change of a person the app shows (name, avatar, role, timezone, email, custom
    profile field, bot owner) reach others as realm_user update with the app's keys?"""
    watcher = org.client(org.cordelia)
    queue_id = app_register(app_client(org, org.cordelia))["queue_id"]
    hamlet = org.client(org.hamlet)

    def person_updates():
        return [e["person"] for e in app_events(watcher, queue_id, "realm_user/update")]

    ok(hamlet.patch("settings", full_name="Prince Hamlet"))
    assert person_updates() == [{"user_id": org.hamlet.id, "full_name": "Prince Hamlet"}]

    upload = org.flask_client.post("/api/v1/users/me/avatar", headers=hamlet.headers,
                                   data={"file": (io.BytesIO(PNG), "me.png")}, content_type="multipart/form-data")
    ok(upload)
    [avatar] = [p for p in person_updates() if "avatar_url" in p]
    assert avatar["user_id"] == org.hamlet.id and avatar["avatar_version"] >= 2 and avatar["avatar_url"]

    ok(org.client(org.owner).patch(f"users/{org.hamlet.id}", role=300))
    assert person_updates() == [{"user_id": org.hamlet.id, "role": 300}]

    ok(hamlet.patch("settings", timezone="Europe/Copenhagen"))
    assert person_updates() == [{"user_id": org.hamlet.id, "timezone": "Europe/Copenhagen"}]

    with database.connection_context():
        do_set_permission(org.owner, "can_change_user_emails", True)
    ok(org.client(org.owner).patch(f"users/{org.hamlet.id}", new_email="prince@zulip.example"))
    assert {"user_id": org.hamlet.id, "new_email": "prince@zulip.example"} in person_updates()

    field_id = ok(org.client(org.admin).post("realm/profile_fields", name="Team", hint="", field_type=1))["id"]
    app_events(watcher, queue_id, "custom_profile_fields")
    ok(org.client(org.admin).patch(f"users/{org.hamlet.id}", profile_data=[{"id": field_id, "value": "Elsinore"}]))
    [field] = person_updates()
    assert field["custom_profile_field"]["id"] == field_id and field["custom_profile_field"]["value"] == "Elsinore"

    ok(org.client(org.admin).patch(f"bots/{org.bot.id}", bot_owner_id=org.othello.id))
    assert person_updates() == [{"user_id": org.bot.id, "bot_owner_id": org.othello.id}]


def test_bot_owner_change_moves_the_bot(org):
    """Does giving a bot away tell the old owner it is gone (realm_bot delete), the new owner it
    is theirs (realm_bot add), and refuse a non-owner?"""
    old = org.client(org.hamlet)
    new = org.client(org.othello)
    old_queue = register(old, event_types=["realm_bot"])["queue_id"]
    new_queue = register(new, event_types=["realm_bot"])["queue_id"]

    err(org.client(org.cordelia).patch(f"bots/{org.bot.id}", bot_owner_id=org.cordelia.id), 400, "BAD_REQUEST")
    ok(old.patch(f"bots/{org.bot.id}", bot_owner_id=org.othello.id))
    assert [(e["op"], e["bot"]["user_id"]) for e in get_events(old, old_queue)] == [("delete", org.bot.id)]
    [added] = get_events(new, new_queue)
    assert added["op"] == "add" and added["bot"]["user_id"] == org.bot.id and added["bot"]["owner_id"] == org.othello.id
