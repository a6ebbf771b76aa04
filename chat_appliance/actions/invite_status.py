"""Invitation changes other actions make: revoking a deactivated account's invitations and
telling who follows invitations (kept apart from invites.py, which creates accounts and so
imports users.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.events.bus import publish
from chat_appliance.lib.audiences import invites_changed_audience
from chat_appliance.lib import event_catalogue
from chat_appliance.models import INVITE_ACTIVE, INVITE_REVOKED, Invitation

if TYPE_CHECKING:
    from chat_appliance.models import UserProfile


def notify_invites_changed(realm_id: int, referrer_id: int | None) -> None:
    publish(event_catalogue.invites_changed(), invites_changed_audience(realm_id, referrer_id))


def revoke_invitations_by(user: UserProfile) -> int:
    """Revoke the pending invitations a deactivated account made (Zulip does); the caller holds the
    transaction. Returns how many."""
    return Invitation.update(status=INVITE_REVOKED).where(
        (Invitation.referred_by == user.id) & (Invitation.status == INVITE_ACTIVE)).execute()
