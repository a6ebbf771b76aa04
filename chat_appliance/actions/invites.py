"""Invitations: email invitations, reusable links, revoking, and accepting one (sign-up).

Every invitation yields a link `<realm url>/join/<key>` that the web client's sign-up page takes,
and `do_accept_invitation` creates the account from it. An email invitation mails its link to
the address (and again on resend); without outgoing email the view refuses email invitations
and reusable links remain the way in.

Zulip's rules (facts, not code):
- Sending email invitations needs the organization's can_invite_users_group (default: members);
  reusable links need create_multiuse_invite_group (default: administrators). Guests never invite.
- Inviting as owner needs an owner; as administrator or moderator, an administrator.
- Channels given to the invitee must be visible to the inviter; channels other than the default
  ones need can_add_subscribers_group (default: members). Groups need the right to add members.
- The referrer, or an administrator (an owner for an owner's invitation), manages an invitation.
- invites_changed goes to the administrators and the invitation's referrer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import re
import secrets
import string
import time
from email.message import EmailMessage
from typing import List

from peewee import fn

from chat_appliance.db.connection import write_transaction
from chat_appliance.lib.access import access_stream_by_id
from chat_appliance.lib.errors import (
    InvalidInvitationError,
    InvitationFailedError,
    JsonableError,
    MissingArgumentError,
    OrganizationOwnerRequiredError,
)
from chat_appliance.lib.onboarding_settings import MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH, can_subscribe_other_users
from chat_appliance.clients.send_email import Mailer, standard_email
from chat_appliance.lib.signed_links import make_token, token_parts, token_valid
from chat_appliance.lib.system_bots import NOTIFICATION_BOT, system_bot
from chat_appliance.lib import event_catalogue
from chat_appliance.models import (
    ROLE_ADMINISTRATOR,
    ROLE_MODERATOR,
    ROLE_OWNER,
    Stream,
    UserGroup,
    UserGroupMembership,
    UserProfile,
    now,
)
from chat_appliance.models import INVITE_ACTIVE, INVITE_REVOKED, INVITE_USED, Invitation
from chat_appliance.actions.channels import create_subscription_rows, default_streams, notify_subscribed
from chat_appliance.actions.invite_status import notify_invites_changed
from chat_appliance.actions.messages import internal_send_direct_message
from chat_appliance.actions.user_groups import access_group, check_member_change_permission, notify_group
from chat_appliance.actions.users import (EMAIL_RE, check_email, check_full_name, check_not_placeholder, create_user_row,
                                          email_in_use, notify_user_added)
from chat_appliance.actions.welcome import send_welcome_message

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import Realm

KEY_LENGTH = 24
_KEY_ALPHABET = string.ascii_lowercase + string.digits


def check_invite_role(user: UserProfile, invite_as: int) -> None:
    """Owners invite owners; administrators invite administrators and moderators."""
    if invite_as == ROLE_OWNER and not user.is_owner:
        raise OrganizationOwnerRequiredError()
    if invite_as in (ROLE_OWNER, ROLE_ADMINISTRATOR, ROLE_MODERATOR) and not user.is_realm_admin:
        raise JsonableError("Must be an organization administrator")


def check_invite_streams(user: UserProfile, stream_ids: list[int]) -> list[int]:
    """The channels an invitee will join: each visible to the inviter; channels other than the
    default ones need the right to subscribe others."""

    streams = []
    for stream_id in stream_ids:
        try:
            streams.append(access_stream_by_id(user, stream_id))
        except JsonableError:
            raise JsonableError(f"Invalid channel ID {stream_id}. No invites were sent.") from None
    default_ids = set((user.realm.settings or {}).get("default_stream_ids", []))
    if any(s.id not in default_ids for s in streams) and not can_subscribe_other_users(user):
        raise JsonableError("You do not have permission to subscribe other users to channels.")
    return [s.id for s in streams]


def check_invite_groups(user: UserProfile, group_ids: list[Any]) -> list[Any]:
    """Groups the invitee will join: each one the inviter may add members to."""
    for group_id in group_ids:
        group = access_group(user.realm_id, group_id)
        if group.deactivated:
            raise JsonableError("Invalid user group")
        # Adding someone other than oneself: -1 stands for the invitee, who has no id yet.
        check_member_change_permission(user, group, [-1], [])
    return list(dict.fromkeys(group_ids))


def check_welcome_text(user: UserProfile, text: str | None) -> Any:
    """Only administrators choose the welcome text; for others it is always null."""
    if text is None or not user.is_realm_admin:
        return None
    if len(text) > MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH:
        raise JsonableError(f"welcome_message_custom_text is too long "
                            f"(limit: {MAX_WELCOME_MESSAGE_CUSTOM_TEXT_LENGTH} characters)")
    return text


def parse_invitee_emails(raw: str) -> list[str]:
    """Addresses separated by commas or newlines; `Name <address>` gives the address."""
    emails: list[str] = []
    for part in re.split(r"[,\n]", raw):
        named = re.search(r"<(?P<email>.*)>", part)
        email = (named.group("email") if named else part).strip()
        if email and email.lower() not in (e.lower() for e in emails):
            emails.append(email)
    return emails


def expiry_for(minutes: int) -> int:
    """The expiry timestamp for a validity in minutes (None: never)."""
    return None if minutes is None else now() + minutes * 60


def new_key() -> str:
    return "".join(secrets.choice(_KEY_ALPHABET) for _ in range(KEY_LENGTH))


def invite_link(realm: Realm, key: str) -> str:
    """The sign-up link of an invitation."""
    return f"{realm.url.rstrip('/')}/join/{key}"


def existing_account_errors(realm: Realm, emails: list[str]) -> list[Any]:
    """[(email, reason, deactivated)] for addresses that already have an account here."""
    errors = []
    for email in emails:
        user = UserProfile.get_or_none((UserProfile.realm == realm.id)
                                       & (fn.LOWER(UserProfile.delivery_email) == email.lower()))
        if user is None:
            continue
        if user.is_active:
            errors.append((email, "Already has an account.", False))
        else:
            errors.append((email, "Account has been deactivated.", True))
    return errors


def invitation_email(invite: Invitation, referrer: UserProfile, noreply: str) -> EmailMessage:
    """The mail carrying an email invitation's sign-up link."""
    realm = referrer.realm
    validity = ("It does not expire." if invite.expiry_date is None else
                f"It can be used until {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(invite.expiry_date))}.")
    return standard_email(
        noreply=noreply, sender_name=realm.name, to_name="", to_email=invite.email,
        subject=f"{referrer.full_name} invited you to join {realm.name}",
        paragraphs=[f"{referrer.full_name} ({referrer.delivery_email}) invited you to join {realm.name}, "
                    f"a team chat at {realm.url.rstrip('/')}.",
                    f"The link below creates your account for {invite.email}. {validity}"],
        link=(f"Join {realm.name}", invite_link(realm, invite.key)),
        footer=f"If you did not expect this invitation, you can ignore this email. Sent by {realm.name}.")


