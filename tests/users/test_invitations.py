"""Invitations: send, list, reusable links, revoke, resend, and accepting one (sign-up)."""

import pytest

from chat_appliance.actions.invites import do_accept_invitation
from chat_appliance.lib.errors import InvalidInvitationError, JsonableError
from chat_appliance.models import Invitation, UserProfile, database

from ..support.helpers import FAST_HASH, ApiClient, err, ok, polled, queues

# Email invitations need outgoing email: every test here sends to an SMTP server on loopback
# (test_email_invitations_without_email_configured_are_refused turns it off).
pytestmark = pytest.mark.usefixtures("mail")


def invite(client, emails="new@zulip.example", stream_ids=(), **params):
    return client.post("invites", invitee_emails=emails, stream_ids=list(stream_ids), **params)


def listed(client):
    return ok(client.get("invites"))["invites"]


def key_of(link):
    assert "/join/" in link
    return link.rsplit("/join/", 1)[1]


def email_invite_key(org, email):
    with database.connection_context():
        return Invitation.get(Invitation.email == email).key


def accept(app, key, full_name="New Person", password="a good password", email=None):
    with app.app_context(), database.connection_context():
        return do_accept_invitation(key, full_name, password, email=email, password_method=FAST_HASH)


def client_for(org, user):
    return ApiClient(org.flask_client, user.email, user.api_key)


def test_member_sends_invitation_listed_for_self_and_admins(org, events):
    """Does a member's email invitation appear in their GET /invites and an administrator's, with
    invites_changed to the administrators and the inviter only?"""
    ok(invite(org.client(org.hamlet), "Alice <alice@zulip.example>, bob@zulip.example", [org.denmark.id]))
    mine = listed(org.client(org.hamlet))
    assert sorted(i["email"] for i in mine) == ["alice@zulip.example", "bob@zulip.example"]
    first = mine[0]
    assert first["invited_by_user_id"] == org.hamlet.id and first["invited_as"] == 400
    assert first["is_multiuse"] is False and first["notify_referrer_on_join"] is True
    assert first["expiry_date"] - first["invited"] == 10 * 24 * 3600
    assert len(listed(org.client(org.admin))) == 2
    assert listed(org.client(org.othello)) == []
    _event, ids = events.one("invites_changed")
    assert ids == {org.owner.id, org.admin.id, org.hamlet.id}


def test_guest_and_unpermitted_member_refused(org):
    """Are guests refused every invitation endpoint, and members when can_invite_users_group excludes them?"""
    guest = org.client(org.guest)
    err(invite(guest), 400, "BAD_REQUEST", "Not allowed for guest users")
    err(guest.get("invites"), 400, "BAD_REQUEST", "Not allowed for guest users")
    err(guest.post("invites/multiuse"), 400, "BAD_REQUEST", "Not allowed for guest users")
    with database.connection_context():
        org.realm.settings = dict(org.realm.settings, can_invite_users_group="role:administrators")
        org.realm.save()
    err(invite(org.client(org.hamlet)), 400, "BAD_REQUEST", "Insufficient permission")
    ok(invite(org.client(org.admin)))


def test_role_limits(org):
    """May only owners invite owners, and only administrators invite administrators and moderators?"""
    hamlet, admin = org.client(org.hamlet), org.client(org.admin)
    err(invite(hamlet, invite_as=300), 400, "BAD_REQUEST", "Must be an organization administrator")
    err(invite(admin, invite_as=100), 400, "UNAUTHORIZED_PRINCIPAL", "Must be an organization owner")
    err(invite(admin, invite_as=250), 400, "BAD_REQUEST", "Invalid invite_as")
    ok(invite(admin, invite_as=200))
    ok(invite(org.client(org.owner), "o@zulip.example", invite_as=100))
    ok(invite(hamlet, "g@zulip.example", invite_as=600))
    with database.connection_context():
        assert Invitation.select().count() == 3


