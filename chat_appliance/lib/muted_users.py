"""Reads of the users someone muted (actions/muted_users.py changes them)."""

from chat_appliance.models import MutedUser


def muted_users_list(user):
    """[{id, timestamp}] in the order the users were muted."""
    rows = MutedUser.select().where(MutedUser.user_profile == user).order_by(MutedUser.date_muted, MutedUser.id)
    return [{"id": row.muted_user_id, "timestamp": row.date_muted} for row in rows]
