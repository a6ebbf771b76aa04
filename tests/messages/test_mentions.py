"""Mentions in a sent message: a user group's mention flags its members, and @**topic** in a busy
topic needs the permission to mention everyone."""

from chat_appliance.models import database

from ..support.helpers import err, ok


def send(client, content="hi", stream="Denmark", topic="t", **extra):
    return ok(client.post("messages", type="stream", to=stream, topic=topic, content=content, **extra))["id"]


def flags(client, msg_id):
    return ok(client.get(f"messages/{msg_id}"))["message"]["flags"]


def test_group_mention_sets_mentioned_for_members(org):
    """Does @*group* set `mentioned` for the group's members who receive the message, and not others?"""
    group_id = ok(org.client(org.admin).post("user_groups/create", name="backstage", description="crew",
                                             members=[org.othello.id]))["group_id"]
    msg = send(org.client(org.hamlet), "@*backstage* places please")
    assert "mentioned" in flags(org.client(org.othello), msg)
    assert "mentioned" not in flags(org.client(org.admin), msg)
    assert f'data-user-group-id="{group_id}"' in ok(org.client(org.othello).get(f"messages/{msg}"))["message"]["content"]


def test_topic_wildcard_needs_permission_in_busy_topics(org, app):
    """Is @**topic** refused to members in a topic with more than 15 participants?"""
    from chat_appliance.actions.channels import subscribe_users_to_streams
    from chat_appliance.actions.messages import check_send_message
    from chat_appliance.actions.users import do_create_user

    with database.connection_context():
        extra = [do_create_user(org.realm, f"p{i}@zulip.example", "pw-long-enough", f"Player {i}",
                                password_method="pbkdf2:sha256:1") for i in range(16)]
        subscribe_users_to_streams([org.verona], extra)
        for user in extra:
            check_send_message(user, message_type="stream", to="Verona", topic="crowd", content="here",
                               client_name="test", limits=app.extensions["chat_appliance"].limits)
    err(org.client(org.hamlet).post("messages", type="stream", to="Verona", topic="crowd", content="@**topic** hi"),
        400, "TOPIC_WILDCARD_MENTION_NOT_ALLOWED")
    ok(org.client(org.hamlet).post("messages", type="stream", to="Verona", topic="quiet", content="@**topic** hi"))
