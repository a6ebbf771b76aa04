"""Reads of a user's topic visibility policies (actions/user_topics.py changes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from chat_appliance.models import TOPIC_INHERIT
from chat_appliance.models.base import query_rows

if TYPE_CHECKING:
    from chat_appliance.models import UserProfile


class UserTopicRow(NamedTuple):
    """A topic's policy for a user, with its channel's name (legacy muted_topics names it)."""

    stream_id: int
    topic: str
    visibility_policy: int
    last_updated: int
    stream_name: str


# Hand-written: /register reads it twice (user_topics, muted_topics), and building it in peewee
# cost more than running it.
USER_TOPICS_SQL = (
    'SELECT t."stream_id", t."topic", t."visibility_policy", t."last_updated", s."name"'
    ' FROM "user_topic" t JOIN "stream" s ON s."id" = t."stream_id"'
    ' WHERE t."user_profile_id" = {p} AND t."visibility_policy" != {p} ORDER BY t."id"')


def user_topic_rows(user: UserProfile) -> list[UserTopicRow]:
    """The user's topics with a policy other than the default, with their channels' names,
    oldest first (/register's user_topics and muted_topics, GET /user_topics)."""
    return [UserTopicRow(*row) for row in query_rows(USER_TOPICS_SQL, user.id, TOPIC_INHERIT)]
