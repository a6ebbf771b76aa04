"""The access matrix of docs/security.md: who may read a private channel's messages, topics,
reactions, history, uploads and events, through every route that can reveal them.

The channel `secret` is private with protected history; Hamlet and Iago are subscribed. Every
reader below is refused on every route, and Hamlet (the control) is served on every route, so each
check can fail."""

import io

import pytest

from chat_appliance.actions.channels import subscribe_users_to_streams
from chat_appliance.actions.users import do_deactivate_user
from chat_appliance.models import database

from ..support.helpers import ApiClient, err, ok

SECRET_TOPIC = "hidden plans"
WORD = "zanzibar"


@pytest.fixture
def secret(org):
    """A message (with an upload and a reaction) in the private channel, and the readers."""
    hamlet = org.client(org.hamlet)
    upload = org.flask_client.post("/api/v1/user_uploads", headers=hamlet.headers,
                                   data={"file": (io.BytesIO(b"secret file"), "plan.txt")},
                                   content_type="multipart/form-data")
    url = ok(upload)["url"]
    message_id = ok(hamlet.post("messages", type="stream", to="secret", topic=SECRET_TOPIC,
                                content=f"{WORD} [plan]({url})"))["id"]
    ok(hamlet.post(f"messages/{message_id}/reactions", emoji_name="smile"))
    ok(hamlet.patch(f"messages/{message_id}", content=f"{WORD} edited [plan]({url})"))
    with database.connection_context():
        # Shiva joins after the message: the protected history stays closed to him.
        subscribe_users_to_streams([org.secret], [org.moderator])
    return {"id": message_id, "url": url}


def message_ids(response):
    return [m["id"] for m in ok(response)["messages"]]


def visible_routes(org, client, secret):
    """For each route, whether it revealed the secret message to `client`."""
    mid, stream_id = secret["id"], org.secret.id
    fetch = {"anchor": "newest", "num_before": 50, "num_after": 50}
    found = {}
    found["message_ids"] = mid in message_ids(client.get("messages", message_ids=[mid]))
    found["search"] = mid in message_ids(client.get("messages", **fetch,
                                                    narrow=[{"operator": "search", "operand": WORD}]))
    found["near"] = mid in message_ids(client.get("messages", anchor=mid, num_before=5, num_after=5,
                                                  narrow=[{"operator": "near", "operand": mid}]))
    found["with"] = mid in message_ids(client.get("messages", **fetch,
                                                  narrow=[{"operator": "with", "operand": mid}]))
    found["id"] = mid in message_ids(client.get("messages", **fetch, narrow=[{"operator": "id", "operand": mid}]))
    channel = client.get("messages", **fetch, narrow=[{"operator": "channel", "operand": stream_id}])
    found["channel"] = channel.status_code == 200 and mid in message_ids(channel)
    found["single"] = client.get(f"messages/{mid}").status_code == 200
    found["history"] = client.get(f"messages/{mid}/history").status_code == 200
    topics = client.get(f"users/me/{stream_id}/topics")
    found["topics"] = topics.status_code == 200 and SECRET_TOPIC in [t["name"] for t in topics.get_json()["topics"]]
    matched = client.get("messages/matches_narrow", msg_ids=[mid], narrow=[{"operator": "search", "operand": WORD}])
    found["matches_narrow"] = str(mid) in ok(matched)["messages"]
    found["reaction"] = client.post(f"messages/{mid}/reactions", emoji_name="tada").status_code == 200
    found["upload"] = org.flask_client.get(secret["url"], headers=client.headers).status_code == 200
    return found


READERS = {
    "guest": "guest",
    "member": "othello",
    "bot": "bot",
    "owner (not subscribed)": "owner",
    "late subscriber (protected history)": "moderator",
}


@pytest.mark.parametrize("reader", sorted(READERS))
def test_readers_outside_the_channel_see_nothing(org, secret, reader):
    """Does a reader who may not read the channel's history get the message through no route?"""
    found = visible_routes(org, org.client(getattr(org, READERS[reader])), secret)
    assert not any(found.values()), {route: seen for route, seen in found.items() if seen}


def test_a_subscriber_sees_it_everywhere(org, secret):
    """Does the control, a subscriber who received the message, get it through every route (so
    each check above can fail)?"""
    found = visible_routes(org, org.client(org.hamlet), secret)
    assert all(found.values()), {route: seen for route, seen in found.items() if not seen}


def test_deactivated_users_and_outsiders_are_refused(org, secret, flask_client):
    """Are a deactivated account's key and requests without credentials refused on every route,
    the upload included?"""
    cordelia = org.client(org.cordelia)
    with database.connection_context():
        do_deactivate_user(org.cordelia)
    outsider = ApiClient(flask_client, None, None)
    wrong = ApiClient(flask_client, "someone@elsewhere.example", "x" * 32)
    mid = secret["id"]
    for client, status, code in ((cordelia, 401, "USER_DEACTIVATED"), (outsider, 401, "UNAUTHORIZED"),
                                 (wrong, 401, "INVALID_API_KEY")):
        err(client.get("messages", message_ids=[mid]), status, code)
        err(client.get(f"messages/{mid}"), status, code)
        err(client.get(f"messages/{mid}/history"), status, code)
        err(client.get(f"users/me/{org.secret.id}/topics"), status, code)
        err(client.post("register", all_public_streams=True), status, code)
        assert flask_client.get(secret["url"], headers=client.headers).status_code in (401, 404)


def test_events_with_all_public_streams(org, secret):
    """Does a queue registered with all_public_streams get public channels' messages but never a
    private channel's it is not subscribed to, and are guests refused all_public_streams?"""
    err(org.client(org.guest).post("register", all_public_streams=True), 400, "BAD_REQUEST")
    queues = {}
    for name in ("othello", "owner", "bot", "moderator", "hamlet"):
        client = org.client(getattr(org, name))
        queues[name] = (client, ok(client.post("register", event_types=["message"], all_public_streams=True))["queue_id"])
    hamlet = org.client(org.hamlet)
    private_id = ok(hamlet.post("messages", type="stream", to="secret", topic=SECRET_TOPIC, content="new secret"))["id"]
    public_id = ok(hamlet.post("messages", type="stream", to="Verona", topic="open", content="hello all"))["id"]
    for name, (client, queue_id) in queues.items():
        events = ok(client.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True))["events"]
        received = {e["message"]["id"] for e in events if e["type"] == "message"}
        assert public_id in received, name
        # Only subscribers get the private one: Hamlet (sender) and Shiva (subscribed now).
        assert (private_id in received) == (name in ("hamlet", "moderator")), name
