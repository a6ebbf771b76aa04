"""Sign-up through a reusable invitation link, with email configured: the address is confirmed by
a mailed link before any account exists, so nobody can sign up as an address that is not theirs
(nor revoke its owner's pending invitation by trying)."""

import re

from chat_appliance.models import INVITE_ACTIVE, Invitation, UserProfile, database

from ..support.helpers import ok
from ..support.smtp_sink import body

HEADERS = {"X-Requested-With": "XMLHttpRequest"}
CONFIRM_RE = re.compile(r"https?://\S+/join/(\S+)\?confirm=(\S+)")


def join(flask_client, key, **data):
    response = flask_client.post(f"/accounts/join/{key}", headers=HEADERS, data=data)
    return response.status_code, response.get_json()


def keys(org, pending_email):
    """(a reusable link's key, the key of an email invitation to `pending_email`)."""
    owner = org.client(org.owner)
    link = ok(owner.post("invites/multiuse", stream_ids=[org.denmark.id]))["invite_link"]
    ok(owner.post("invites", invitee_emails=pending_email, stream_ids=[org.denmark.id]))
    with database.connection_context():
        return link.rsplit("/join/", 1)[1], Invitation.get(Invitation.email == pending_email).key


def account_exists(email):
    with database.connection_context():
        return UserProfile.select().where(UserProfile.delivery_email == email).exists()


def invitation_status(key):
    with database.connection_context():
        return Invitation.get(Invitation.key == key).status


def test_a_link_sign_up_makes_no_account_until_the_mailed_link_is_followed(org, app, mail):
    """Does a sign-up through a reusable link as someone else's address create no account, set
    no session and leave that address's pending invitation alone, mailing the address a
    confirmation link instead; and does following that link create the account?"""
    link_key, pending_key = keys(org, "ceo@bigcorp.example")
    client = app.test_client()
    status, answer = join(client, link_key, email="ceo@bigcorp.example", full_name="Not The CEO",
                          password="a fine password")
    assert status == 200 and answer["confirmation_sent"] is True, answer
    assert not account_exists("ceo@bigcorp.example")
    assert client.get("/json/users/me", headers=HEADERS).status_code == 401
    assert invitation_status(pending_key) == INVITE_ACTIVE
    confirmations = [m for m in mail.wait(2) if m["To"].addresses[0].addr_spec == "ceo@bigcorp.example"
                     and m["Subject"].startswith("Confirm your email address")]
    assert len(confirmations) == 1
    key, token = CONFIRM_RE.search(body(confirmations[0], "plain")).groups()
    assert key == link_key
    info = client.get(f"/accounts/join/{key}?confirm={token}").get_json()
    assert info["email"] == "ceo@bigcorp.example" and info["needs_confirmation"] is False
    status, answer = join(client, key, confirm=token, full_name="The CEO", password="a fine password")
    assert status == 200, answer
    assert account_exists("ceo@bigcorp.example")
    assert client.get("/json/users/me", headers=HEADERS).get_json()["email"] == "ceo@bigcorp.example"


def test_a_confirmation_token_is_for_its_address_and_its_link_only(org, app, mail):
    """Is a made-up or altered token refused, and is a genuine token refused for another
    address, for another link, and once the link is revoked?"""
    link_key, _pending = keys(org, "someone@bigcorp.example")
    client = app.test_client()
    join(client, link_key, email="mine@bigcorp.example")
    message = next(m for m in mail.wait(2) if m["To"].addresses[0].addr_spec == "mine@bigcorp.example")
    _key, token = CONFIRM_RE.search(body(message, "plain")).groups()
    altered = token[:-1] + ("0" if token[-1] != "0" else "1")
    for bad in ("nonsense", altered):
        status, answer = join(client, link_key, confirm=bad, full_name="X", password="a fine password")
        assert status == 400, answer
    status, answer = join(client, link_key, confirm=token, email="ceo@bigcorp.example", full_name="X",
                          password="a fine password")
    assert status == 400 and not account_exists("ceo@bigcorp.example")
    other_link = ok(org.client(org.owner).post("invites/multiuse"))["invite_link"].rsplit("/join/", 1)[1]
    status, _answer = join(client, other_link, confirm=token, full_name="X", password="a fine password")
    assert status == 400
    link_id = next(i["id"] for i in ok(org.client(org.owner).get("invites"))["invites"]
                   if i["is_multiuse"] and i["link_url"].endswith(link_key))
    ok(org.client(org.owner).delete(f"invites/multiuse/{link_id}"))
    status, _answer = join(client, link_key, confirm=token, full_name="X", password="a fine password")
    assert status == 400 and not account_exists("mine@bigcorp.example")


def test_without_email_a_link_sign_up_is_immediate(org, app):
    """Control: without email configured, does a reusable link still create the account at once
    (the admin screen says such sign-ups are unverified)?"""
    link_key = ok(org.client(org.owner).post("invites/multiuse"))["invite_link"].rsplit("/join/", 1)[1]
    info = app.test_client().get(f"/accounts/join/{link_key}").get_json()
    assert info["needs_confirmation"] is False
    status, answer = join(app.test_client(), link_key, email="walkin@bigcorp.example", full_name="Walk In",
                          password="a fine password")
    assert status == 200 and account_exists("walkin@bigcorp.example"), answer