def send_invitation_emails(invites: List[Invitation], referrer: UserProfile, mailer: Mailer) -> None:
    """Mail each invitation its link (after the commit: a mail never announces a rolled-back row)."""
    for invite in invites:
        mailer.send(invitation_email(invite, referrer, mailer.noreply()))


def do_invite_users(user: UserProfile, emails: list[str], *, mailer: Mailer, stream_ids: list[int],
                    group_ids: list[Any], invite_as: int, expires_in_minutes: int,
                    include_realm_default_subscriptions: bool, notify_referrer_on_join: bool,
                    welcome_message_custom_text: Any) -> list[Any]:
    """Create an email invitation per address. Invalid addresses refuse the whole request; addresses
    that already have accounts are skipped and reported (INVITATION_FAILED, sent_invitations
    telling whether any other was invited)."""

    bad = [(e, "Invalid address.", False) for e in emails if not EMAIL_RE.match(e) or len(e) > 254]
    skipped = existing_account_errors(user.realm, [e for e in emails if not any(e == b[0] for b in bad)])
    if bad:
        raise InvitationFailedError("Some emails did not validate, so we didn't send any invitations.",
                              bad + skipped, sent_invitations=False)
    if len(skipped) == len(emails):
        raise InvitationFailedError("We weren't able to invite anyone.", skipped, sent_invitations=False)
    skipped_emails = {e for e, _msg, _deactivated in skipped}
    created = []
    with write_transaction():
        for email in emails:
            if email in skipped_emails:
                continue
            created.append(Invitation.create(
                realm=user.realm_id, referred_by=user.id, email=email, key=new_key(),
                invited_as=invite_as, stream_ids=stream_ids, group_ids=group_ids,
                include_realm_default_subscriptions=include_realm_default_subscriptions,
                notify_referrer_on_join=notify_referrer_on_join,
                welcome_message_custom_text=welcome_message_custom_text,
                expiry_date=expiry_for(expires_in_minutes)))
    notify_invites_changed(user.realm_id, user.id)
    send_invitation_emails(created, user, mailer)
    return skipped


