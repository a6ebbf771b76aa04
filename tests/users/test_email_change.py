"""Changing an account's email address: one's own through PATCH /settings (a link mailed to the
new address when the server sends mail, at once when it does not), the organization's
email_changes_disabled, and an authorized owner changing someone else's through PATCH /users/{id}."""

import re

from chat_appliance.actions.users import do_set_permission
from chat_appliance.models import UserProfile, database

from ..support.helpers import active_ids, err, ok, register
from ..support.smtp_sink import body

XHR = {"X-Requested-With": "XMLHttpRequest"}
HAMLET = "hamlet@zulip.example"
CONFIRM_RE = re.compile(r"https?://\S+(/accounts/confirm_new_email/\S+)")


def settings(client, **params):
    """PATCH /settings, asserted successful. account_email, Zulip's word on an address change, is
    missing from this copy of the OpenAPI description."""
    return ok(client.patch("settings", **params), undocumented=("account_email",))


def fetch(user):
    with database.connection_context():
        return UserProfile.get_by_id(user.id)


def person_updates(events, user):
    """The `person` of each realm_user update about `user`, with its audience."""
    return [(e["person"], ids) for e, ids in events.of("realm_user", op="update") if e["person"]["user_id"] == user.id]


def confirm_path(message):
    return CONFIRM_RE.search(body(message, "plain")).group(1)


def disable_email_changes(org, disabled=True):
    ok(org.client(org.owner).patch("realm", email_changes_disabled="true" if disabled else "false"))


def test_own_change_waits_for_the_mailed_link_then_tells_everyone(org, app, mail, events):
    """With mail configured, does PATCH /settings `email` mail a link to the new address and change
    nothing (no realm_user event) until the link is confirmed; then change the address, send the
    realm_user updates (delivery_email, and the API email as new_email) to everyone, and mail the
    old address a notice?"""
    answer = settings(org.client(org.hamlet), email="  prince@zulip.example ")
    assert answer["account_email"] == "Check your email for a confirmation link."
    [link_mail] = mail.wait()
    assert link_mail["To"].addresses[0].addr_spec == "prince@zulip.example"
    assert fetch(org.hamlet).delivery_email == HAMLET
    assert person_updates(events, org.hamlet) == []

    done = app.test_client().post(confirm_path(link_mail), headers=XHR)
    assert done.status_code == 200, done.get_json()
    user = fetch(org.hamlet)
    assert user.delivery_email == user.email == "prince@zulip.example"
    everyone = active_ids(org)
    assert ({"user_id": org.hamlet.id, "delivery_email": "prince@zulip.example"}, everyone) in person_updates(events, org.hamlet)
    assert ({"user_id": org.hamlet.id, "new_email": "prince@zulip.example"}, everyone) in person_updates(events, org.hamlet)
    notice = mail.wait(2)[1]
    assert notice["To"].addresses[0].addr_spec == HAMLET
    assert "prince@zulip.example" in body(notice, "plain")
    # The new address signs in to the API; the old one no longer names the account.
    assert ok(org.client(user).get("users/me"))["email"] == "prince@zulip.example"


def test_without_mail_the_change_is_made_at_once_and_said(org, events):
    """On a server that sends no mail, does PATCH /settings `email` change the address at once
    (nothing to confirm with), the answer saying so, with the realm_user updates sent?"""
    answer = settings(org.client(org.hamlet), email="prince@zulip.example")
    assert answer["account_email"] == ("Your email address is now prince@zulip.example. This server does not "
                                       "send email, so the new address was not confirmed.")
    assert fetch(org.hamlet).delivery_email == "prince@zulip.example"
    assert ({"user_id": org.hamlet.id, "delivery_email": "prince@zulip.example"}, active_ids(org)) in person_updates(events, org.hamlet)


def test_organization_can_turn_off_members_email_changes(org, events):
    """Does PATCH /realm email_changes_disabled reach everyone (a realm update event, and
    realm_email_changes_disabled in /register), a member's change then being refused with nothing
    changed while an administrator still changes their own?"""
    assert register(org.client(org.hamlet), fetch_event_types=["realm"])["realm_email_changes_disabled"] is False
    disable_email_changes(org)
    event, ids = events.one("realm", op="update", property="email_changes_disabled")
    assert event["value"] is True and ids == active_ids(org)
    assert register(org.client(org.hamlet), fetch_event_types=["realm"])["realm_email_changes_disabled"] is True
    err(org.client(org.hamlet).patch("settings", email="prince@zulip.example", full_name="Prince Hamlet"), 400,
        "BAD_REQUEST", "Email address changes are disabled in this organization.")
    user = fetch(org.hamlet)
    assert (user.delivery_email, user.full_name) == (HAMLET, "King Hamlet")
    settings(org.client(org.admin), email="iago@elsewhere.example")
    assert fetch(org.admin).delivery_email == "iago@elsewhere.example"
    err(org.client(org.hamlet).patch("realm", email_changes_disabled="false"), 400, "UNAUTHORIZED_PRINCIPAL")