def test_bad_input_changes_nothing(org):
    """Do an empty address list, an invisible channel, a missing stream_ids and a bad address leave
    no invitation behind?"""
    hamlet = org.client(org.hamlet)
    err(invite(hamlet, " "), 400, "BAD_REQUEST", "You must specify at least one email address.")
    err(invite(hamlet, stream_ids=[org.secret.id + 100]), 400, "BAD_REQUEST",
        f"Invalid channel ID {org.secret.id + 100}. No invites were sent.")
    err(org.client(org.othello).post("invites", invitee_emails="x@zulip.example", stream_ids=[org.secret.id]),
        400, "BAD_REQUEST", f"Invalid channel ID {org.secret.id}. No invites were sent.")
    err(hamlet.post("invites", invitee_emails="x@zulip.example"), 400, "REQUEST_VARIABLE_MISSING")
    err(hamlet.post("invites", invitee_emails="x@zulip.example", stream_ids="[1"), 400, "BAD_REQUEST")
    body = err(invite(hamlet, "not-an-address, fine@zulip.example"), 400, "INVITATION_FAILED",
               "Some emails did not validate, so we didn't send any invitations.")
    assert body["errors"] == [["not-an-address", "Invalid address.", False]] and body["sent_invitations"] is False
    err(invite(hamlet, invite_expires_in_minutes=0), 400, "BAD_REQUEST")
    err(invite(hamlet, invite_expires_in_minutes=2**62), 400, "BAD_REQUEST")
    with database.connection_context():
        assert Invitation.select().count() == 0


def test_existing_accounts_skipped(org):
    """Are addresses with accounts skipped and reported, the others still invited?"""
    hamlet = org.client(org.hamlet)
    body = err(invite(hamlet, "othello@zulip.example"), 400, "INVITATION_FAILED", "We weren't able to invite anyone.")
    assert body["errors"] == [["othello@zulip.example", "Already has an account.", False]]
    body = err(invite(hamlet, "othello@zulip.example, new@zulip.example"), 400, "INVITATION_FAILED")
    assert body["sent_invitations"] is True
    assert [i["email"] for i in listed(hamlet)] == ["new@zulip.example"]


def test_subscribe_permission_for_non_default_channels(org):
    """Without can_add_subscribers_group, may a member invite into default channels only?"""
    with database.connection_context():
        org.realm.settings = dict(org.realm.settings, can_add_subscribers_group="role:administrators")
        org.realm.save()
    hamlet = org.client(org.hamlet)
    err(invite(hamlet, stream_ids=[org.denmark.id]), 400, "BAD_REQUEST",
        "You do not have permission to subscribe other users to channels.")
    ok(invite(hamlet, stream_ids=[org.general.id]))


def test_never_expiring_and_custom_expiry(org):
    """Does null give no expiry date, and a number of minutes that many minutes?"""
    hamlet = org.client(org.hamlet)
    ok(hamlet.call("POST", "invites", {"invitee_emails": "a@zulip.example", "stream_ids": [],
                                       "invite_expires_in_minutes": "null"}))
    ok(invite(hamlet, "b@zulip.example", invite_expires_in_minutes=30))
    by_email = {i["email"]: i for i in listed(hamlet)}
    assert by_email["a@zulip.example"]["expiry_date"] is None
    assert by_email["b@zulip.example"]["expiry_date"] - by_email["b@zulip.example"]["invited"] == 1800


def test_multiuse_link_admin_only_by_default(org, events):
    """Are reusable links for administrators by default, listed with their link_url, told to admins?"""
    err(org.client(org.hamlet).post("invites/multiuse"), 400, "BAD_REQUEST", "Insufficient permission")
    link = ok(org.client(org.admin).post("invites/multiuse", stream_ids=[org.denmark.id]))["invite_link"]
    assert link.startswith("http://zulip.example/join/")
    [entry] = listed(org.client(org.owner))
    assert entry["is_multiuse"] is True and entry["link_url"] == link and "email" not in entry
    _event, ids = events.one("invites_changed")
    assert ids == {org.owner.id, org.admin.id}