def do_create_multiuse_invite(user: UserProfile, *, stream_ids: list[int], group_ids: list[Any], invite_as: int,
                              expires_in_minutes: int, include_realm_default_subscriptions: bool,
                              welcome_message_custom_text: Any) -> str:
    """A reusable invitation link; returns its URL."""
    with write_transaction():
        invite = Invitation.create(realm=user.realm_id, referred_by=user.id, is_multiuse=True, key=new_key(),
                                   invited_as=invite_as, stream_ids=stream_ids, group_ids=group_ids,
                                   include_realm_default_subscriptions=include_realm_default_subscriptions,
                                   notify_referrer_on_join=False,
                                   welcome_message_custom_text=welcome_message_custom_text,
                                   expiry_date=expiry_for(expires_in_minutes))
    notify_invites_changed(user.realm_id, user.id)
    return invite_link(user.realm, invite.key)


def is_unexpired(invite: Invitation, at: int | None = None) -> bool:
    return invite.expiry_date is None or invite.expiry_date >= (now() if at is None else at)


def invite_dict(invite: Invitation, realm: Realm) -> JSONDict:
    """An invitation as GET /invites lists it."""
    data = {
        "id": invite.id,
        "invited_by_user_id": invite.referred_by_id,
        "invited": invite.invited,
        "expiry_date": invite.expiry_date,
        "invited_as": invite.invited_as,
        "is_multiuse": invite.is_multiuse,
    }
    if invite.is_multiuse:
        data["link_url"] = invite_link(realm, invite.key)
    else:
        data["email"] = invite.email
        data["notify_referrer_on_join"] = invite.notify_referrer_on_join
    return data


def invites_controlled_by(user: UserProfile) -> list[JSONDict]:
    """Unexpired, pending invitations the user manages: all of the organization's for
    administrators, their own for others."""
    query = Invitation.select().where((Invitation.realm == user.realm_id) & (Invitation.status == INVITE_ACTIVE)
                                      & (Invitation.expiry_date.is_null() | (Invitation.expiry_date >= now())))
    if not user.is_realm_admin:
        query = query.where(Invitation.referred_by == user.id)
    rows = list(query.order_by(Invitation.is_multiuse, Invitation.id))
    return [invite_dict(invite, user.realm) for invite in rows]


def access_invite_for_update(user: UserProfile, invite_id: int, *, multiuse: bool) -> Invitation:
    """An invitation of this kind the user manages, or 'No such invitation'."""
    invite = Invitation.get_or_none((Invitation.id == invite_id) & (Invitation.realm == user.realm_id)
                                    & (Invitation.is_multiuse == multiuse))
    if invite is None or (not multiuse and invite.status != INVITE_ACTIVE):
        raise JsonableError("No such invitation")
    if invite.referred_by_id != user.id:
        check_invite_role(user, invite.invited_as)
        if not user.is_realm_admin:
            raise JsonableError("Must be an organization administrator")
    if multiuse and invite.status == INVITE_REVOKED:
        raise JsonableError("Invitation has already been revoked")
    return invite