def test_a_link_mailed_before_changes_were_turned_off_stops_working(org, app, mail):
    """Is a member's confirmation link refused once the organization turns email changes off,
    the address staying as it was?"""
    settings(org.client(org.hamlet), email="prince@zulip.example")
    [link_mail] = mail.wait()
    disable_email_changes(org)
    refused = app.test_client().post(confirm_path(link_mail), headers=XHR)
    assert refused.status_code == 400
    assert refused.get_json()["msg"] == "Email address changes are disabled in this organization."
    assert fetch(org.hamlet).delivery_email == HAMLET


def test_bad_and_taken_addresses_are_refused_and_nothing_changes(org, mail):
    """Are an invalid address, one another account has (in any case), and a placeholder address
    refused with a clear 400 before anything of the request changes (the name sent with it stays),
    no mail going out; and is one's own address in other letter case no change at all?"""
    hamlet = org.client(org.hamlet)
    refusals = {
        "not an address": "Invalid email 'not an address'",
        "OTHELLO@zulip.example": "Email is already in use.",
        f"user{org.othello.id}@zulip.example": f"Email 'user{org.othello.id}@zulip.example' is reserved for placeholder addresses",
    }
    for address, msg in refusals.items():
        err(hamlet.patch("settings", email=address, full_name="Prince Hamlet"), 400, "BAD_REQUEST", msg)
    assert "account_email" not in settings(hamlet, email="HAMLET@zulip.example")
    user = fetch(org.hamlet)
    assert (user.delivery_email, user.full_name) == (HAMLET, "King Hamlet")
    assert mail.settle(0.3) == []


def test_bots_cannot_change_their_address(org):
    """Is a bot's PATCH /settings `email` refused?"""
    err(org.client(org.bot).patch("settings", email="robot@zulip.example"), 400, "BAD_REQUEST",
        "Bots cannot change their email address.")
    assert fetch(org.bot).delivery_email == "hamlet-bot@zulip.example"


def test_confirmation_mails_are_rate_limited_per_account(org, app, mail):
    """With rate limits on, is a third address-change mail within the hour refused
    (RATE_LIMIT_HIT), only two mails going out?"""
    app.config["RATE_LIMITING"] = True
    hamlet = org.client(org.hamlet)
    for n in (1, 2):
        settings(hamlet, email=f"prince{n}@zulip.example")
    err(hamlet.patch("settings", email="prince3@zulip.example"), 429, "RATE_LIMIT_HIT")
    assert len(mail.settle(0.5)) == 2


def test_authorized_owner_changes_someone_elses_address_at_once(org, events):
    """Does an owner holding can_change_user_emails change another account's address through
    PATCH /users/{id} at once (no mail: the owner answers for it), while a bad or taken address
    in the same request as a new name changes neither, and an administrator without the permission
    is refused?"""
    err(org.client(org.admin).patch(f"users/{org.hamlet.id}", new_email="prince@zulip.example"), 400, "BAD_REQUEST",
        "User not authorized to change user emails")
    with database.connection_context():
        do_set_permission(org.owner, "can_change_user_emails", True)
    owner = org.client(org.owner)
    for address, msg in (("othello@zulip.example", "Email is already in use."), ("nope", "Invalid email 'nope'")):
        err(owner.patch(f"users/{org.hamlet.id}", new_email=address, full_name="Prince Hamlet"), 400, "BAD_REQUEST", msg)
    user = fetch(org.hamlet)
    assert (user.delivery_email, user.full_name) == (HAMLET, "King Hamlet")
    ok(owner.patch(f"users/{org.hamlet.id}", new_email="prince@zulip.example", full_name="Prince Hamlet"))
    user = fetch(org.hamlet)
    assert (user.delivery_email, user.full_name) == ("prince@zulip.example", "Prince Hamlet")
    assert ({"user_id": org.hamlet.id, "delivery_email": "prince@zulip.example"}, active_ids(org)) in person_updates(events, org.hamlet)
    # The same address in other letters is the account's own, not another's.
    ok(owner.patch(f"users/{org.hamlet.id}", new_email="Prince@zulip.example"))
    assert fetch(org.hamlet).delivery_email == "Prince@zulip.example"
