"""Password reset by email: a link that sets a new password, once, within a day.

Zulip's behaviour (facts, not code): the form answers the same whether or not the address has an
account, so that it reveals nothing; the link expires after 24 hours and works once; a mail also
goes to an address without an account, saying so, so that its owner learns why no link came.

The link needs no table (lib/signed_links.py): its token is the account's id and the issue time,
signed with the instance's secret key over those and the account's current password hash and address.
Setting a password changes the hash (a new salt each time), so a used link, and every other
link issued before, stops working; so does a link after an email change or a deactivation.
"""

import logging
import re
from typing import Optional

from chat_appliance.lib.errors import InvalidResetLinkError, JsonableError
from chat_appliance.actions.account import do_set_password
from chat_appliance.clients.send_email import EmailNotConfiguredError, Mailer, standard_email
from chat_appliance.lib.signed_links import make_token, token_parts, token_valid
from chat_appliance.models import Realm, UserProfile

log = logging.getLogger(__name__)

# Zulip's password reset links are valid for a day.
RESET_LINK_VALIDITY_SECONDS = 24 * 3600
RESET_PATH = "/accounts/password/reset/"
PURPOSE = "password-reset"


def _bound(user: UserProfile) -> list:
    return [user.password or "", user.delivery_email, str(user.is_active)]


def reset_token(secret: bytes, user: UserProfile, issued: Optional[int] = None) -> str:
    """The token of a reset link for `user`, issued now (or at `issued`, UNIX seconds)."""
    return make_token(secret, PURPOSE, [str(user.id)], _bound(user), issued)


def user_for_reset_token(secret: bytes, token: str) -> UserProfile:
    """The active account a token resets; InvalidResetLinkError when it is not valid now."""
    parts = token_parts(token, 1, RESET_LINK_VALIDITY_SECONDS)
    if parts is None or not parts[0].isdigit():
        raise InvalidResetLinkError()
    user = UserProfile.get_or_none(UserProfile.id == int(parts[0]))
    if user is None or not user.is_active or user.is_bot or not token_valid(secret, PURPOSE, token, _bound(user)):
        raise InvalidResetLinkError()
    return user


# A plain addr-spec (RFC 5322's dot-atom on both sides): no display name, no quotes, no angle
# brackets, no spaces. The form's address is repeated in the mail it sends, so anything else
# would let a stranger write the text of a mail that this server sends to someone else.
PLAIN_ADDRESS_RE = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
                              r"@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*")


def check_reset_address(email: str) -> str:
    """The form's address, stripped; JsonableError unless it is a plain address."""
    email = email.strip()
    if len(email) > 254 or not PLAIN_ADDRESS_RE.fullmatch(email):
        raise JsonableError("Enter a valid email address.")
    return email


def reset_account(realm: Realm, email: str) -> Optional[UserProfile]:
    """The account a reset form's address names in this organization (a person, active), or None."""
    user = UserProfile.get_by_login_email(email)
    if user is None or user.realm_id != realm.id or user.is_bot or not user.is_active:
        return None
    if user.delivery_email.lower() != email.strip().lower():
        return None  # only the real address receives mail; an API email is not a mailbox
    return user


def do_request_password_reset(realm: Realm, email: str, *, secret: bytes, mailer: Mailer,
                              allowed: bool = True) -> None:
    """Mail a reset link to the account with this address, or, for an address without an active
    account, a note saying there is none. Returns nothing either way, and the caller answers the
    same. `allowed` false (the address's rate limit) sends nothing, quietly."""
    if not allowed:
        log.warning("password reset for %r not mailed: rate limit for the address", email)
        return
    user = reset_account(realm, email)
    realm_url = realm.url.rstrip("/")
    try:
        if user is None:
            message = standard_email(
                noreply=mailer.noreply(), sender_name=realm.name, to_name="", to_email=email.strip(),
                subject=f"Password reset request for {realm.name}",
                paragraphs=[f"Someone (possibly you) asked to reset the password of {email.strip()} at {realm_url}.",
                            "There is no account with this address there, so nothing was changed. "
                            "If you did not ask, you can ignore this email."],
                footer=f"Sent by {realm.name} ({realm_url}).")
        else:
            link = realm_url + RESET_PATH + reset_token(secret, user)
            message = standard_email(
                noreply=mailer.noreply(), sender_name=realm.name, to_name=user.full_name,
                to_email=user.delivery_email, subject=f"Reset your password for {realm.name}",
                paragraphs=[f"Someone (possibly you) asked to reset the password of {user.delivery_email} "
                            f"at {realm_url}.",
                            "The link below sets a new password. It works once, within 24 hours. If you did not "
                            "ask, ignore this email: your password stays as it is."],
                link=("Reset password", link), footer=f"Sent by {realm.name} ({realm_url}).")
        mailer.send(message)
    except ValueError:
        log.warning("password reset for %r not mailed: not a usable address", email)
    except EmailNotConfiguredError:
        log.warning("password reset for %r not mailed: email is not configured (EMAIL_HOST)", email)


def do_reset_password(secret: bytes, token: str, new_password: str, *, password_method: str) -> UserProfile:
    """Set the password a valid reset link allows; the link (and any older one) then stops
    working. (The view ends the account's browser sessions.)"""
    user = user_for_reset_token(secret, token)
    do_set_password(user, new_password, password_method=password_method)
    return user
