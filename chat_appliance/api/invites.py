"""Invitations: /invites, /invites/multiuse, revoke and resend."""

from flask import Blueprint, current_app

from chat_appliance.actions.invites import (
    access_invite_for_update,
    check_invite_groups,
    check_invite_role,
    check_invite_streams,
    check_welcome_text,
    do_create_multiuse_invite,
    do_invite_users,
    do_resend_invite,
    do_revoke_invite,
    invites_controlled_by,
    parse_invitee_emails,
)
from chat_appliance.lib.errors import EmailInvitationsUnavailableError, InvitationFailedError, JsonableError
from chat_appliance.lib.onboarding_settings import can_create_multiuse_invite, can_invite_users_by_email
from chat_appliance.web.context import mailer
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_bool, check_int, int_range, list_of, one_of
from chat_appliance.models import ROLE_MEMBER, ROLES

bp = Blueprint("invites", __name__)

DEFAULT_EXPIRY = object()


# The longest validity accepted (about 190 years): its expiry must fit a database integer.
MAX_EXPIRY_MINUTES = 10**8


def check_expiry_minutes(var_name, value):
    """Minutes until the invitation expires, or JSON null for never."""
    if value in ("null", None):
        return None
    return int_range(1, MAX_EXPIRY_MINUTES)(var_name, value)


def check_optional_text(var_name, value):
    """A string, or JSON null."""
    return None if value == "null" else value


INVITE_PARAMS = dict(
    invite_expires_in_minutes=Param(check_expiry_minutes, default=DEFAULT_EXPIRY),
    invite_as=Param(one_of(*ROLES, parser=check_int), default=ROLE_MEMBER),
    group_ids=Param(list_of(check_int), default=[]),
    include_realm_default_subscriptions=Param(check_bool, default=False),
    welcome_message_custom_text=Param(check_optional_text, default=None),
)


def require_email():
    """The server's mailer, if it can send; EmailInvitationsUnavailableError otherwise."""
    if not mailer().configured:
        raise EmailInvitationsUnavailableError()
    return mailer()


def require_not_guest(user):
    """Guests never manage invitations (Zulip's require_member_or_admin)."""
    if user.is_guest:
        raise JsonableError("Not allowed for guest users")


def invitation_options(user, invite_as, stream_ids, group_ids, invite_expires_in_minutes,
                       include_realm_default_subscriptions, welcome_message_custom_text):
    """The checks shared by both kinds of invitation (after the role check), in Zulip's order;
    returns the action's arguments."""
    return {
        "stream_ids": check_invite_streams(user, stream_ids),
        "group_ids": check_invite_groups(user, group_ids),
        "invite_as": invite_as,
        "expires_in_minutes": (current_app.config["INVITATION_LINK_VALIDITY_MINUTES"]
                               if invite_expires_in_minutes is DEFAULT_EXPIRY else invite_expires_in_minutes),
        "include_realm_default_subscriptions": include_realm_default_subscriptions,
        "welcome_message_custom_text": check_welcome_text(user, welcome_message_custom_text),
    }


@bp.post("/invites")
@endpoint(invitee_emails=Param(), stream_ids=Param(list_of(check_int)),
          notify_referrer_on_join=Param(check_bool, default=True), **INVITE_PARAMS)
def send_invites(user, invitee_emails, stream_ids, notify_referrer_on_join, invite_as, group_ids,
                 invite_expires_in_minutes, include_realm_default_subscriptions, welcome_message_custom_text):
    """Invite addresses to join: each gets a mail with its sign-up link."""
    require_not_guest(user)
    if not can_invite_users_by_email(user):
        raise JsonableError("Insufficient permission")
    check_invite_role(user, invite_as)
    emails = parse_invitee_emails(invitee_emails)
    if not emails:
        raise JsonableError("You must specify at least one email address.")
    options = invitation_options(user, invite_as, stream_ids, group_ids, invite_expires_in_minutes,
                                 include_realm_default_subscriptions, welcome_message_custom_text)
    skipped = do_invite_users(user, emails, mailer=require_email(), notify_referrer_on_join=notify_referrer_on_join,
                              **options)
    if skipped:
        raise InvitationFailedError("Some of those addresses are already using Zulip, so we didn't send them an "
                              "invitation. We did send invitations to everyone else!", skipped, sent_invitations=True)


@bp.get("/invites")
@endpoint()
def get_invites(user):
    """Unexpired invitations the requester manages."""
    require_not_guest(user)
    return {"invites": invites_controlled_by(user)}


@bp.post("/invites/multiuse")
@endpoint(stream_ids=Param(list_of(check_int), default=[]), **INVITE_PARAMS)
def create_multiuse_invite(user, stream_ids, invite_as, group_ids, invite_expires_in_minutes,
                           include_realm_default_subscriptions, welcome_message_custom_text):
    """A reusable invitation link."""
    require_not_guest(user)
    if not can_create_multiuse_invite(user):
        raise JsonableError("Insufficient permission")
    check_invite_role(user, invite_as)
    options = invitation_options(user, invite_as, stream_ids, group_ids, invite_expires_in_minutes,
                                 include_realm_default_subscriptions, welcome_message_custom_text)
    return {"invite_link": do_create_multiuse_invite(user, **options)}


@bp.delete("/invites/<int:invite_id>")
@endpoint()
def revoke_invite(user, invite_id):
    """Revoke an email invitation."""
    require_not_guest(user)
    do_revoke_invite(access_invite_for_update(user, invite_id, multiuse=False))


@bp.delete("/invites/multiuse/<int:invite_id>")
@endpoint()
def revoke_multiuse_invite(user, invite_id):
    """Revoke a reusable invitation link."""
    require_not_guest(user)
    do_revoke_invite(access_invite_for_update(user, invite_id, multiuse=True))


@bp.post("/invites/<int:invite_id>/resend")
@endpoint()
def resend_invite(user, invite_id):
    """Mail an email invitation again."""
    require_not_guest(user)
    invite = access_invite_for_update(user, invite_id, multiuse=False)
    do_resend_invite(user, invite, require_email())
