"""User administration: GET|PATCH /users/{email}, PATCH /users/{id}, DELETE /users/{id},
POST /users/{id}/reactivate, custom profile fields."""

from chat_appliance.actions.users import do_set_permission
from chat_appliance.db.connection import write_transaction
from chat_appliance.models import (
    Message,
    Reaction,
    Stream,
    UserMessage,
    UserProfile,
    database,
)
from chat_appliance.models import EMAIL_VISIBLE_ADMINS

from ..support.helpers import active_ids, err, ok


def hide_email(user):
    """Make the user's real address visible to administrators only."""
    from chat_appliance.actions.users import do_change_settings

    with database.connection_context():
        do_change_settings(UserProfile.get_by_id(user.id), {"email_address_visibility": EMAIL_VISIBLE_ADMINS})


def fetch(user_id):
    with database.connection_context():
        return UserProfile.get_by_id(user_id)


def test_get_user_by_real_email(org):
    """Does GET /users/{email} find a user by a visible real address?"""
    user = ok(org.client(org.hamlet).get("users/othello@zulip.example"))["user"]
    assert user["user_id"] == org.othello.id and user["delivery_email"] == "othello@zulip.example"


def test_get_user_by_hidden_real_email(org):
    """Is a real address the requester may not see refused, while an administrator finds it?"""
    hide_email(org.othello)
    err(org.client(org.hamlet).get("users/othello@zulip.example"), 400, "BAD_REQUEST", "No such user")
    user = ok(org.client(org.admin).get("users/othello@zulip.example"))["user"]
    assert user["user_id"] == org.othello.id


def test_get_user_by_placeholder_email(org):
    """Does the placeholder user{id}@host find every user, with delivery_email null when hidden?"""
    hide_email(org.othello)
    user = ok(org.client(org.hamlet).get(f"users/user{org.othello.id}@zulip.example"))["user"]
    assert user["user_id"] == org.othello.id
    assert user["delivery_email"] is None and user["email"] == f"user{org.othello.id}@zulip.example"


def test_get_bot_by_email_has_bot_fields(org):
    """Does a bot fetched by email carry bot_type, bot_owner_id and its delivery_email, without profile_data?"""
    user = ok(org.client(org.othello).get("users/hamlet-bot@zulip.example", include_custom_profile_fields=True))["user"]
    assert user["bot_type"] == 1 and user["bot_owner_id"] == org.hamlet.id
    assert user["delivery_email"] == "hamlet-bot@zulip.example" and "profile_data" not in user


def test_get_user_by_unknown_email(org):
    """Does an unknown address give 'No such user'?"""
    err(org.client(org.hamlet).get("users/nobody@zulip.example"), 400, "BAD_REQUEST", "No such user")


def make_field(org, name="Phone", field_type=1):
    return ok(org.client(org.admin).post("realm/profile_fields", name=name, field_type=field_type))["id"]


def test_profile_fields_crud(org, events):
    """Can an administrator create, list, update and delete profile fields, each change announced to everyone?"""
    field_id = make_field(org)
    _event, ids = events.one("custom_profile_fields")
    assert ids == active_ids(org)
    fields = ok(org.client(org.hamlet).get("realm/profile_fields"))["custom_fields"]
    assert [(f["id"], f["name"], f["type"]) for f in fields] == [(field_id, "Phone", 1)]
    ok(org.client(org.admin).patch(f"realm/profile_fields/{field_id}", name="Mobile"))
    assert ok(org.client(org.hamlet).get("realm/profile_fields"))["custom_fields"][0]["name"] == "Mobile"
    ok(org.client(org.admin).delete(f"realm/profile_fields/{field_id}"))
    assert ok(org.client(org.hamlet).get("realm/profile_fields"))["custom_fields"] == []
    assert len(events.of("custom_profile_fields")) == 3


def test_member_cannot_create_profile_field(org):
    """Is creating a profile field refused to a member?"""
    err(org.client(org.hamlet).post("realm/profile_fields", name="X", field_type=1), 400,
        "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")


def test_patch_profile_data(org, events):
    """Does PATCH /users/{id} with profile_data store values that appear in profile_data, announced to everyone?"""
    field_id = make_field(org)
    ok(org.client(org.admin).patch(f"users/{org.hamlet.id}", profile_data=[{"id": field_id, "value": "555"}]))
    user = ok(org.client(org.othello).get(f"users/{org.hamlet.id}", include_custom_profile_fields=True))["user"]
    assert user["profile_data"][str(field_id)]["value"] == "555"
    event, ids = events.one("realm_user", op="update")
    assert event["person"]["custom_profile_field"]["id"] == field_id and ids == active_ids(org)


def test_patch_profile_data_unknown_field(org):
    """Is a profile_data entry for a missing field refused?"""
    err(org.client(org.admin).patch(f"users/{org.hamlet.id}", profile_data=[{"id": 999, "value": "x"}]),
        400, "BAD_REQUEST", "Field id 999 not found.")


