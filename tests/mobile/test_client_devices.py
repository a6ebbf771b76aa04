"""POST /register_client_device and /remove_client_device, which the mobile app calls."""

from ..support.flutter_app import app_client, app_register, problems_of
from ..support.helpers import err, get_events, ok, register


def test_register_and_remove_a_device(org):
    """Does a registered device get an id, show in /register's devices with the keys the app
    reads, reach the user's other clients as device add/remove, and go on removal?"""
    hamlet = org.client(org.hamlet)
    queue_id = register(hamlet, event_types=["device"])["queue_id"]
    device_id = ok(hamlet.post("register_client_device"))["device_id"]
    state = app_register(app_client(org, org.hamlet))
    assert list(state["devices"]) == [str(device_id)]
    assert problems_of(state["devices"][str(device_id)], "ClientDevice", "devices") == []
    assert state["devices"][str(device_id)]["push_token_id"] is None
    err(org.client(org.othello).post("remove_client_device", device_id=device_id), 400, "BAD_REQUEST",
        "Invalid device ID")
    ok(hamlet.post("remove_client_device", device_id=device_id))
    assert register(hamlet, fetch_event_types=["device"])["devices"] == {}
    events = get_events(hamlet, queue_id, validate=False)
    assert [(e["type"], e["op"], e["device_id"]) for e in events] == [("device", "add", device_id),
                                                                      ("device", "remove", device_id)]