def do_revoke_invite(invite: Invitation) -> None:
    """Revoke an email invitation or a reusable link: its link stops working."""
    with write_transaction():
        Invitation.update(status=INVITE_REVOKED).where(Invitation.id == invite.id).execute()
    invite.status = INVITE_REVOKED
    notify_invites_changed(invite.realm_id, invite.referred_by_id)


def do_resend_invite(user: UserProfile, invite: Invitation, mailer: Mailer) -> None:
    """Mail a pending, unexpired invitation again, as from `user`, with the same link; as on
    Zulip, its invitation time becomes now (the expiry stays)."""
    if not is_unexpired(invite):
        raise JsonableError("The invitation link has expired or been deactivated.")
    with write_transaction():
        Invitation.update(invited=now()).where(Invitation.id == invite.id).execute()
    invite.invited = now()
    notify_invites_changed(invite.realm_id, invite.referred_by_id)
    send_invitation_emails([invite], user, mailer)


# --- accepting an invitation (the sign-up page) ------------------------------------------


def get_valid_invitation(key: str) -> Invitation:
    """The invitation this key opens: pending (or a reusable link), not revoked, not expired.
    Raises InvalidInvitationError otherwise."""
    invite = Invitation.get_or_none(Invitation.key == key) if isinstance(key, str) else None
    if invite is None:
        raise InvalidInvitationError("Whoops. We couldn't find your invitation link in the system.")
    if invite.status != INVITE_ACTIVE or not is_unexpired(invite):
        raise InvalidInvitationError()
    return invite


# A reusable link's sign-up confirms its address by a mailed link, valid this long (as a password
# reset's). The token names the invitation and the address (hex: token parts hold no "-"), and is
# bound to the invitation's status, so that a revoked link's confirmations stop working too.
JOIN_CONFIRMATION_SECONDS = 24 * 3600
JOIN_PURPOSE = "join-confirmation"


def join_confirmation_token(secret: bytes, invite: Invitation, email: str, issued: int | None = None) -> str:
    return make_token(secret, JOIN_PURPOSE, [str(invite.id), email.lower().encode().hex()], [str(invite.status)], issued)


def confirmed_join_email(secret: bytes, invite: Invitation, token: str) -> str:
    """The address a join confirmation token confirms for this reusable link; JsonableError when
    it is not valid now."""
    parts = token_parts(token, 2, JOIN_CONFIRMATION_SECONDS) if isinstance(token, str) else None
    if parts is None or parts[0] != str(invite.id) or not token_valid(secret, JOIN_PURPOSE, token, [str(invite.status)]):
        raise JsonableError("The confirmation link has expired or is not valid.")
    try:
        return bytes.fromhex(parts[1]).decode()
    except ValueError:
        raise JsonableError("The confirmation link has expired or is not valid.") from None


def do_send_join_confirmation(key: str, email: str | None, *, secret: bytes, mailer: Mailer) -> str:
    """A reusable link's sign-up with email configured: mail the address a link that confirms it
    (the account is made only when it is followed, so nobody can sign up, nor have anyone's
    pending invitation revoked, with an address that is not theirs). Returns the address."""
    invite = get_valid_invitation(key)
    if not invite.is_multiuse:
        raise JsonableError("This invitation does not need a confirmation.")
    if not email:
        raise MissingArgumentError("email")
    realm = invite.realm
    email = check_not_placeholder(realm, check_email(email))
    if email_in_use(realm, email):
        raise JsonableError(f"Email '{email}' already in use")
    realm_url = realm.url.rstrip("/")
    link = f"{realm_url}/join/{invite.key}?confirm={join_confirmation_token(secret, invite, email)}"
    try:
        mailer.send(standard_email(
            noreply=mailer.noreply(), sender_name=realm.name, to_name="", to_email=email,
            subject=f"Confirm your email address for {realm.name}",
            paragraphs=[f"Someone (possibly you) asked to join {realm.name} ({realm_url}) with this address "
                        "through an invitation link.",
                        "Follow the link below to create your account. It works within 24 hours. If you did not "
                        "ask, ignore this email: no account is made."],
            link=("Confirm and create your account", link), footer=f"Sent by {realm.name} ({realm_url})."))
    except ValueError:
        raise JsonableError(f"Invalid email '{email}'") from None
    return email


