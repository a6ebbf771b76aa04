"""Reads of a user's drafts (actions/drafts.py changes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.models import Draft

if TYPE_CHECKING:
    from chat_appliance.models import UserProfile


def user_drafts(user: UserProfile) -> list[Draft]:
    """The user's drafts, most recently edited first (as GET /drafts and /register list them)."""
    return list(Draft.select().where(Draft.user_profile == user)
                .order_by(Draft.last_edit_time.desc(), Draft.id.desc()))
