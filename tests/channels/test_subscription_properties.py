"""POST /users/me/subscriptions/properties and its subscription update events."""

from ..support.helpers import err, get_events, ok, register


def my_sub(org, user, stream):
    subs = ok(org.client(user).get("users/me/subscriptions"))["subscriptions"]
    return next(s for s in subs if s["stream_id"] == stream.id)


def test_update_properties_and_events(org):
    """Are colour, pinning and notification settings stored and announced to the user's own
    queues as `subscription` `op: update` events?"""
    client = org.client(org.hamlet)
    queue = register(client, event_types=["subscription"])["queue_id"]
    other = register(org.client(org.othello), event_types=["subscription"])["queue_id"]
    ok(client.post("users/me/subscriptions/properties", subscription_data=[
        {"stream_id": org.denmark.id, "property": "color", "value": "#AABBCC"},
        {"stream_id": org.denmark.id, "property": "pin_to_top", "value": True},
        {"stream_id": org.verona.id, "property": "desktop_notifications", "value": False},
        {"stream_id": org.verona.id, "property": "wildcard_mentions_notify", "value": True},
    ]))
    denmark = my_sub(org, org.hamlet, org.denmark)
    assert denmark["color"] == "#aabbcc" and denmark["pin_to_top"] is True
    verona = my_sub(org, org.hamlet, org.verona)
    assert verona["desktop_notifications"] is False and verona["wildcard_mentions_notify"] is True
    events = get_events(client, queue)
    assert [(e["op"], e["stream_id"], e["property"], e["value"]) for e in events] == [
        ("update", org.denmark.id, "color", "#aabbcc"),
        ("update", org.denmark.id, "pin_to_top", True),
        ("update", org.verona.id, "desktop_notifications", False),
        ("update", org.verona.id, "wildcard_mentions_notify", True),
    ]
    assert get_events(org.client(org.othello), other) == []


def test_muting_sends_the_legacy_in_home_view_event_too(org):
    """Does muting (by is_muted, or by the legacy inverse in_home_view) store is_muted and send
    both the is_muted and the in_home_view update, the latter being what zulip-terminal reads?"""
    client = org.client(org.hamlet)
    queue = register(client, event_types=["subscription"])["queue_id"]
    ok(client.post("users/me/subscriptions/properties",
                   subscription_data=[{"stream_id": org.denmark.id, "property": "is_muted", "value": True}]))
    sub = my_sub(org, org.hamlet, org.denmark)
    assert sub["is_muted"] is True and sub["in_home_view"] is False
    ok(client.post("users/me/subscriptions/properties",
                   subscription_data=[{"stream_id": org.denmark.id, "property": "in_home_view", "value": True}]))
    assert my_sub(org, org.hamlet, org.denmark)["is_muted"] is False
    events = get_events(client, queue)
    assert [(e["property"], e["value"]) for e in events] == [
        ("is_muted", True), ("in_home_view", False), ("is_muted", False), ("in_home_view", True)]


def test_errors_change_nothing(org):
    """Are an unknown property, a bad colour, a non-boolean, an unknown channel and a channel I
    am not subscribed to refused, and does a refused request change nothing?"""
    client = org.client(org.hamlet)

    def post(*data):
        return client.post("users/me/subscriptions/properties", subscription_data=list(data))

    good = {"stream_id": org.denmark.id, "property": "pin_to_top", "value": True}
    err(post(good, {"stream_id": org.denmark.id, "property": "nope", "value": 1}), 400, "BAD_REQUEST",
        "Unknown subscription property: nope")
    err(post({"stream_id": org.denmark.id, "property": "color", "value": "red"}), 400, "BAD_REQUEST",
        "color is not a valid hex color code")
    err(post({"stream_id": org.denmark.id, "property": "is_muted", "value": "yes"}), 400, "BAD_REQUEST",
        "is_muted is not a boolean")
    err(post(good, {"stream_id": 9999, "property": "pin_to_top", "value": True}), 400, "BAD_REQUEST",
        "Invalid channel ID")
    err(org.client(org.cordelia).post("users/me/subscriptions/properties", subscription_data=[good]), 400,
        "BAD_REQUEST", f"Not subscribed to channel ID {org.denmark.id}")
    err(post({"stream_id": org.denmark.id, "value": True}), 400, "BAD_REQUEST",
        "property key is missing from subscription_data[0]")
    assert my_sub(org, org.hamlet, org.denmark)["pin_to_top"] is False
