"""Drafts kept on the server so that a user's clients share them (Zulip's draft synchronization).

A draft arrives as a JSON object inside the `drafts` / `draft` parameter, so the params layer's
checks (types, NUL bytes) do not reach its fields: `check_draft` does them. Events go to every
queue of the draft's owner and nobody else's, as Zulip sends them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import math
import time

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.access import access_stream_by_id
from chat_appliance.lib.errors import JsonableError, ParamError
from chat_appliance.lib.validators import check_string
from chat_appliance.lib.serializers import draft_dict
from chat_appliance.lib.user_settings import user_setting
from chat_appliance.lib import event_catalogue
from chat_appliance.models import DRAFT_TYPES, MAX_DATABASE_INT, Draft, UserProfile

if TYPE_CHECKING:
    from chat_appliance.config import Limits
    from chat_appliance.lib.types import JSONDict

DRAFT_FIELDS = ("type", "to", "topic", "content")
OPTIONAL_DRAFT_FIELDS = ("timestamp",)
# What Zulip appends when it shortens an over-long draft (it truncates rather than refuses,
# so a client's autosave never fails on length).
TOPIC_TRUNCATED = "..."
CONTENT_TRUNCATED = "\n[message truncated]"


def check_drafts_enabled(user: UserProfile) -> None:
    """Every draft endpoint refuses while the user has turned synchronization off."""
    if not user_setting(user, "enable_drafts_synchronization"):
        raise JsonableError("User has disabled synchronizing drafts.")


def truncate(text: str, limit: int, marker: str) -> str:
    """At most `limit` characters, the end replaced by `marker` when shortened."""
    return text if len(text) <= limit else text[:limit - len(marker)] + marker


def _check_shape(var_name, raw):
    """The object's keys and their JSON types; `id` and unknown keys are refused."""
    if not isinstance(raw, dict):
        raise ParamError(f"{var_name} is not a dict")
    for key in raw:
        if key not in DRAFT_FIELDS + OPTIONAL_DRAFT_FIELDS:
            raise ParamError(f"{var_name} has an unexpected key '{key}'")
    for key in DRAFT_FIELDS:
        if key not in raw:
            raise ParamError(f"{var_name} is missing '{key}'")
    if raw["type"] not in DRAFT_TYPES:
        raise ParamError(f"Invalid {var_name}['type']")
    if not isinstance(raw["to"], list):
        raise ParamError(f"{var_name}['to'] is not a list")
    for index, item in enumerate(raw["to"]):
        if isinstance(item, bool) or not isinstance(item, int):
            raise ParamError(f"{var_name}['to'][{index}] is not an integer")
        if abs(item) > MAX_DATABASE_INT:
            raise ParamError(f"{var_name}['to'][{index}] is out of range")
    check_string(f"{var_name}['topic']", raw["topic"])
    check_string(f"{var_name}['content']", raw["content"])
    timestamp = raw.get("timestamp")
    if timestamp is not None and (isinstance(timestamp, bool) or not isinstance(timestamp, (int, float))):
        raise ParamError(f"{var_name}['timestamp'] is not a number")
    # Python's json accepts NaN and Infinity.
    if timestamp is not None and not (math.isfinite(timestamp) and abs(timestamp) <= MAX_DATABASE_INT):
        raise ParamError(f"{var_name}['timestamp'] is out of range")


def _check_audience(user, draft_type, to):
    """The normalized `to`: the one accessible channel, or existing users minus the requester."""
    if draft_type == "stream":
        if len(to) != 1:
            raise JsonableError("Must specify exactly 1 channel ID for channel messages")
        return [access_stream_by_id(user, to[0]).id]
    if draft_type == "private" and to:
        wanted = set(to)
        found = {u.id for u in UserProfile.select(UserProfile.id)
                 .where(UserProfile.id.in_(list(wanted)) & (UserProfile.realm == user.realm_id))}
        missing = sorted(wanted - found)
        if missing:
            raise JsonableError(f"Invalid user ID {missing[0]}")
        # As a direct message's recipients: the others, or the requester alone for a note to self.
        return sorted(wanted - {user.id}) or [user.id]
    return []


def check_draft(user: UserProfile, var_name: str, raw: Any, limits: Limits) -> JSONDict:
    """Validate one draft object; return the fields to store (never an `id`)."""
    _check_shape(var_name, raw)
    content = raw["content"].rstrip().lstrip("\n")
    # Zulip's texts for message bodies, which clients already show.
    if not content:
        raise JsonableError("Message must not be empty")
    if "\x00" in content:
        raise JsonableError("Message must not contain null bytes")
    topic = ""
    if raw["type"] == "stream":
        topic = truncate(raw["topic"], limits.max_topic_length, TOPIC_TRUNCATED)
        if "\x00" in topic:
            raise JsonableError("Topic must not contain null bytes")
    timestamp = raw.get("timestamp")
    if timestamp is None:
        timestamp = time.time()
    if timestamp < 0:
        raise JsonableError("Timestamp must not be negative.")
    return {
        "type": raw["type"],
        "to": _check_audience(user, raw["type"], raw["to"]),
        "topic": topic,
        "content": truncate(content, limits.max_message_length, CONTENT_TRUNCATED),
        "last_edit_time": int(timestamp),
    }


def access_draft(user: UserProfile, draft_id: int) -> Draft:
    """One of the user's own drafts; anyone else's, like a missing one, is 'Draft does not exist'
    (HTTP 404 with code BAD_REQUEST, as Zulip answers)."""
    draft = None
    if draft_id <= MAX_DATABASE_INT:
        draft = Draft.get_or_none((Draft.id == draft_id) & (Draft.user_profile == user))
    if draft is None:
        raise JsonableError("Draft does not exist", http_status=404)
    return draft


def do_create_drafts(user: UserProfile, validated: list[JSONDict]) -> list[Draft]:
    """Store already-validated drafts in one transaction (all or none); return them."""
    with write_transaction():
        drafts = [Draft.create(user_profile=user, **fields) for fields in validated]
    if drafts:
        publish(event_catalogue.drafts_add([draft_dict(d) for d in drafts]), [user.id])
    return drafts


def do_edit_draft(draft: Draft, fields: Any) -> None:
    """Replace a draft by a validated one, keeping its id."""
    with write_transaction():
        for key, value in fields.items():
            setattr(draft, key, value)
        draft.save()
    publish(event_catalogue.drafts_update(draft_dict(draft)), [draft.user_profile_id])


def do_delete_draft(draft: Draft) -> None:
    """Delete a draft."""
    draft_id = draft.id
    with write_transaction():
        draft.delete_instance()
    publish(event_catalogue.drafts_remove(draft_id), [draft.user_profile_id])


def delete_all_drafts(user: UserProfile) -> None:
    """Forget every stored draft: what turning synchronization off does. Call inside the settings
    transaction. No events: clients keep their local copies (Zulip's documented behaviour)."""
    Draft.delete().where(Draft.user_profile == user).execute()
