"""Users: /users/me, /users, /users/{id}, POST /users, PATCH /users/{id}, POST /bots."""

from ..support.helpers import err, ok


def test_own_profile(org):
    """Does GET /users/me return the flat profile with max_message_id and no bot fields?"""
    body = ok(org.client(org.hamlet).get("users/me"))
    assert body["user_id"] == org.hamlet.id
    assert body["email"] == body["delivery_email"] == "hamlet@zulip.example"
    assert body["full_name"] == "King Hamlet" and body["role"] == 400
    assert isinstance(body["max_message_id"], int)
    assert "bot_type" not in body and "bot_owner_id" not in body and "is_billing_admin" not in body


def test_role_flags_derive_from_role(org):
    """Are is_owner/is_admin/is_guest derived from the role?"""
    expectations = {org.owner: (True, True, False), org.admin: (False, True, False),
                    org.moderator: (False, False, False), org.hamlet: (False, False, False),
                    org.guest: (False, False, True)}
    for user, (is_owner, is_admin, is_guest) in expectations.items():
        body = ok(org.client(user).get("users/me"))
        assert (body["is_owner"], body["is_admin"], body["is_guest"]) == (is_owner, is_admin, is_guest)


def test_members_list(org):
    """Does GET /users list every account, bots with their owner, as `members`?"""
    members = {m["user_id"]: m for m in ok(org.client(org.hamlet).get("users"))["members"]}
    assert {org.owner.id, org.admin.id, org.hamlet.id, org.guest.id, org.bot.id} <= set(members)
    bot = members[org.bot.id]
    assert bot["is_bot"] and bot["bot_type"] == 1 and bot["bot_owner_id"] == org.hamlet.id
    assert bot["email"] == "hamlet-bot@zulip.example"
    assert members[org.hamlet.id]["bot_type"] is None


def test_client_gravatar_controls_avatar_url(org):
    """Is avatar_url null with client_gravatar (default) and a URL without it?"""
    client = org.client(org.hamlet)
    assert ok(client.get(f"users/{org.othello.id}"))["user"]["avatar_url"] is None
    url = ok(client.get(f"users/{org.othello.id}", client_gravatar=False))["user"]["avatar_url"]
    assert url.startswith("https://secure.gravatar.com/avatar/")


def test_get_unknown_user(org):
    """Does an unknown user id give BAD_REQUEST 'No such user'?"""
    err(org.client(org.hamlet).get("users/99999"), 400, "BAD_REQUEST", "No such user")


def test_admin_creates_user(org):
    """Can an administrator create an account that can then authenticate?"""
    from ..support.helpers import PASSWORD

    body = ok(org.client(org.admin).post("users", email="new@zulip.example", password=PASSWORD,
                                         full_name="New Person"))
    fetched = ok(org.client(org.hamlet).get(f"users/{body['user_id']}"))["user"]
    assert fetched["full_name"] == "New Person" and fetched["role"] == 400


def test_member_cannot_create_user(org):
    """Is POST /users refused to a member?"""
    err(org.client(org.hamlet).post("users", email="n@zulip.example", password="p", full_name="N"), 400,
        "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")


def test_duplicate_and_invalid_email(org):
    """Are a duplicate and a malformed email refused?"""
    client = org.client(org.admin)
    err(client.post("users", email="HAMLET@zulip.example", password="p", full_name="H2"), 400, "BAD_REQUEST",
        "Email 'HAMLET@zulip.example' already in use")
    err(client.post("users", email="not-an-email", password="p", full_name="X"), 400, "BAD_REQUEST",
        "Invalid email 'not-an-email'")


def test_admin_renames_and_changes_role(org):
    """Can an administrator rename a user and make them a moderator?"""
    client = org.client(org.admin)
    ok(client.patch(f"users/{org.othello.id}", full_name="Othello", role=300))
    user = ok(client.get(f"users/{org.othello.id}"))["user"]
    assert user["full_name"] == "Othello" and user["role"] == 300


def test_only_owners_grant_owner(org):
    """Is granting the owner role refused to an administrator and allowed to an owner?"""
    err(org.client(org.admin).patch(f"users/{org.hamlet.id}", role=100), 400, "UNAUTHORIZED_PRINCIPAL",
        "Must be an organization owner")
    ok(org.client(org.owner).patch(f"users/{org.hamlet.id}", role=100))
    assert ok(org.client(org.hamlet).get("users/me"))["is_owner"] is True


def test_last_owner_keeps_role(org):
    """Can the only owner be demoted? (No.)"""
    err(org.client(org.owner).patch(f"users/{org.owner.id}", role=200), 400, "BAD_REQUEST",
        "The owner permission cannot be removed from the only organization owner.")


def test_invalid_role(org):
    """Is a role outside 100/200/300/400/600 refused?"""
    err(org.client(org.owner).patch(f"users/{org.hamlet.id}", role=250), 400, "BAD_REQUEST", "Invalid role")


def test_member_cannot_patch_users(org):
    """Is PATCH /users/{id} refused to members?"""
    err(org.client(org.hamlet).patch(f"users/{org.othello.id}", full_name="X"), 400, "UNAUTHORIZED_PRINCIPAL")


def test_create_bot(org):
    """Does POST /bots create a bot owned by the requester, whose key works?"""
    body = ok(org.client(org.othello).post("bots", full_name="Helper", short_name="helper"))
    from ..support.helpers import ApiClient

    bot_client = ApiClient(org.flask_client, "helper-bot@zulip.example", body["api_key"])
    me = ok(bot_client.get("users/me"))
    assert me["user_id"] == body["user_id"] and me["is_bot"]
    bot = ok(org.client(org.othello).get(f"users/{body['user_id']}"))["user"]
    assert bot["bot_owner_id"] == org.othello.id
    err(org.client(org.othello).post("bots", full_name="Helper", short_name="helper"), 400, "BAD_REQUEST",
        "Username already in use")


def test_guest_cannot_create_bot(org):
    """Is POST /bots refused to a guest?"""
    err(org.client(org.guest).post("bots", full_name="G", short_name="g"), 400, "BAD_REQUEST")


def test_system_groups_follow_roles(org):
    """Does a role change move the user between role-based system groups (recursively)?"""
    from chat_appliance.lib.groups import is_user_in_group, system_group
    from chat_appliance.models import UserProfile, database

    ok(org.client(org.owner).patch(f"users/{org.hamlet.id}", role=200))
    with database.connection_context():
        hamlet = UserProfile.get_by_id(org.hamlet.id)
        admins = system_group(org.realm.id, "role:administrators")
        members = system_group(org.realm.id, "role:members")
        owners = system_group(org.realm.id, "role:owners")
        assert is_user_in_group(hamlet, admins.id) and is_user_in_group(hamlet, members.id)
        assert not is_user_in_group(hamlet, owners.id)
        guest = UserProfile.get_by_id(org.guest.id)
        assert not is_user_in_group(guest, members.id)
