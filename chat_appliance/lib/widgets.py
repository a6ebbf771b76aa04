"""Message widgets (Zulip's /poll and /todo) and their submessages: what a widget message
starts with, what later submessages may say, and how they are served."""

from __future__ import annotations

import json
from typing import Any

from chat_appliance.lib.types import JSONDict
from chat_appliance.models.base import query_rows

WIDGET_MSG_TYPE = "widget"
# The submessage `type`s each widget accepts, with the fields each carries and their types.
POLL_EVENTS: dict[str, dict[str, type]] = {
    "vote": {"key": str, "vote": int},
    "new_option": {"idx": int, "option": str},
    "question": {"question": str},
}
TODO_EVENTS: dict[str, dict[str, type]] = {
    "new_task": {"key": int, "task": str, "desc": str, "completed": bool},
    "strike": {"key": str},
    "new_task_list_title": {"title": str},
}
# Changes only the widget's author may make (the poll's question, the list's title).
AUTHOR_ONLY = {"question", "new_task_list_title"}
WIDGETS: dict[str, dict[str, dict[str, type]]] = {"poll": POLL_EVENTS, "todo": TODO_EVENTS}


def _item_lines(lines: list[str]) -> list[str]:
    """Non-empty lines without a leading list marker ("- ", "* ")."""
    items = []
    for line in lines:
        line = line.strip()
        if line[:2] in ("- ", "* "):
            line = line[2:].strip()
        if line:
            items.append(line)
    return items


def widget_content(content: str) -> JSONDict | None:
    """The widget a message's Markdown starts (its first word is /poll or /todo), as the content
    of its first submessage ({"widget_type", "extra_data"}), or None."""
    words = content.split(None, 1)
    if not words or words[0] not in ("/poll", "/todo"):
        return None
    first, _newline, rest = content.partition("\n")
    heading = first.strip()[len(words[0]):].strip()
    items = _item_lines(rest.splitlines())
    if words[0] == "/poll":
        return {"widget_type": "poll", "extra_data": {"question": heading, "options": items}}
    tasks = []
    for item in items:
        task, _colon, desc = item.partition(":")
        tasks.append({"task": task.strip(), "desc": desc.strip()})
    return {"widget_type": "todo", "extra_data": {"task_list_title": heading, "tasks": tasks}}


def valid_widget_event(widget_type: str, data: Any, *, is_author: bool) -> bool:
    """Whether a later submessage's content is one the widget knows, well formed."""
    kinds = WIDGETS.get(widget_type)
    if kinds is None or not isinstance(data, dict) or data.get("type") not in kinds:
        return False
    if data["type"] in AUTHOR_ONLY and not is_author:
        return False
    for field, kind in kinds[data["type"]].items():
        value = data.get(field)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            return False
    return not (data["type"] == "vote" and data["vote"] not in (1, -1))


def submessage_dict(row_id: int, message_id: int, sender_id: int, msg_type: str, content: str) -> JSONDict:
    """A submessage as message objects carry it."""
    return {"id": row_id, "message_id": message_id, "sender_id": sender_id, "msg_type": msg_type,
            "content": content}


def submessages_by_message(message_ids: list[int]) -> dict[int, list[JSONDict]]:
    """{message_id: [submessage objects, oldest first]}."""
    result: dict[int, list[JSONDict]] = {mid: [] for mid in message_ids}
    if not message_ids:
        return result
    rows = query_rows('SELECT "id", "message_id", "sender_id", "msg_type", "content" FROM "sub_message"'
                      ' WHERE "message_id" IN {ids} ORDER BY "id"', ids=list(message_ids))
    for row in rows:
        result[row[1]].append(submessage_dict(*row))
    return result


def widget_type_of(submessages: list[JSONDict]) -> str | None:
    """The widget type of a message's submessages (from its first), or None."""
    if not submessages or submessages[0]["msg_type"] != WIDGET_MSG_TYPE:
        return None
    try:
        first = json.loads(submessages[0]["content"])
    except ValueError:
        return None
    return first.get("widget_type") if isinstance(first, dict) else None
