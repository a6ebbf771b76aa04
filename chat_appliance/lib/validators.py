"""Parsers and checks of values that requests carry, with no request in sight.

Each parser takes (var_name, value) and returns the value converted, or raises ParamError with
Zulip's text. web/params.py declares a view's parameters with them and reads the request;
actions/ and lib/ use them on values inside JSON documents (drafts, narrows, settings) without
depending on the HTTP layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import re
from datetime import datetime, timezone

from chat_appliance.lib.errors import ParamError
from chat_appliance.lib.json_input import MAX_DEPTH as JSON_MAX_DEPTH
from chat_appliance.lib.json_input import JsonInputError, parse_json
from chat_appliance.models.base import MAX_DATABASE_INT

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict, Parser

# Zulip's anchor for "no such message": larger than any message id (lib/narrow.py uses it too).
LARGER_THAN_MAX_MESSAGE_ID = 10000000000000000
# What json.loads reads as an int, exactly (no sign +, no leading zeros, no spaces), of at most
# 19 digits: longer numbers take the JSON decoder's path and its range check.
_JSON_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]{0,18})\Z")

# Ids and counts are 64-bit signed integers in both engines; a larger number in a JSON value can
# only be hostile, and is refused here before any query.
MAX_INT = MAX_DATABASE_INT
MIN_INT = -MAX_DATABASE_INT - 1
# JSON parameters are small documents; deeper nesting is hostile (Python's parser recurses).
MAX_JSON_DEPTH = JSON_MAX_DEPTH
# The longest list any parameter accepts, at any depth (one POST /typing with 50,000
# ids cost 82 s when each id was a query). Zulip sets no general limit; parameters that name
# messages (flags, fetch by id) take MAX_MESSAGE_ID_LIST_LENGTH, Zulip's largest fetch.
MAX_LIST_LENGTH = 1000
MAX_MESSAGE_ID_LIST_LENGTH = 5000


# --- parsers: each takes (var_name, value) and returns the converted value ------------


def _decode_json(var_name, raw, max_items=MAX_LIST_LENGTH):
    try:
        value = parse_json(raw, MAX_JSON_DEPTH)
    except JsonInputError as error:
        raise ParamError(f"{var_name} is {error}") from None
    check_json_value(var_name, value, max_items=max_items)
    return value


def check_json_value(var_name: str, value: Any, depth: int = 0, max_items: int = MAX_LIST_LENGTH) -> None:
    """Refuse what no client sends and what would break further down: nesting deeper than
    MAX_JSON_DEPTH (Python's parser and ours recurse), integers beyond 64 bits, and lists or
    objects of more than `max_items` entries (nested ones: MAX_LIST_LENGTH).
    Errors name the place, as drafts[0]['to'][0]."""
    if depth > MAX_JSON_DEPTH:
        raise ParamError(f"{var_name} is nested too deeply")
    if isinstance(value, int) and not isinstance(value, bool):
        if not MIN_INT <= value <= MAX_INT:
            raise ParamError(f"{var_name} is out of range")
    elif isinstance(value, (list, dict)):
        if len(value) > max_items:
            raise ParamError(f"{var_name} has too many items (limit: {max_items})")
        items = enumerate(value) if isinstance(value, list) else value.items()
        for key, item in items:
            check_json_value(f"{var_name}[{key!r}]" if isinstance(value, dict) else f"{var_name}[{key}]", item, depth + 1)


def check_no_nul(var_name: str, value: Any) -> None:
    """NUL characters anywhere in a parsed value (they arrive JSON-escaped as \\u0000, past the
    check on raw parameters): PostgreSQL cannot store them in text, so no endpoint accepts them.
    Runs after the parameter's own parser, whose more specific error, if any, wins."""
    if isinstance(value, str):
        if "\x00" in value:
            raise ParamError(f"{var_name} contains NULL (0x00) characters")
    elif isinstance(value, (list, tuple)):
        for item in value:
            check_no_nul(var_name, item)
    elif isinstance(value, dict):
        for key, item in value.items():
            check_no_nul(var_name, key)
            check_no_nul(var_name, item)


def check_string(var_name: str, value: Any) -> str:
    """A string, as sent."""
    if not isinstance(value, str):
        raise ParamError(f"{var_name} is not a string")
    return value


def check_int(var_name: str, value: Any) -> int:
    """An integer, JSON-encoded on the wire (`30`), never a boolean."""
    if isinstance(value, str) and _JSON_INTEGER.match(value) and MIN_INT <= int(value) <= MAX_INT:
        return int(value)  # the common case without the JSON decoder (every long poll sends one)
    if isinstance(value, str):
        value = _decode_json(var_name, value) if value.strip() else value
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParamError(f"{var_name} is not an integer")
    return value


def check_bool(var_name: str, value: Any) -> bool:
    """A JSON boolean (`true`/`false`)."""
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in ("true", "false"):
            return lowered == "true"
        raise ParamError(f"{var_name} is not a boolean")
    if not isinstance(value, bool):
        raise ParamError(f"{var_name} is not a boolean")
    return value


def check_any_json(var_name: str, value: Any, max_items: int = MAX_LIST_LENGTH) -> Any:
    """Any JSON value."""
    return _decode_json(var_name, value, max_items) if isinstance(value, str) else value


def check_dict(var_name: str, value: Any) -> JSONDict:
    """A JSON object."""
    value = check_any_json(var_name, value)
    if not isinstance(value, dict):
        raise ParamError(f"{var_name} is not a dict")
    return value


def check_json_list(var_name: str, value: Any, max_items: int = MAX_LIST_LENGTH) -> list[Any]:
    """A JSON list of at most `max_items` items (themselves unchecked)."""
    value = check_any_json(var_name, value, max_items)
    if not isinstance(value, list):
        raise ParamError(f"{var_name} is not a list")
    if len(value) > max_items:
        raise ParamError(f"{var_name} has too many items (limit: {max_items})")
    return value


def list_of(item_parser: Parser, max_items: int = MAX_LIST_LENGTH) -> Parser:
    """A JSON list of at most `max_items` items that pass `item_parser`, repeats dropped (the
    first of each kept; items that are objects are kept as they are)."""
    def check_list(var_name, value):
        value = check_json_list(var_name, value, max_items)
        parsed = [item_parser(f"{var_name}[{i}]", item) for i, item in enumerate(value)]
        return dedupe(parsed)

    return check_list


def dedupe(items: list[Any]) -> list[Any]:
    """The items without repeats, in order; a list holding unhashable items (objects) as it is."""
    try:
        return list(dict.fromkeys(items))
    except TypeError:
        return items


def json_or_string(var_name: str, value: Any) -> Any:
    """JSON if it parses, else the raw string: `to=general` and `to=["general"]` both arrive."""
    if not isinstance(value, str):
        return value
    try:
        decoded = parse_json(value, MAX_JSON_DEPTH)
    except JsonInputError as error:
        if "deeply" in str(error):
            raise ParamError(f"{var_name} is nested too deeply") from None
        return value
    check_json_value(var_name, decoded)
    return dedupe(decoded) if isinstance(decoded, list) else decoded


def check_group_id(var_name: str, value: Any) -> int:
    """A group-valued setting given as a group id, or in Zulip's {"new": id, "old": id} update form."""
    value = check_any_json(var_name, value)
    if isinstance(value, dict) and "new" in value:
        value = value["new"]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParamError(f"Invalid {var_name}")
    return value


def one_of(*choices: Any, parser: Parser = check_string) -> Parser:
    """A value from a fixed set."""
    def check_choice(var_name, value):
        value = parser(var_name, value)
        if value not in choices:
            raise ParamError(f"Invalid {var_name}")
        return value

    return check_choice


def int_range(low: int | None = None, high: int | None = None) -> Parser:
    """An integer within bounds."""
    def check_bounded(var_name, value):
        value = check_int(var_name, value)
        if low is not None and value < low:
            raise ParamError(f"{var_name} is too small")
        if high is not None and value > high:
            raise ParamError(f"{var_name} is too large")
        return value

    return check_bounded


def string_max(limit: int) -> Parser:
    """A string of at most `limit` characters."""
    def check_length(var_name, value):
        value = check_string(var_name, value)
        if len(value) > limit:
            raise ParamError(f"{var_name} is too long (limit: {limit} characters)")
        return value

    return check_length


def is_id_string(value: Any) -> bool:
    """ASCII digits only: str.isdigit() also accepts "²", which int() refuses."""
    return isinstance(value, str) and value.isascii() and value.isdigit() and int(value) <= MAX_INT


def parse_anchor(var_name: str, value: Any) -> str | int:
    """newest, oldest, first_unread, date, or a message id."""
    if value in ("newest", "oldest", "first_unread", "date"):
        return value
    try:
        anchor = int(value)
    except (TypeError, ValueError):
        raise ParamError("Invalid anchor") from None
    if anchor < 0:
        raise ParamError("Invalid anchor")
    # As Zulip: any anchor past the newest message means "newest" (and stays in 64 bits).
    return min(anchor, LARGER_THAN_MAX_MESSAGE_ID)


def parse_anchor_date(var_name: str, value: str) -> int:
    """ISO 8601 date (midnight UTC) or datetime (UTC when no zone is given) -> UNIX seconds."""
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ParamError(f"Invalid {var_name}") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return int(parsed.timestamp())
