"""Accounts and their credentials: every way in makes accounts by the same rules (placeholder
addresses reserved, one password policy), a login takes as long for an unknown email as for a
known one, the lock-out counts per account, and keys rotate with the old ones failing at once.
(The login's answers and lock-out headers are also in tests/api/test_rate_limits.py.)"""

import re
import subprocess
import sys

from chat_appliance.models import UserProfile, database

from ..support.helpers import PASSWORD, err, ok
from ..support.smtp_sink import body as body_of


def test_unknown_email_costs_a_password_hash(org, anon, monkeypatch):
    """Does a login with an unknown email spend a password hash, as a known one does, so that
    timing does not tell them apart?"""
    from chat_appliance.lib import passwords

    calls = []
    original = passwords.check_password_against_dummy
    monkeypatch.setattr(passwords, "check_password_against_dummy",
                        lambda password, method: calls.append(method) or original(password, method))
    err(anon.post("fetch_api_key", username="nobody@zulip.example", password="x"), 401, "AUTHENTICATION_FAILED")
    assert len(calls) == 1


def test_keys_rotate_and_bots_deactivate(org, app, flask_client):
    """Can a user rotate their own key and a bot's owner rotate or deactivate the bot, the old
    keys failing at once (long polls included), and does a key reset by the admin command in
    another process stop the old key on GET /events too?"""
    hamlet = org.client(org.hamlet)
    queue_id = ok(hamlet.post("register", event_types=["message"]))["queue_id"]
    ok(hamlet.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True))  # fills the cache
    body = ok(hamlet.post("users/me/api_key/regenerate"), undocumented=("api_key", "email"))
    err(hamlet.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True), 401, "INVALID_API_KEY")
    org.hamlet.api_key = body["api_key"]
    hamlet = org.client(org.hamlet)
    ok(hamlet.get("users/me"))

    bot = org.client(org.bot)
    ok(bot.get("users/me"))
    err(org.client(org.othello).post(f"bots/{org.bot.id}/api_key/regenerate"), 400, "BAD_REQUEST",
        "Insufficient permission")
    new_key = ok(hamlet.post(f"bots/{org.bot.id}/api_key/regenerate"), undocumented=("api_key",))["api_key"]
    err(bot.get("users/me"), 401, "INVALID_API_KEY")
    org.bot.api_key = new_key
    ok(hamlet.delete(f"bots/{org.bot.id}"))
    assert org.client(org.bot).get("users/me").status_code == 401

    othello = org.client(org.othello)
    queue_id = ok(othello.post("register", event_types=["message"]))["queue_id"]
    ok(othello.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True))
    reset = subprocess.run([sys.executable, "-m", "chat_appliance", "reset-api-key", "--instance",
                            app.config["INSTANCE_PATH"], "--email", org.othello.email],
                           capture_output=True, text=True, timeout=60)
    assert reset.returncode == 0, reset.stderr
    err(othello.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True), 401, "INVALID_API_KEY")


def test_placeholder_addresses_are_reserved(org):
    """Is an address of the form user{N}@{organization host} refused as a new account's or a new
    real address, so it cannot take over user N's placeholder?"""
    owner = org.client(org.owner)
    placeholder = f"user{org.hamlet.id}@zulip.example"
    err(owner.post("users", email=placeholder, password=PASSWORD, full_name="Impostor"), 400, "BAD_REQUEST")
    err(owner.post("users", email="user999@zulip.example", password=PASSWORD, full_name="Impostor"), 400,
        "BAD_REQUEST")
    ok(owner.post("users", email="user999@elsewhere.example", password=PASSWORD, full_name="Fine"))


JOIN_HEADERS = {"X-Requested-With": "XMLHttpRequest"}


def join(flask_client, key, **data):
    response = flask_client.post(f"/accounts/join/{key}", headers=JOIN_HEADERS, data=data)
    return response.status_code, response.get_json()


def invitation_keys(org, email):
    """(a reusable link's key, an email invitation's key to `email`)."""
    owner = org.client(org.owner)
    link = ok(owner.post("invites/multiuse", stream_ids=[org.denmark.id]))["invite_link"]
    ok(owner.post("invites", invitee_emails=email, stream_ids=[org.denmark.id]))
    from chat_appliance.models import Invitation

    with database.connection_context():
        email_key = Invitation.get(Invitation.email == email).key
    return link.rsplit("/join/", 1)[1], email_key


def test_placeholder_addresses_cannot_sign_up(org, flask_client, mail):
    """Is an address of the placeholder form user{N}@{organization host} refused by sign-up
    through a reusable link and through an email invitation, as it is by POST /users, so that
    no two accounts share an API email?"""
    placeholder = f"user{org.hamlet.id}@zulip.example"
    link_key, email_key = invitation_keys(org, placeholder)
    for key, data in ((link_key, {"email": placeholder}), (email_key, {})):
        status, body = join(flask_client, key, full_name="Impostor", password="a fine password", **data)
        assert status == 400 and "reserved for placeholder addresses" in body["msg"], body
    status, body = join(flask_client, link_key, email="USER999@Zulip.Example", full_name="Impostor",
                        password="a fine password")
    assert status == 400, body
    with database.connection_context():
        assert not UserProfile.select().where(UserProfile.full_name == "Impostor").exists()


def test_sign_up_and_password_change_share_one_password_policy(org, flask_client, mail):
    """Does sign-up by invitation (link and email) refuse a password shorter than 6 characters,
    as a password change does, and accept one of 6?"""
    link_key, email_key = invitation_keys(org, "newcomer@zulip.example")
    # With email configured, a link's sign-up goes through the address's confirmation link.
    assert join(flask_client, link_key, email="other@zulip.example")[1]["confirmation_sent"] is True
    message = next(m for m in mail.wait(2) if m["To"].addresses[0].addr_spec == "other@zulip.example")
    token = re.search(r"\?confirm=(\S+)", body_of(message, "plain")).group(1)
    for key, data in ((link_key, {"confirm": token}), (email_key, {})):
        status, body = join(flask_client, key, full_name="New Comer", password="12345", **data)
        assert status == 400 and body["msg"] == "The password is too weak.", body
    status, body = join(flask_client, email_key, full_name="New Comer", password="123456")
    assert status == 200, body
    err(org.client(org.owner).post("users", email="short@zulip.example", password="x", full_name="Short"), 400,
        "BAD_REQUEST", "The password is too weak.")


def test_lock_out_counts_per_account_not_per_name(org, anon, app):
    """When Hamlet's real address is hidden he has two login names (it and his placeholder): do
    failed logins under both count toward one lock-out of 5, and do unknown names still get
    their own count?"""
    app.config["RATE_LIMITING"] = True
    ok(org.client(org.hamlet).patch("settings", email_address_visibility=3))
    names = [org.hamlet.delivery_email, f"user{org.hamlet.id}@zulip.example"]
    for attempt in range(5):
        err(anon.post("fetch_api_key", username=names[attempt % 2], password="wrong"), 401, "AUTHENTICATION_FAILED")
    for name in names:
        err(anon.post("fetch_api_key", username=name, password=PASSWORD), 429, "RATE_LIMIT_HIT")
    for _ in range(5):
        err(anon.post("fetch_api_key", username="nobody@zulip.example", password="x"), 401, "AUTHENTICATION_FAILED")
    err(anon.post("fetch_api_key", username="nobody@zulip.example", password="x"), 429, "RATE_LIMIT_HIT")
    ok(anon.post("fetch_api_key", username=org.othello.email, password=PASSWORD))
