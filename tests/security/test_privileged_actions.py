"""Actions above a user's role are refused: only owners deactivate owners, an administrator cannot
delete the topics of a private channel they cannot read, and a bot cannot create bots."""

from chat_appliance.actions.users import do_change_role
from chat_appliance.models import ROLE_OWNER, Message, database

from ..support.helpers import err, ok


def send(client, stream, topic, content):
    return ok(client.post("messages", type="stream", to=stream, topic=topic, content=content))["id"]


def test_only_owners_deactivate_owners(org):
    """May only an owner deactivate or reactivate an owner (an administrator may not)?"""
    with database.connection_context():
        do_change_role(org.cordelia, ROLE_OWNER)
    admin, owner = org.client(org.admin), org.client(org.owner)
    err(admin.delete(f"users/{org.cordelia.id}"), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner")
    ok(owner.delete(f"users/{org.cordelia.id}"))
    err(admin.post(f"users/{org.cordelia.id}/reactivate"), 400, "UNAUTHORIZED_PRINCIPAL",
        "Must be an organization owner")
    ok(owner.post(f"users/{org.cordelia.id}/reactivate"))
    ok(admin.delete(f"users/{org.othello.id}"))


def test_admin_cannot_delete_topics_of_unreadable_private_channels(org):
    """May an administrator who is not subscribed to a private channel delete its topics? (No:
    the messages stay.)"""
    hamlet = org.client(org.hamlet)
    ok(hamlet.post("users/me/subscriptions", subscriptions=[{"name": "hamlet-only"}], invite_only=True))
    stream_id = ok(hamlet.get("get_stream_id", stream="hamlet-only"))["stream_id"]
    message_id = send(hamlet, "hamlet-only", "plans", "secret plans")
    for user in (org.admin, org.owner):
        err(org.client(user).post(f"streams/{stream_id}/delete_topic", topic_name="plans"), 400, "BAD_REQUEST",
            "Invalid channel ID")
    with database.connection_context():
        assert Message.get_or_none(Message.id == message_id) is not None


def test_bots_cannot_create_bots(org):
    """Is a bot refused when it tries to create a bot?"""
    err(org.client(org.bot).post("bots", full_name="Spawn", short_name="spawn"), 400, "BAD_REQUEST",
        "This endpoint does not accept bot requests.")
