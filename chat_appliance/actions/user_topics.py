"""Topic visibility (user_topics): mute, unmute, follow, reset; the user's policies."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib import event_catalogue
from chat_appliance.models import TOPIC_INHERIT, UserTopic, now

if TYPE_CHECKING:
    from chat_appliance.models import UserProfile
    from chat_appliance.models import Stream

def set_topic_visibility(user: UserProfile, stream: Stream, topic: str, policy: int) -> None:
    """Insert or update a user_topics row; the caller holds the transaction."""
    topic_key = topic.casefold()
    updated = (UserTopic.update(visibility_policy=policy, topic=topic, last_updated=now())
               .where((UserTopic.user_profile == user) & (UserTopic.stream == stream)
                      & (UserTopic.topic_key == topic_key)).execute())
    if not updated:
        UserTopic.create(user_profile=user, stream=stream, topic=topic, topic_key=topic_key,
                         visibility_policy=policy)


def do_set_user_topic(user: UserProfile, stream: Stream, topic: str, policy: int) -> None:
    """Store a topic visibility policy (TOPIC_INHERIT removes it) and tell the user's clients."""
    with write_transaction():
        if policy == TOPIC_INHERIT:
            UserTopic.delete().where((UserTopic.user_profile == user) & (UserTopic.stream == stream)
                                     & (UserTopic.topic_key == topic.casefold())).execute()
        else:
            set_topic_visibility(user, stream, topic, policy)
        publish(event_catalogue.user_topic(stream.id, topic, policy, now()), [user.id])
