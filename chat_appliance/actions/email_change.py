"""Changing one's own address (PATCH /settings with `email`): a confirmation link goes to the new
address, and the change takes effect when the link is used (Zulip's behaviour), so nobody moves an
account to an address they do not control. The old address then hears of the change, so that a
change its owner did not make does not go unnoticed. An organization may keep members from
changing their address (`email_changes_disabled`); administrators always may.

The link is table-free (lib/signed_links.py): the account id and the new address, signed over the
account's current address, valid for a day (Zulip's confirmation links last a day). Once the
address changes, every other pending link of the account stops working."""

import logging

from chat_appliance.lib.errors import InvalidEmailChangeLinkError, JsonableError
from chat_appliance.clients.send_email import EmailNotConfiguredError, Mailer, standard_email
from chat_appliance.lib.onboarding_settings import realm_value_setting
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


def check_may_change_own_email(user: UserProfile) -> None:
    """Members change their own address unless the organization turned that off; administrators
    always may. Bots have no address of their own to change."""
    if user.is_bot:
        raise JsonableError("Bots cannot change their email address.")
    if realm_value_setting(user.realm, "email_changes_disabled") and not user.is_realm_admin:
        raise JsonableError("Email address changes are disabled in this organization.")


def check_new_email(user: UserProfile, new_email: str) -> str:
    """The address the account may move to: valid, not a placeholder, not anyone's here."""
    email = check_not_placeholder(user.realm, check_email(new_email))
    if email_in_use(user.realm_id, email, except_user_id=user.id):
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


def do_confirm_email_change(secret: bytes, token: str, *, mailer: Mailer | None = None) -> UserProfile:
    """Apply the change a valid confirmation link stands for (mailing the old address a notice
    when `mailer` is given); returns the account."""
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
    # The organization may have turned changes off since the link was mailed.
    check_may_change_own_email(user)
    old_email = user.delivery_email
    do_change_delivery_email(user, email)
    if mailer is not None:
        notify_old_address(user, old_email, mailer)
    return user


def notify_old_address(user: UserProfile, old_email: str, mailer: Mailer) -> None:
    """Tell the address an account left that it did: the one trace a hijacked account leaves
    where its owner still reads."""
    realm = user.realm
    realm_url = realm.url.rstrip("/")
    try:
        mailer.send(standard_email(
            noreply=mailer.noreply(), sender_name=realm.name, to_name=user.full_name, to_email=old_email,
            subject=f"Your email address for {realm.name} changed",
            paragraphs=[f"The email address of your account at {realm_url} is now {user.delivery_email} "
                        f"(it was {old_email}).",
                        "If you did not make this change, contact the organization's administrators at once."],
            link=None, footer=f"Sent by {realm.name} ({realm_url})."))
    except EmailNotConfiguredError:
        log.info("email change of user %s: no mail to the old address (email is not configured)", user.id)
