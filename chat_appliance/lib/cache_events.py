"""Which committed events leave the app's caches stale, and the bus listeners that empty them.

Kept apart from the caches' own modules (lib/rendering.py, lib/messages.py) so that the app can
listen from its start without loading what fills the caches: the renderer's context and the
message serializers load with the first request that needs them (a shorter start-up).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.db import runtime

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict

# Event types after which mentions, channel links or linkifiers may resolve differently: the
# organization's render context (lib/rendering.py) is dropped.
INVALIDATING_EVENTS = frozenset({"realm_user", "user_group", "stream", "realm_linkifiers", "realm_emoji", "realm"})

# Event types that never change an existing message object (flags are not cached). Any other
# event (an edit, a move, a deletion, a reaction, a renamed user or channel, an organization
# setting ...) empties the message cache (lib/messages.py): correct by construction, and rare
# next to these.
HARMLESS_EVENTS = frozenset({
    "message", "typing", "presence", "update_message_flags", "heartbeat", "subscription", "user_topic",
    "muted_users", "alert_words", "drafts", "saved_snippets", "user_status", "onboarding_steps",
    "scheduled_messages", "reminders", "attachment", "has_zoom_token", "navigation_view", "invites_changed",
    "restart", "web_reload_client",
})


# Event types after which a message may be in another conversation, or in none: the cache of
# messages' conversations (events/state.py) is emptied. A new message is in no entry yet, and
# nothing else changes a message's channel, topic or recipient.
CONVERSATION_EVENTS = frozenset({"update_message", "delete_message"})


def invalidate_on_event(event: JSONDict, _user_ids: list[int]) -> None:
    """Event listener: drop the cached render contexts after a change they may depend on."""
    if event.get("type") in INVALIDATING_EVENTS:
        runtime.current().render_contexts.clear()


def invalidate_messages_on_event(event: JSONDict, _user_ids: list[int]) -> None:
    """Event listener: empty the message cache after any change that may alter a message object,
    and the cache of messages' conversations after a move or a deletion."""
    kind = event.get("type")
    if kind not in HARMLESS_EVENTS:
        runtime.current().messages.clear()
    if kind in CONVERSATION_EVENTS:
        runtime.current().conversations.clear()
