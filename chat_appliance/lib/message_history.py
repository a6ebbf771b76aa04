"""A message's edit history as GET /messages/{id}/history shows it, and the HTML diff of
content edits.

Only Message.edit_history is stored (most recent first, each entry the API's edit_history
shape: what changed and its previous value). Snapshots are rebuilt by walking it backwards from
the message's current state, so both forms come from the one record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import difflib
import re

from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.messages import display_topic

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import Message, Realm

# An HTML tag, a run of whitespace, or a run of other text: the units the diff compares.
TOKEN_RE = re.compile(r"<[^>]*>|\s+|[^<\s]+")
CONTENT_KEYS = ("prev_content", "prev_rendered_content")


def html_diff(old_html: str, new_html: str) -> str:
    """The new HTML with inserted text wrapped in highlight_text_inserted spans and removed text
    put back, wrapped in highlight_text_deleted spans (tags are never wrapped)."""
    old, new = TOKEN_RE.findall(old_html), TOKEN_RE.findall(new_html)
    out = []

    def wrap(tokens, css_class):
        text = [t for t in tokens if not t.startswith("<")]
        if "".join(text).strip():
            out.append(f'<span class="{css_class}">{"".join(text)}</span>')

    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op == "equal":
            out.extend(new[j1:j2])
            continue
        if op in ("delete", "replace"):
            wrap(old[i1:i2], "highlight_text_deleted")
        if op in ("insert", "replace"):
            # Keep the new markup, wrapping each stretch of text between tags.
            run: list[str] = []
            for token in new[j1:j2]:
                if token.startswith("<"):
                    wrap(run, "highlight_text_inserted")
                    run = []
                    out.append(token)
                else:
                    run.append(token)
            wrap(run, "highlight_text_inserted")
    return "".join(out)


def visible_entries(message: Message, realm: Realm) -> list[JSONDict]:
    """The stored entries the organization's policy lets users see (most recent first)."""
    policy = realm.edit_history_policy_name()
    if policy == "none":
        raise JsonableError("Message edit history is disabled in this organization")
    entries = [dict(e) for e in message.edit_history or []]
    if policy == "moves":
        entries = [{k: v for k, v in e.items() if k not in CONTENT_KEYS} for e in entries
                   if "prev_topic" in e or "prev_stream" in e]
    return entries


def edit_snapshots(message: Message, realm: Realm, *, allow_empty_topic_name: bool) -> list[JSONDict]:
    """The message's versions, oldest first: the original (topic, content, rendered_content,
    timestamp, user_id) then one snapshot per edit with the prev_* of what it changed."""
    topic, content, rendered, stream_id = message.topic, message.content, message.rendered_content, message.stream_id
    snapshots = []
    for entry in visible_entries(message, realm):
        snapshot = {"topic": topic, "content": content, "rendered_content": rendered,
                    "timestamp": entry["timestamp"], "user_id": entry.get("user_id")}
        if "prev_topic" in entry:
            snapshot["prev_topic"] = entry["prev_topic"]
            topic = entry["prev_topic"]
        if "prev_stream" in entry:
            snapshot["stream"] = stream_id
            snapshot["prev_stream"] = entry["prev_stream"]
            stream_id = entry["prev_stream"]
        if "prev_content" in entry:
            snapshot["prev_content"] = entry["prev_content"]
            snapshot["prev_rendered_content"] = entry["prev_rendered_content"]
            snapshot["content_html_diff"] = html_diff(entry["prev_rendered_content"], rendered)
            content, rendered = entry["prev_content"], entry["prev_rendered_content"]
        snapshots.append(snapshot)
    snapshots.append({"topic": topic, "content": content, "rendered_content": rendered,
                      "timestamp": message.date_sent, "user_id": message.sender_id})
    snapshots.reverse()
    for snapshot in snapshots:
        for key in ("topic", "prev_topic"):
            if key in snapshot:
                snapshot[key] = display_topic(snapshot[key], allow_empty_topic_name)
    return snapshots