def test_patch_by_email_changes_name(org, events):
    """Does PATCH /users/{email} rename the user and tell everyone?"""
    ok(org.client(org.admin).patch("users/hamlet@zulip.example", full_name="Prince Hamlet"))
    assert fetch(org.hamlet.id).full_name == "Prince Hamlet"
    event, ids = events.one("realm_user", op="update")
    assert event["person"] == {"user_id": org.hamlet.id, "full_name": "Prince Hamlet"} and ids == active_ids(org)


def test_patch_by_hidden_email_for_admin(org):
    """Can an administrator PATCH a user by a real address visible only to administrators, and by placeholder?"""
    hide_email(org.othello)
    admin, placeholder = org.client(org.admin), f"user{org.othello.id}@zulip.example"
    shown = ok(admin.get(f"users/{org.othello.id}"))["user"]
    assert shown["email"] == placeholder and shown["delivery_email"] == "othello@zulip.example"
    ok(admin.patch("users/othello@zulip.example", full_name="Othello the Moor"))
    assert ok(admin.get(f"users/{org.othello.id}"))["user"]["full_name"] == "Othello the Moor"
    ok(admin.patch(f"users/{placeholder}", full_name="Othello 2"))
    assert ok(admin.get(f"users/{org.othello.id}"))["user"]["full_name"] == "Othello 2"


def test_patch_by_email_requires_admin(org):
    """Is PATCH /users/{email} refused to a member?"""
    err(org.client(org.hamlet).patch("users/othello@zulip.example", full_name="X"), 400,
        "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")


def test_admin_cannot_grant_owner(org):
    """Is granting the owner role refused to an administrator?"""
    err(org.client(org.admin).patch("users/hamlet@zulip.example", role=100), 400, "UNAUTHORIZED_PRINCIPAL",
        "Must be an organization owner")


def test_owner_grants_owner(org, events):
    """Can an owner make a member an owner, announced to everyone?"""
    ok(org.client(org.owner).patch(f"users/{org.hamlet.id}", role=100))
    assert fetch(org.hamlet.id).role == 100
    event, ids = events.one("realm_user", op="update")
    assert event["person"]["role"] == 100 and ids == active_ids(org)


def test_only_owner_keeps_owner_role(org):
    """Can the only owner not lose the owner role?"""
    err(org.client(org.owner).patch("users/desdemona@zulip.example", role=200), 400, "BAD_REQUEST",
        "The owner permission cannot be removed from the only organization owner.")


def test_guest_cannot_become_admin(org):
    """Is making a guest an administrator BAD_REQUEST, while making them a member works?"""
    err(org.client(org.owner).patch("users/polonius@zulip.example", role=200), 400, "BAD_REQUEST",
        "Guests cannot be organization administrators")
    ok(org.client(org.owner).patch("users/polonius@zulip.example", role=400))
    ok(org.client(org.owner).patch("users/polonius@zulip.example", role=200))
    assert fetch(org.guest.id).role == 200


def test_new_email_requires_permission(org):
    """Is new_email refused to an owner without can_change_user_emails and to an administrator?"""
    for requester in (org.owner, org.admin):
        err(org.client(requester).patch(f"users/{org.hamlet.id}", new_email="h@zulip.example"), 400,
            "BAD_REQUEST", "User not authorized to change user emails")


def test_new_email_with_permission(org, events):
    """Can an owner with can_change_user_emails change an address, announced to everyone?"""
    with database.connection_context():
        do_set_permission(org.owner, "can_change_user_emails", True)
    ok(org.client(org.owner).patch(f"users/{org.hamlet.id}", new_email="prince@zulip.example"))
    user = fetch(org.hamlet.id)
    assert user.delivery_email == user.email == "prince@zulip.example"
    event, ids = events.one("realm_user", op="update", person={"user_id": org.hamlet.id,
                                                                "delivery_email": "prince@zulip.example"})
    assert ids == active_ids(org)
    err(org.client(org.owner).patch(f"users/{org.hamlet.id}", new_email="othello@zulip.example"), 400,
        "BAD_REQUEST", "Email is already in use.")


def test_deactivate_user(org, events):
    """Does DELETE /users/{id} deactivate the user, stop their key at once and announce is_active false?"""
    everyone = active_ids(org)
    ok(org.client(org.admin).delete(f"users/{org.othello.id}"))
    err(org.client(org.othello).get("users/me"), 401, "USER_DEACTIVATED")
    event, ids = events.one("realm_user", op="update", person={"user_id": org.othello.id, "is_active": False})
    assert ids == everyone


def test_deactivate_requires_admin(org):
    """Is DELETE /users/{id} refused to a member?"""
    err(org.client(org.hamlet).delete(f"users/{org.othello.id}"), 400, "UNAUTHORIZED_PRINCIPAL",
        "Must be an organization administrator")