def test_accept_email_invitation(app, org, events):
    """Does accepting an email invitation create the account with the invited role, channels and groups,
    use the invitation up, and tell the referrer?"""
    admin = org.client(org.admin)
    group_id = ok(admin.post("user_groups/create", name="newcomers", description="x", members=[]))["group_id"]
    ok(invite(admin, "new@zulip.example", [org.denmark.id], invite_as=300, group_ids=[group_id],
              include_realm_default_subscriptions=True))
    key = email_invite_key(org, "new@zulip.example")
    user = accept(app, key, "New Person")
    assert (user.delivery_email, user.full_name, user.role) == ("new@zulip.example", "New Person", 300)
    me = client_for(org, user)
    subs = sorted(s["name"] for s in ok(me.get("users/me/subscriptions"))["subscriptions"])
    assert subs == ["Denmark", "general"]
    assert ok(admin.get(f"user_groups/{group_id}/members"))["members"] == [user.id]
    assert listed(admin) == []
    with pytest.raises(InvalidInvitationError):
        accept(app, key, "Again")
    # The referrer hears from Notification Bot; the newcomer from Welcome Bot.
    referrer_dms = ok(admin.get("messages", anchor="newest", num_before=1, num_after=0,
                                narrow=[{"operator": "is", "operand": "dm"}]))["messages"]
    assert "joined Zulip Dev with your invitation" in referrer_dms[-1]["content"]
    assert events.of("invites_changed")[-1][1] == {org.owner.id, org.admin.id}


def test_accept_multiuse_many_times_until_revoked(app, org):
    """Does a reusable link create several accounts, then stop working once revoked?"""
    admin = org.client(org.admin)
    key = key_of(ok(admin.post("invites/multiuse", invite_as=600))["invite_link"])
    first = accept(app, key, "First", email="first@zulip.example")
    accept(app, key, "Second", email="second@zulip.example")
    assert first.role == 600
    with pytest.raises(JsonableError):
        accept(app, key, "Third")  # a reusable link needs the address
    [entry] = listed(admin)
    ok(admin.delete(f"invites/multiuse/{entry['id']}"))
    with pytest.raises(InvalidInvitationError):
        accept(app, key, "Third", email="third@zulip.example")
    err(admin.delete(f"invites/multiuse/{entry['id']}"), 400, "BAD_REQUEST", "Invitation has already been revoked")
    with database.connection_context():
        assert not UserProfile.select().where(UserProfile.delivery_email == "third@zulip.example").exists()


def test_expired_invitation_refused(app, org):
    """Is an expired invitation unlisted and refused at sign-up?"""
    ok(invite(org.client(org.hamlet), "late@zulip.example", invite_expires_in_minutes=5))
    key = email_invite_key(org, "late@zulip.example")
    with database.connection_context():
        Invitation.update(expiry_date=Invitation.invited - 1).execute()
    assert listed(org.client(org.hamlet)) == []
    with pytest.raises(InvalidInvitationError):
        accept(app, key)


def test_accept_checks_name_and_address(app, org):
    """Are a bad name, an empty password and another address refused, the invitation still usable?"""
    ok(invite(org.client(org.hamlet), "new@zulip.example"))
    key = email_invite_key(org, "new@zulip.example")
    for kwargs in ({"full_name": " "}, {"password": ""}, {"email": "other@zulip.example"}):
        with pytest.raises(JsonableError):
            accept(app, key, **kwargs)
    assert accept(app, key).delivery_email == "new@zulip.example"


