"""Removing the `read` flag by narrow (POST /messages/flags/narrow): a channel the user never
joined is reported, not changed."""

from ..support.helpers import ok


def test_unread_by_narrow_in_never_subscribed_channel_is_reported(org):
    """Does removing `read` over a channel the user never joined skip its messages and list the channel?"""
    for content in ("one", "two"):
        ok(org.client(org.cordelia).post("messages", type="stream", to="Verona", topic="t", content=content))
    body = ok(org.client(org.othello).post("messages/flags/narrow", anchor="newest", num_before=10, num_after=0,
                                           narrow=[{"operator": "channel", "operand": org.verona.id}],
                                           op="remove", flag="read"))
    assert body["ignored_because_not_subscribed_channels"] == [org.verona.id]
    assert body["updated_count"] == 0 and body["processed_count"] >= 2


def test_unread_by_narrow_in_subscribed_channel_lists_nothing(org):
    """Does the same request in a channel the user is in mark its messages unread and list no channel?"""
    msg = ok(org.client(org.hamlet).post("messages", type="stream", to="Denmark", topic="t", content="x"))["id"]
    ok(org.client(org.othello).post("messages/flags", messages=[msg], op="add", flag="read"))
    body = ok(org.client(org.othello).post("messages/flags/narrow", anchor="newest", num_before=10, num_after=0,
                                           narrow=[{"operator": "channel", "operand": org.denmark.id}],
                                           op="remove", flag="read"))
    assert body["ignored_because_not_subscribed_channels"] == [] and body["updated_count"] == 1
