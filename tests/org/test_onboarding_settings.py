"""Organization settings for invitations, channel creation and the welcome message: PATCH /realm,
/register, and POST /realm/test_welcome_bot_custom_message."""


from ..support.helpers import active_ids, err, ok, polled, queues


def register_state(client):
    return ok(client.post("register", fetch_event_types=["realm"]), undocumented=("server_report_message_types",))


def test_register_reports_defaults_and_permissions(org):
    """Does /register give Zulip's default groups and the requester's derived permissions?"""
    admin_state = register_state(org.client(org.admin))
    guest_state = register_state(org.client(org.guest))
    groups = {g["name"]: g["id"] for g in ok(org.client(org.admin).get("user_groups"))["user_groups"]}
    assert admin_state["realm_can_invite_users_group"] == groups["role:members"]
    assert admin_state["realm_create_multiuse_invite_group"] == groups["role:administrators"]
    assert admin_state["realm_invite_required"] is True and admin_state["realm_welcome_message_custom_text"] == ""
    assert admin_state["can_invite_others_to_realm"] is True and admin_state["can_create_streams"] is True
    assert guest_state["can_invite_others_to_realm"] is False and guest_state["can_subscribe_other_users"] is False


def test_patch_realm_changes_invite_group_with_event(org, events):
    """Does an administrator change can_invite_users_group, announced as update_dict, effective at once?"""
    groups = {g["name"]: g["id"] for g in ok(org.client(org.admin).get("user_groups"))["user_groups"]}
    ok(org.client(org.admin).patch("realm", can_invite_users_group=groups["role:administrators"]))
    event, ids = events.one("realm", op="update_dict")
    assert event["data"] == {"can_invite_users_group": groups["role:administrators"]} and ids == active_ids(org)
    err(org.client(org.hamlet).post("invites", invitee_emails="x@zulip.example", stream_ids=[]), 400,
        "BAD_REQUEST", "Insufficient permission")
    assert register_state(org.client(org.hamlet))["can_invite_others_to_realm"] is False


def test_patch_realm_welcome_text_and_bad_values(org, events):
    """Is welcome_message_custom_text stored with a realm update event, and are a bad group id, an
    over-long text and a member's request refused without change?"""
    admin = org.client(org.admin)
    ok(admin.patch("realm", welcome_message_custom_text="Read the handbook."))
    event, _ids = events.one("realm", op="update", property="welcome_message_custom_text")
    assert event["value"] == "Read the handbook."
    err(admin.patch("realm", can_invite_users_group=99999), 400, "BAD_REQUEST", "Invalid user group ID")
    err(admin.patch("realm", welcome_message_custom_text="x" * 8001), 400, "BAD_REQUEST")
    err(org.client(org.hamlet).patch("realm", invite_required=False), 400, "UNAUTHORIZED_PRINCIPAL")
    state = register_state(admin)
    assert state["realm_welcome_message_custom_text"] == "Read the handbook."
    assert state["realm_invite_required"] is True


def test_welcome_bot_custom_message(org):
    """Does an administrator receive the test text from Welcome Bot, and are members and empty or
    over-long texts refused?"""
    admin = org.client(org.admin)
    message_id = ok(admin.post("realm/test_welcome_bot_custom_message",
                               welcome_message_custom_text="Welcome **aboard**"))["message_id"]
    message = ok(admin.get(f"messages/{message_id}", apply_markdown=False))["message"]
    assert message["content"] == "Welcome **aboard**" and message["sender_email"].startswith("welcome-bot@")
    assert [r["id"] for r in message["display_recipient"]] == sorted([org.admin.id, message["sender_id"]])
    err(org.client(org.hamlet).post("realm/test_welcome_bot_custom_message", welcome_message_custom_text="x"),
        400, "UNAUTHORIZED_PRINCIPAL")
    err(admin.post("realm/test_welcome_bot_custom_message", welcome_message_custom_text=" "), 400, "BAD_REQUEST")
    err(admin.post("realm/test_welcome_bot_custom_message", welcome_message_custom_text="x" * 8001), 400,
        "BAD_REQUEST")
    err(admin.post("realm/test_welcome_bot_custom_message"), 400, "REQUEST_VARIABLE_MISSING")


def test_realm_events_reach_queues_in_zulip_shapes(org):
    """Do the realm events for these settings pass Zulip's event schemas on a real queue?"""

    qs = queues(org, org.hamlet, event_types=["realm"])
    groups = {g["name"]: g["id"] for g in ok(org.client(org.admin).get("user_groups"))["user_groups"]}
    ok(org.client(org.admin).patch("realm", can_invite_users_group=groups["role:administrators"],
                                   create_multiuse_invite_group=groups["role:moderators"],
                                   can_create_private_channel_group=groups["role:administrators"],
                                   invite_required=False, enable_read_receipts=False,
                                   welcome_message_custom_text="Hi"))
    events = polled(qs, org.hamlet)
    assert len(events) == 6
    assert {e["property"] for e in events if e["op"] == "update"} == {
        "invite_required", "enable_read_receipts", "welcome_message_custom_text"}
