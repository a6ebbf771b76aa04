"""Reads of a user's topic visibility policies (actions/user_topics.py changes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chat_appliance.models import TOPIC_INHERIT, Stream, UserTopic

if TYPE_CHECKING:
    from chat_appliance.models import UserProfile


def user_topic_rows(user: UserProfile) -> list[Any]:
    """The user's topics with a policy other than the default, with their channels, oldest first
    (/register's user_topics and muted_topics, GET /user_topics)."""
    return list(UserTopic.select(UserTopic, Stream).join(Stream)
                .where((UserTopic.user_profile == user) & (UserTopic.visibility_policy != TOPIC_INHERIT))
                .order_by(UserTopic.id))
