"""JSON from outside (request parameters, incoming webhook bodies, outgoing webhooks' answers):
one parser with a nesting limit, used wherever such JSON is read.

Python's decoder recurses, and so does any code walking what it returns: a body nested a
thousand deep parsed fine and then overflowed the stack of the integration formatting it, a 500.
Nothing a client or a service sends legitimately nests deeper than MAX_DEPTH.
No Flask here: callers turn JsonInputError into their own errors.
"""

from __future__ import annotations

from typing import Any

import json

MAX_DEPTH = 32


class JsonInputError(ValueError):
    """Not JSON, or nested deeper than allowed; the message says which."""


def too_deep(value: Any, max_depth: int = MAX_DEPTH) -> bool:
    """Whether a parsed value holds a list or object more than `max_depth` levels down (the
    top level is level 0). Walks without recursion."""
    pending = [(value, 0)] if isinstance(value, (list, dict)) else []
    while pending:
        item, depth = pending.pop()
        if depth > max_depth:
            return True
        children = item.values() if isinstance(item, dict) else item
        pending.extend((child, depth + 1) for child in children if isinstance(child, (list, dict)))
    return False


def parse_json(raw: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """The value of a JSON text; JsonInputError when it is not JSON or nests too deeply."""
    try:
        value = json.loads(raw)
    except RecursionError:
        raise JsonInputError("nested too deeply") from None
    except (TypeError, ValueError):
        raise JsonInputError("not valid JSON") from None
    if isinstance(value, (list, dict)) and too_deep(value, max_depth):
        raise JsonInputError("nested too deeply")
    return value