def test_revoke_email_invitation(app, org, events):
    """May the referrer and administrators revoke, another member not, and does the link stop working?"""
    ok(invite(org.client(org.hamlet), "new@zulip.example, two@zulip.example"))
    ids = {i["email"]: i["id"] for i in listed(org.client(org.hamlet))}
    err(org.client(org.othello).delete(f"invites/{ids['new@zulip.example']}"), 400, "BAD_REQUEST",
        "Must be an organization administrator")
    ok(org.client(org.hamlet).delete(f"invites/{ids['new@zulip.example']}"))
    ok(org.client(org.admin).delete(f"invites/{ids['two@zulip.example']}"))
    assert listed(org.client(org.hamlet)) == []
    err(org.client(org.hamlet).delete(f"invites/{ids['new@zulip.example']}"), 400, "BAD_REQUEST",
        "No such invitation")
    err(org.client(org.hamlet).delete("invites/9999"), 400, "BAD_REQUEST", "No such invitation")
    with pytest.raises(InvalidInvitationError):
        accept(app, email_invite_key(org, "new@zulip.example"))
    assert len(events.of("invites_changed")) == 3


def test_owner_invitation_managed_by_owners_only(org):
    """Is an administrator refused revoking an owner's invitation to become owner?"""
    ok(invite(org.client(org.owner), "boss@zulip.example", invite_as=100))
    [entry] = listed(org.client(org.admin))
    err(org.client(org.admin).delete(f"invites/{entry['id']}"), 400, "UNAUTHORIZED_PRINCIPAL",
        "Must be an organization owner")
    err(org.client(org.admin).post(f"invites/{entry['id']}/resend"), 400, "UNAUTHORIZED_PRINCIPAL")


def test_resend(org, mail):
    """Does resend mail the same link again for a pending invitation the requester manages, and
    refuse unknown ones and reusable links?"""
    ok(invite(org.client(org.hamlet), "new@zulip.example"))
    [entry] = listed(org.client(org.hamlet))
    ok(org.client(org.hamlet).post(f"invites/{entry['id']}/resend"))
    first, second = mail.wait(2)
    assert invitation_link(first) == invitation_link(second)
    assert second["To"] == "new@zulip.example"
    err(org.client(org.othello).post(f"invites/{entry['id']}/resend"), 400, "BAD_REQUEST",
        "Must be an organization administrator")
    link_id = None
    ok(org.client(org.admin).post("invites/multiuse"))
    link_id = [i for i in listed(org.client(org.admin)) if i["is_multiuse"]][0]["id"]
    err(org.client(org.admin).post(f"invites/{link_id}/resend"), 400, "BAD_REQUEST", "No such invitation")
    err(org.client(org.admin).delete(f"invites/{entry['id']}x"), 404, "NOT_FOUND")


def invitation_link(message):
    import re

    from ..support.smtp_sink import body

    return re.search(r"http\S+/join/[a-z0-9]+", body(message, "plain")).group(0)


def test_invitation_mail_carries_the_sign_up_link(app, org, mail):
    """Does each invited address get one mail, from the organization, naming the inviter, whose
    link (under the realm URL) opens the sign-up page with the address to sign up as?"""
    ok(invite(org.client(org.hamlet), "Alice <alice@zulip.example>, bob@zulip.example"))
    messages = mail.wait(2)
    assert sorted(m["To"] for m in messages) == ["alice@zulip.example", "bob@zulip.example"]
    alice = next(m for m in messages if m["To"] == "alice@zulip.example")
    assert alice["Subject"] == "King Hamlet invited you to join Zulip Dev"
    assert alice["From"].addresses[0].display_name == "Zulip Dev"
    link = invitation_link(alice)
    assert link == f"{org.realm.url.rstrip('/')}/join/{email_invite_key(org, 'alice@zulip.example')}"
    key = link.rsplit("/", 1)[1]
    assert org.flask_client.get(f"/join/{key}").status_code == 200
    info = org.flask_client.get(f"/accounts/join/{key}").get_json()
    assert info["email"] == "alice@zulip.example" and info["is_multiuse"] is False
    assert len(mail.settle(0.3)) == 2


