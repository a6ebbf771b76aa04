"""Presence: what each user's clients last reported, and its two wire formats.

Stored per user (UserPresence, so it survives a restart): when a client was last connected
(idle or active) and when the user was last active. Served in Zulip's two formats:
* modern, keyed by user id: {"active_timestamp", "idle_timestamp"} (slim_presence, or
  last_update_id on POST /users/me/presence);
* legacy, keyed by email: {"website": {client, status, timestamp, pushable}, "aggregated":
  {client, status, timestamp}} — the one zulip-terminal 0.7.0 and the zulip library read.
A `presence` event goes to the organization when a user comes back online, or becomes active
again after being idle (Zulip's rule: no event for the periodic refreshes of someone whose state
the others already know).
"""

from __future__ import annotations

from typing import Any

import time

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.user_settings import user_setting
from chat_appliance.models import UserPresence, UserProfile, now
from chat_appliance.lib.presence import OFFLINE_THRESHOLD_SECONDS, legacy_presence
from chat_appliance.lib import event_catalogue


def do_update_user_presence(user: Any, status: Any, *, new_user_input: Any) -> Any:
    """Record a ping; tell the organization if the user came back online. Idle pings never move
    the active time; `new_user_input` is accepted but, as in Zulip, the status decides."""
    timestamp = now()
    with write_transaction():
        presence = UserPresence.get_or_none(UserPresence.user_profile == user)
        was_offline = presence is None or presence.last_connected_time + OFFLINE_THRESHOLD_SECONDS < timestamp
        was_idle = presence is None or presence.last_active_time is None \
            or presence.last_active_time + OFFLINE_THRESHOLD_SECONDS < timestamp
        newest = UserPresence.select(UserPresence.last_update_id).order_by(UserPresence.last_update_id.desc()).first()
        if presence is None:
            presence = UserPresence(user_profile=user)
        presence.last_connected_time = timestamp
        if status == "active":
            presence.last_active_time = timestamp
        presence.last_update_id = (newest.last_update_id if newest else 0) + 1
        presence.save()
    became_active = status == "active" and was_idle
    if (was_offline or became_active) and user_setting(user, "presence_enabled") and not user.is_bot:
        publish_presence_event(user, presence)
    return presence


def publish_presence_event(user: Any, presence: Any) -> None:
    """The legacy-format presence event, to every active human of the organization."""
    event = event_catalogue.presence(user.id, user.email, time.time(),
                                     {"website": legacy_presence(presence)["website"]})
    audience = UserProfile.select(UserProfile.id).where((UserProfile.realm == user.realm_id) & UserProfile.is_active)
    publish(event, [u.id for u in audience])


def user_presence(user: Any) -> Any:
    """The user's stored presence, or None."""
    return UserPresence.get_or_none(UserPresence.user_profile == user)