def do_accept_invitation(key: str, full_name: str, password: str, *, email: str | None = None,
                         password_method: str | None) -> UserProfile:
    """Create the account an invitation offers and return it.

    An email invitation creates the invited address (`email`, if given, must match it); a reusable
    link needs `email`. The account gets the invited role, the invitation's channels (plus the
    default channels when it asked for them) and groups, the Welcome Bot's messages, and the
    referrer is told when they asked to be. An email invitation is used up; other pending
    invitations to the same address are revoked.
    """

    invite = get_valid_invitation(key)
    realm = invite.realm
    if invite.is_multiuse:
        if not email:
            raise JsonableError("Missing 'email' argument", code="REQUEST_VARIABLE_MISSING", var_name="email")
        email = check_email(email)
    else:
        if email and email.strip().lower() != invite.email.lower():
            raise JsonableError("This invitation is for another email address.")
        email = invite.email
    full_name = check_full_name(full_name)
    if not password:
        raise JsonableError("Password can't be empty.")
    referrer = invite.referred_by
    with write_transaction():
        # Read again inside the write lock: a concurrent sign-up may have used or revoked it.
        invite = get_valid_invitation(key)
        if email_in_use(realm, email):
            raise JsonableError(f"Email '{email}' already in use")
        user = create_user_row(realm, email, full_name, password=password, role=invite.invited_as,
                               password_method=password_method)
        streams = list(Stream.select().where(Stream.id.in_(invite.stream_ids or [0]) & ~Stream.deactivated
                                             & (Stream.realm == realm.id)))
        if invite.include_realm_default_subscriptions:
            streams += [s for s in default_streams(realm) if s not in streams]
        added, _already = create_subscription_rows(streams, [user])
        group_ids = [g.id for g in UserGroup.select().where(UserGroup.id.in_(invite.group_ids or [0])
                                                            & ~UserGroup.deactivated)]
        add_to_groups(user, group_ids)
        if not invite.is_multiuse:
            Invitation.update(status=INVITE_USED).where(Invitation.id == invite.id).execute()
        Invitation.update(status=INVITE_REVOKED).where(
            (Invitation.realm == realm.id) & ~Invitation.is_multiuse & (Invitation.status == INVITE_ACTIVE)
            & (fn.LOWER(Invitation.email) == email.lower())).execute()
    notify_user_added(user)
    notify_subscribed(added)
    for group_id in group_ids:

        notify_group(realm.id, event_catalogue.user_group_add_members(group_id, [user.id]))
    send_join_messages(user, invite, referrer)
    notify_invites_changed(realm.id, invite.referred_by_id)
    return user


def add_to_groups(user: UserProfile, group_ids: list[Any]) -> None:
    """Direct membership in these groups; the caller holds the transaction."""
    for group_id in group_ids:
        UserGroupMembership.get_or_create(user_group=group_id, user_profile=user.id)


def send_join_messages(user: UserProfile, invite: Invitation, referrer: UserProfile) -> None:
    """The Welcome Bot's messages to the new account, and Notification Bot's note to the referrer."""
    send_welcome_message(user, custom_text=invite.welcome_message_custom_text)
    if invite.notify_referrer_on_join and referrer is not None and referrer.is_active:

        bot = system_bot(user.realm, NOTIFICATION_BOT[0])
        internal_send_direct_message(
            bot, referrer, f"@_**{user.full_name}|{user.id}** joined {user.realm.name} with your invitation.")
