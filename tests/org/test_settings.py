"""Organization settings (PATCH /realm) and personal settings (PATCH /settings)."""

from chat_appliance.models import Realm, UserProfile, database

from ..support.helpers import ApiClient, err, ok


def realm_row(org):
    with database.connection_context():
        return Realm.get_by_id(org.realm.id)


def test_admin_updates_realm(org):
    """Can an administrator change the name, moderation channel, edit-history policy and mention group?"""
    from chat_appliance.lib.groups import system_group

    with database.connection_context():
        moderators = system_group(org.realm.id, "role:moderators")
    ok(org.client(org.admin).patch("realm", name="Renamed", moderation_request_channel_id=org.verona.id,
                                   message_edit_history_visibility_policy="moves",
                                   can_mention_many_users_group=moderators.id))
    realm = realm_row(org)
    assert realm.name == "Renamed" and realm.moderation_request_channel_id == org.verona.id
    assert realm.edit_history_policy_name() == "moves"
    assert realm.can_mention_many_users_group_id == moderators.id
    assert ok(ApiClient(org.flask_client, None, None).get("server_settings"))["realm_name"] == "Renamed"


def test_moderation_channel_can_be_turned_off(org):
    """Does moderation_request_channel_id=-1 clear the setting?"""
    client = org.client(org.admin)
    ok(client.patch("realm", moderation_request_channel_id=org.verona.id))
    ok(client.patch("realm", moderation_request_channel_id=-1))
    assert realm_row(org).moderation_request_channel_id is None


def test_realm_settings_validation(org):
    """Are an unknown policy, an unknown channel and an unknown group refused, changing nothing?"""
    client = org.client(org.admin)
    err(client.patch("realm", message_edit_history_visibility_policy="sometimes"), 400, "BAD_REQUEST")
    err(client.patch("realm", moderation_request_channel_id=9999), 400, "BAD_REQUEST", "Invalid channel ID")
    err(client.patch("realm", can_mention_many_users_group=9999), 400, "BAD_REQUEST")
    err(client.patch("realm", name="x" * 41), 400, "BAD_REQUEST")
    assert realm_row(org).name == "Zulip Dev"


def test_member_cannot_update_realm(org):
    """Is PATCH /realm refused to a member?"""
    err(org.client(org.hamlet).patch("realm", name="Mine"), 400, "UNAUTHORIZED_PRINCIPAL")


def test_user_changes_own_settings(org):
    """Can a user change their name, time zone and a boolean setting?"""
    client = org.client(org.hamlet)
    ok(client.patch("settings", full_name="Prince Hamlet", timezone="Europe/Copenhagen",
                    twenty_four_hour_time=True))
    me = ok(client.get("users/me"))
    assert me["full_name"] == "Prince Hamlet" and me["timezone"] == "Europe/Copenhagen"
    with database.connection_context():
        assert UserProfile.get_by_id(org.hamlet.id).settings["twenty_four_hour_time"] is True


def test_bad_timezone_and_visibility(org):
    """Are an unknown time zone and a visibility outside 1..5 refused?"""
    client = org.client(org.hamlet)
    err(client.patch("settings", timezone="Mars/Olympus"), 400, "BAD_REQUEST")
    err(client.patch("settings", email_address_visibility=6), 400, "BAD_REQUEST")


def test_email_visibility_hides_real_address(org):
    """With visibility 'admins only', do members see a placeholder email and null delivery_email,
    while admins see the real address, and can the user still log in with the real address?"""
    ok(org.client(org.hamlet).patch("settings", email_address_visibility=3))
    as_member = ok(org.client(org.othello).get(f"users/{org.hamlet.id}"))["user"]
    assert as_member["delivery_email"] is None
    assert as_member["email"] == f"user{org.hamlet.id}@zulip.example"
    as_admin = ok(org.client(org.admin).get(f"users/{org.hamlet.id}"))["user"]
    assert as_admin["delivery_email"] == "hamlet@zulip.example"
    # The real address and the API key still authenticate.
    assert ok(org.client(org.hamlet).get("users/me"))["delivery_email"] == "hamlet@zulip.example"


def test_message_permission_settings_round_trip_and_apply(org):
    """Can administrators set who may move topics and the delete time limit, does /register report
    them, and does the move permission then apply?"""
    from chat_appliance.lib.groups import system_group

    from ..support.helpers import register

    with database.connection_context():
        admins = system_group(org.realm.id, "role:administrators").id
    client = org.client(org.admin)
    ok(client.patch("realm", can_move_messages_between_topics_group=admins,
                    message_content_delete_limit_seconds="unlimited", move_messages_within_stream_limit_seconds=60))
    state = register(org.client(org.hamlet), fetch_event_types=["realm"])
    assert state["realm_can_move_messages_between_topics_group"] == admins
    assert state["realm_message_content_delete_limit_seconds"] is None
    assert state["realm_move_messages_within_stream_limit_seconds"] == 60
    msg = ok(org.client(org.othello).post("messages", type="stream", to="Denmark", topic="a", content="x"))["id"]
    err(org.client(org.hamlet).patch(f"messages/{msg}", topic="b", propagate_mode="change_all"), 400,
        "BAD_REQUEST")
    ok(org.client(org.admin).patch(f"messages/{msg}", topic="b", propagate_mode="change_all"))


def test_message_permission_settings_validation(org):
    """Are an unknown group and a negative limit refused, and are these settings admin-only?"""
    err(org.client(org.admin).patch("realm", can_delete_any_message_group=99999), 400, "BAD_REQUEST")
    err(org.client(org.admin).patch("realm", message_content_delete_limit_seconds=-5), 400, "BAD_REQUEST")
    err(org.client(org.hamlet).patch("realm", message_content_delete_limit_seconds=5), 400,
        "UNAUTHORIZED_PRINCIPAL")


def test_message_permission_settings_event(org):
    """Does a change reach clients as a realm update_dict event?"""
    from chat_appliance.lib.groups import system_group

    from ..support.helpers import get_events, register

    with database.connection_context():
        moderators = system_group(org.realm.id, "role:moderators").id
    queue = register(org.client(org.hamlet), event_types=["realm"])["queue_id"]
    ok(org.client(org.admin).patch("realm", can_delete_any_message_group=moderators))
    [event] = get_events(org.client(org.hamlet), queue)
    assert event["op"] == "update_dict" and event["data"]["can_delete_any_message_group"] == moderators