def test_cannot_deactivate_only_owner(org):
    """Is deactivating the only owner BAD_REQUEST, even for that owner?"""
    err(org.client(org.owner).delete(f"users/{org.owner.id}"), 400, "BAD_REQUEST",
        "Cannot deactivate the only organization owner")


def test_deactivate_deactivates_bots_first(org, events):
    """Are the user's bots deactivated, before the user?"""
    ok(org.client(org.admin).delete(f"users/{org.hamlet.id}"))
    assert not fetch(org.bot.id).is_active
    order = [e["person"]["user_id"] for e, _ in events.of("realm_user", op="update")
             if e["person"].get("is_active") is False]
    assert order == [org.bot.id, org.hamlet.id]


def add_message(sender, stream=None, recipients=()):
    """A message row (channel message when stream is given) delivered to `recipients`."""
    from chat_appliance.models import Recipient

    with database.connection_context(), write_transaction():
        recipient = stream.recipient if stream else Recipient.create(type=3)
        message = Message.create(realm=sender.realm_id, sender=sender.id, recipient=recipient,
                                 stream=stream.id if stream else None, topic="t", topic_key="t",
                                 content="hi", rendered_content="<p>hi</p>")
        for user in recipients:
            UserMessage.create(user_profile=user.id, message=message)
        if stream is not None and Stream.get_by_id(stream.id).first_message_id is None:
            Stream.update(first_message_id=message.id).where(Stream.id == stream.id).execute()
        return message.id


def test_deactivate_with_actions(org, events):
    """Do the deletion actions remove the profile and the chosen messages of bots and user, updating first_message_id?"""
    public_id = add_message(org.hamlet, org.denmark, [org.hamlet, org.othello])
    bot_public_id = add_message(org.bot, org.verona, [org.hamlet, org.cordelia])
    later_id = add_message(org.othello, org.denmark, [org.othello])
    private_id = add_message(org.hamlet, org.secret, [org.hamlet, org.admin])
    dm_id = add_message(org.hamlet, None, [org.hamlet, org.cordelia])
    with database.connection_context():
        Reaction.create(message=public_id, user_profile=org.othello.id, emoji_name="smile", emoji_code="1f604")
    ok(org.client(org.admin).delete(f"users/{org.hamlet.id}", actions={
        "delete_profile": True, "delete_public_channel_messages": True, "delete_direct_messages": True}))
    with database.connection_context():
        remaining = {m.id for m in Message.select()}
        assert public_id not in remaining and bot_public_id not in remaining and dm_id not in remaining
        assert private_id in remaining and later_id in remaining
        assert Reaction.select().count() == 0 and not UserMessage.select().where(UserMessage.message == dm_id).exists()
        assert Stream.get_by_id(org.denmark.id).first_message_id == later_id
        assert Stream.get_by_id(org.verona.id).first_message_id is None
    hamlet = fetch(org.hamlet.id)
    assert hamlet.full_name == "Deleted User" and fetch(org.bot.id).full_name == "Deleted User"
    _event, ids = events.one("delete_message", message_ids=[dm_id])
    assert ids == {org.hamlet.id, org.cordelia.id}
    event, _ids = events.one("stream", property="first_message_id", stream_id=org.denmark.id)
    assert event["value"] == later_id


def test_deactivate_rejects_unknown_action(org):
    """Is an unknown member of `actions` refused?"""
    err(org.client(org.admin).delete(f"users/{org.othello.id}", actions={"delete_everything": True}), 400,
        "BAD_REQUEST")


def test_deactivation_comment_accepted(org):
    """Is deactivation_notification_comment accepted (not reported as ignored)?"""
    body = ok(org.client(org.admin).delete(f"users/{org.othello.id}", deactivation_notification_comment="Bye"))
    assert "ignored_parameters_unsupported" not in body


def test_reactivate_user(org, events):
    """Does POST /users/{id}/reactivate restore a deactivated user, and refuse an active one?"""
    ok(org.client(org.admin).delete(f"users/{org.othello.id}"))
    ok(org.client(org.admin).post(f"users/{org.othello.id}/reactivate"))
    assert fetch(org.othello.id).is_active
    events.one("realm_user", op="update", person={"user_id": org.othello.id, "is_active": True})
    err(org.client(org.admin).post(f"users/{org.othello.id}/reactivate"), 400, "BAD_REQUEST",
        "User is already active")


def test_cli_set_permission(tmp_path):
    """Does `chat-appliance set-permission` grant and refuse unknown permissions clearly?"""
    from ..support.helpers import INIT_ARGS, run

    inst = str(tmp_path / "inst")
    assert run("init", "--instance", inst, *INIT_ARGS).returncode == 0
    granted = run("set-permission", "--instance", inst, "--email", "boss@acme.example",
                  "--permission", "can_change_user_emails")
    assert granted.returncode == 0 and "granted" in granted.stdout
    bad = run("set-permission", "--instance", inst, "--email", "boss@acme.example", "--permission", "fly")
    assert bad.returncode == 1 and "Invalid permission" in bad.stderr
