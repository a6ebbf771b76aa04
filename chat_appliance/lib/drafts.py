"""Reads of a user's drafts (actions/drafts.py changes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.models import Draft
from chat_appliance.models.base import raw_select

if TYPE_CHECKING:
    from chat_appliance.models import UserProfile


def user_drafts(user: UserProfile) -> list[Draft]:
    """The user's drafts, most recently edited first (as GET /drafts and /register list them)."""
    return raw_select(Draft, '"user_profile_id" = {p} ORDER BY "last_edit_time" DESC, "id" DESC', user.id)
