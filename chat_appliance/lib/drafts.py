"""Reads of a user's drafts (actions/drafts.py changes them)."""

from chat_appliance.models import Draft


def user_drafts(user):
    """The user's drafts, most recently edited first (as GET /drafts and /register list them)."""
    return list(Draft.select().where(Draft.user_profile == user)
                .order_by(Draft.last_edit_time.desc(), Draft.id.desc()))
