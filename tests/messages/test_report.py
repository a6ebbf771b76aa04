"""POST /messages/{id}/report: the Notification Bot's report in the moderation request channel."""

from chat_appliance.models import Realm, database

from ..support.helpers import err, ok, send


def set_moderation_channel(stream_id):
    with database.connection_context():
        Realm.update(moderation_request_channel_id=stream_id).execute()


def reports(client, stream="secret"):
    narrow = [["stream", stream], ["sender", "notification-bot@zulip.example"]]
    body = ok(client.get("messages", anchor="newest", num_before=10, num_after=0, narrow=narrow,
                         apply_markdown=False))
    return body["messages"]


def test_report_without_moderation_channel(org):
    """Is reporting refused with BAD_REQUEST while no moderation request channel is configured?"""
    mid = send(org.client(org.hamlet))
    err(org.client(org.othello).post(f"messages/{mid}/report", report_type="spam"), 400, "BAD_REQUEST",
        "Message reporting is not enabled in this organization.")


def test_report_posts_notification(org):
    """Does a report post, as the Notification Bot in the moderation channel, who reported whose
    message for what reason, the notes, a quote of the message and a link to it?"""
    set_moderation_channel(org.secret.id)
    mid = send(org.client(org.hamlet), content="buy cheap watches")
    ok(org.client(org.othello).post(f"messages/{mid}/report", report_type="spam", description="obvious spam"))
    [report] = reports(org.client(org.admin))
    assert report["subject"] == "King Hamlet moderation"
    text = report["content"]
    assert f"@_**{org.othello.full_name}|{org.othello.id}** reported" in text
    assert f"sent by @_**King Hamlet|{org.hamlet.id}**" in text
    assert "- Reason: **Spam**" in text and "obvious spam" in text
    assert "````quote\nbuy cheap watches\n````" in text
    assert f"/#narrow/channel/{org.denmark.id}-Denmark/topic/castle/near/{mid}" in text


def test_quote_survives_fences_in_the_message(org):
    """Is the reported message quoted inside a fence longer than any fence it contains?"""
    set_moderation_channel(org.secret.id)
    mid = send(org.client(org.hamlet), content="```\ncode\n```")
    ok(org.client(org.othello).post(f"messages/{mid}/report", report_type="norms"))
    assert "````quote\n```\ncode\n```\n````" in reports(org.client(org.admin))[0]["content"]


def test_report_type_and_description_rules(org):
    """Is 'other' without a description refused, an unknown type or a description over 1000
    characters refused, and a report of a message one cannot read 'Invalid message(s)'?"""
    set_moderation_channel(org.secret.id)
    mid = send(org.client(org.hamlet))
    othello = org.client(org.othello)
    err(othello.post(f"messages/{mid}/report", report_type="other"), 400, "BAD_REQUEST", "An explanation is required.")
    err(othello.post(f"messages/{mid}/report", report_type="other", description="  "), 400, "BAD_REQUEST")
    err(othello.post(f"messages/{mid}/report", report_type="boring"), 400, "BAD_REQUEST")
    err(othello.post(f"messages/{mid}/report", report_type="spam", description="x" * 1001), 400, "BAD_REQUEST")
    dm = ok(org.client(org.hamlet).post("messages", type="direct", to=[org.cordelia.id], content="x"))["id"]
    err(othello.post(f"messages/{dm}/report", report_type="spam"), 400, "BAD_REQUEST", "Invalid message(s)")
    ok(othello.post(f"messages/{mid}/report", report_type="other", description="rude"))
    assert "- Reason: **Other reason**" in reports(org.client(org.admin))[0]["content"]