def test_revoked_invitation_link_from_the_mail_stops_working(app, org, mail):
    """Once revoked, does the link the mail carried stop opening the sign-up form?"""
    ok(invite(org.client(org.hamlet), "new@zulip.example"))
    key = invitation_link(mail.wait()[0]).rsplit("/", 1)[1]
    [entry] = listed(org.client(org.hamlet))
    ok(org.client(org.hamlet).delete(f"invites/{entry['id']}"))
    assert org.flask_client.get(f"/accounts/join/{key}").status_code == 400


def test_email_invitations_without_email_configured_are_refused(app, org):
    """Without EMAIL_HOST, are POST /invites and resend refused with an error that points to an
    invitation link, creating nothing, while a reusable link still works?"""
    app.config["EMAIL_HOST"] = None
    admin = org.client(org.admin)
    msg = ("This server is not configured to send email, so it cannot send invitations by email. "
           "Create an invitation link instead.")
    err(invite(admin, "new@zulip.example"), 400, "BAD_REQUEST", msg)
    assert listed(admin) == []
    assert ok(admin.post("invites/multiuse"))["invite_link"].startswith(org.realm.url.rstrip("/") + "/join/")
    app.config["EMAIL_HOST"] = "127.0.0.1"
    ok(invite(admin, "new@zulip.example"))
    entry = next(i for i in listed(admin) if not i["is_multiuse"])
    app.config["EMAIL_HOST"] = None
    err(admin.post(f"invites/{entry['id']}/resend"), 400, "BAD_REQUEST", msg)


def test_welcome_text_only_from_admins(app, org):
    """Does an administrator's custom welcome text reach the newcomer, and a member's get ignored?"""
    ok(invite(org.client(org.admin), "a@zulip.example", welcome_message_custom_text="Hi from the admins"))
    ok(invite(org.client(org.hamlet), "b@zulip.example", welcome_message_custom_text="Hi from Hamlet"))
    for email, expected in (("a@zulip.example", "Hi from the admins"), ("b@zulip.example", None)):
        user = accept(app, email_invite_key(org, email))
        messages = ok(client_for(org, user).get("messages", anchor="newest", num_before=10, num_after=0,
                                                apply_markdown=False))["messages"]
        contents = [m["content"] for m in messages]
        assert (expected in contents) if expected else len(contents) == 1


def test_deactivating_inviter_revokes_invitations(app, org, events):
    """Are a deactivated member's pending invitations revoked, with invites_changed to administrators?"""
    ok(invite(org.client(org.hamlet), "new@zulip.example"))
    key = email_invite_key(org, "new@zulip.example")
    ok(org.client(org.admin).delete(f"users/{org.hamlet.id}"))
    assert listed(org.client(org.admin)) == []
    with pytest.raises(InvalidInvitationError):
        accept(app, key)
    assert events.of("invites_changed")[-1][1] == {org.owner.id, org.admin.id}


def test_invites_changed_reaches_queues(org):
    """Does invites_changed reach an administrator's queue in Zulip's shape, and not a bystander's?"""

    qs = queues(org, org.admin, org.othello, event_types=["invites_changed"])
    ok(invite(org.client(org.hamlet)))
    assert [e["type"] for e in polled(qs, org.admin)] == ["invites_changed"]
    assert polled(qs, org.othello) == []


def test_group_permission_for_invitations(org):
    """Is a member refused inviting into a group they may not add members to, and an unknown group?"""
    group_id = ok(org.client(org.admin).post("user_groups/create", name="staff", description="x", members=[]))[
        "group_id"]
    err(invite(org.client(org.hamlet), group_ids=[group_id]), 400, "BAD_REQUEST", "Insufficient permission")
    err(invite(org.client(org.hamlet), group_ids=[99999]), 400, "BAD_REQUEST", "Invalid user group")
    ok(invite(org.client(org.admin), group_ids=[group_id]))
