"""Changing one's own address (PATCH /settings with `email`): a confirmation link goes to the new
address, and the change takes effect when the link is used (Zulip's behaviour), so nobody moves an
account to an address they do not control.

The link is table-free (lib/signed_links.py): the account id and the new address, signed over the
account's current address, valid for a day (Zulip's confirmation links last a day). Once the
address changes, every other pending link of the account stops working."""

import logging

from chat_appliance.lib.errors import InvalidEmailChangeLinkError, JsonableError
from chat_appliance.clients.send_email import Mailer, standard_email
from chat_appliance.lib.signed_links import make_token, token_parts, token_valid
from chat_appliance.models import UserProfile
from chat_appliance.actions.users import check_email, check_not_placeholder, do_change_delivery_email, email_in_use

log = logging.getLogger(__name__)

PURPOSE = "email-change"
CONFIRM_PATH = "/accounts/confirm_new_email/"
LINK_VALIDITY_SECONDS = 24 * 3600


def _encode(email: str) -> str:
    # Hex: an address may hold "-", the token's separator.
    return email.encode().hex()


def check_new_email(user: UserProfile, new_email: str) -> str:
    """The address the account may move to: valid, not a placeholder, not anyone's here."""
    email = check_not_placeholder(user.realm, check_email(new_email))
    if email_in_use(user.realm_id, email):
        raise JsonableError("Email is already in use.")
    return email


def do_start_email_change(user: UserProfile, new_email: str, *, secret: bytes, mailer: Mailer) -> None:
    """Mail a confirmation link to the new address (checked first); nothing changes yet."""
    email = check_new_email(user, new_email)
    realm = user.realm
    realm_url = realm.url.rstrip("/")
    token = make_token(secret, PURPOSE, [str(user.id), _encode(email)], [user.delivery_email])
    mailer.send(standard_email(
        noreply=mailer.noreply(), sender_name=realm.name, to_name=user.full_name, to_email=email,
        subject=f"Confirm your new email address for {realm.name}",
        paragraphs=[f"{user.full_name} asked to change the email address of their account at {realm_url} "
                    f"from {user.delivery_email} to {email}.",
                    "The link below confirms the change; it works once, within 24 hours. If you did not ask, "
                    "ignore this email and nothing changes."],
        link=("Confirm email change", realm_url + CONFIRM_PATH + token), footer=f"Sent by {realm.name} ({realm_url})."))


def do_confirm_email_change(secret: bytes, token: str) -> UserProfile:
    """Apply the change a valid confirmation link stands for; returns the account."""
    parts = token_parts(token, 2, LINK_VALIDITY_SECONDS)
    if parts is None or not parts[0].isdigit():
        raise InvalidEmailChangeLinkError()
    try:
        email = bytes.fromhex(parts[1]).decode()
    except ValueError:
        raise InvalidEmailChangeLinkError() from None
    user = UserProfile.get_or_none(UserProfile.id == int(parts[0]))
    if user is None or not user.is_active or not token_valid(secret, PURPOSE, token, [user.delivery_email]):
        raise InvalidEmailChangeLinkError()
    do_change_delivery_email(user, email)
    return user
