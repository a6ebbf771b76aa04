"""A queue's narrow: one the filter cannot evaluate is refused at /register, and one that reaches
the filter anyway costs no other queue its events."""

from ..support.helpers import err, ok, queue_manager


def send(client, stream, topic, content):
    return ok(client.post("messages", type="stream", to=stream, topic=topic, content=content))["id"]


def test_bad_queue_narrow_refused_and_delivery_isolated(app, org):
    """Is a queue narrow the filter cannot evaluate refused at /register, and if one reaches the
    filter anyway, do the queues after it still get the message?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post("register", narrow=[["stream", "\u00b2"]]), 400, "BAD_REQUEST")
    err(hamlet.post("register", narrow=[["dm", ["not an id"]]]), 400, "BAD_REQUEST")
    # A queue whose filter raises (bypassing /register's checks), registered first.
    queues = queue_manager(app)
    broken = queues.register(user_id=org.othello.id, realm_id=org.realm.id, user_email=org.othello.email,
                             event_types=["message"], narrow=[("dm", ["x"])], apply_markdown=True,
                             client_gravatar=False, all_public_streams=False, client_capabilities={})
    othello = org.client(org.othello)
    queue_id = ok(othello.post("register", event_types=["message"]))["queue_id"]
    message_id = send(hamlet, "Denmark", "t", "hello")
    events = ok(othello.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True))["events"]
    assert [e["message"]["id"] for e in events if e["type"] == "message"] == [message_id]
    assert broken.id in queues.queues
