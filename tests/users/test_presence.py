"""POST /users/me/presence, GET /realm/presence, GET /users/{id_or_email}/presence, and the
`presences` of /register."""

from chat_appliance.models import UserPresence

from ..support.helpers import err, get_events, ok, register


def test_update_presence_returns_legacy_presences_by_email(org):
    """Does a ping as zulip-terminal sends it (status=active, new_user_input=true) return every
    online user keyed by email, each with a `website` and an `aggregated` entry?"""
    ok(org.client(org.othello).post("users/me/presence", status="idle"))
    body = ok(org.client(org.hamlet).post("users/me/presence", status="active", new_user_input=True))
    assert set(body["presences"]) == {org.hamlet.email, org.othello.email}
    hamlet = body["presences"][org.hamlet.email]
    assert hamlet["aggregated"]["status"] == "active" and hamlet["website"]["status"] == "active"
    assert hamlet["website"]["client"] == "website" and hamlet["website"]["pushable"] is False
    assert body["presences"][org.othello.email]["aggregated"]["status"] == "idle"
    assert body["presence_last_update_id"] >= 2 and body["zephyr_mirror_active"] is False


def test_ping_only_and_modern_format(org):
    """Does ping_only return no presences, and do slim_presence / last_update_id give the modern
    format keyed by user id, last_update_id only the changes since?"""
    client = org.client(org.hamlet)
    body = ok(client.post("users/me/presence", status="active", ping_only=True))
    assert "presences" not in body
    slim = ok(client.post("users/me/presence", status="idle", slim_presence=True))
    entry = slim["presences"][str(org.hamlet.id)]
    assert entry["active_timestamp"] > 0 and entry["idle_timestamp"] >= entry["active_timestamp"]
    since = slim["presence_last_update_id"]
    ok(org.client(org.othello).post("users/me/presence", status="active"))
    changed = ok(client.post("users/me/presence", status="idle", last_update_id=since))
    assert set(changed["presences"]) == {str(org.othello.id), str(org.hamlet.id)}
    assert changed["presence_last_update_id"] > since


def test_stale_active_time_reads_idle(org):
    """Is a user whose last activity is older than the offline threshold reported idle?"""
    ok(org.client(org.hamlet).post("users/me/presence", status="active"))
    UserPresence.update(last_active_time=UserPresence.last_active_time - 1000).execute()
    presence = ok(org.client(org.othello).get("realm/presence"))["presences"][org.hamlet.email]
    assert presence["aggregated"]["status"] == "idle"


def test_get_user_presence(org):
    """Does GET /users/{id or email}/presence give status and timestamp per client, and an error
    for someone with no presence data?"""
    ok(org.client(org.hamlet).post("users/me/presence", status="active"))
    for key in (org.hamlet.email, str(org.hamlet.id)):
        presence = ok(org.client(org.othello).get(f"users/{key}/presence"))["presence"]
        assert set(presence) == {"website", "aggregated"}
        assert presence["aggregated"]["status"] == "active"
    err(org.client(org.hamlet).get(f"users/{org.othello.email}/presence"), 400, "BAD_REQUEST",
        f"No presence data for {org.othello.email}")
    err(org.client(org.hamlet).get("users/nobody@zulip.example/presence"), 400, "BAD_REQUEST", "No such user")


def test_presence_disabled_is_not_shared(org):
    """Is a user who turned presence_enabled off left out?"""
    org.othello.settings = {"presence_enabled": False}
    org.othello.save()
    ok(org.client(org.othello).post("users/me/presence", status="active"))
    assert ok(org.client(org.hamlet).get("realm/presence"))["presences"] == {}


def test_register_presences_and_the_online_event(org):
    """Does /register carry stored presences (legacy by email, modern with slim_presence), and
    does a user coming online send one presence event, not one per ping?"""
    ok(org.client(org.othello).post("users/me/presence", status="active"))
    state = register(org.client(org.hamlet), event_types=["presence"], fetch_event_types=["presence"])
    assert state["presences"][org.othello.email]["aggregated"]["status"] == "active"
    slim = register(org.client(org.hamlet), fetch_event_types=["presence"], slim_presence=True)
    assert set(slim["presences"]) == {str(org.othello.id)}
    ok(org.client(org.cordelia).post("users/me/presence", status="active"))
    ok(org.client(org.cordelia).post("users/me/presence", status="active"))
    [event] = get_events(org.client(org.hamlet), state["queue_id"])
    assert event["type"] == "presence" and event["user_id"] == org.cordelia.id
    assert event["email"] == org.cordelia.email
    assert event["presence"]["website"]["status"] == "active"
