"""The Zulip mobile app's (zulip-flutter's) view of responses: its register parameters and a checker
of the keys and types its decoders require, from tests/support/data/flutter_keys.json (made by
scripts/flutter_keys.py from the app's generated decoders)."""

import json
from pathlib import Path

KEYS = json.loads((Path(__file__).parent / "data" / "flutter_keys.json").read_text(encoding="utf-8"))
CLASSES = KEYS["classes"]

# What lib/api/route/events.dart's registerQueue sends.
APP_REGISTER = {
    "idle_queue_timeout": "mobile",
    "apply_markdown": True,
    "client_gravatar": False,
    "slim_presence": True,
    "client_capabilities": {
        "notification_settings_null": True, "bulk_message_deletion": True, "user_avatar_url_field_optional": True,
        "stream_typing_notifications": True, "user_settings_object": True, "include_deactivated_groups": True,
        "empty_topic_name": True, "individual_emoji_changes": True,
    },
}

# Readers (the app's own functions reading a key) the checker follows: those that read the key
# itself, and those that read it inside an event's `person`. Others compute a field from several
# keys and are skipped.
PLAIN_READERS = ("_readUsersIsActiveFallbackTrue", "_readUsersIsActiveFallbackFalse", "_readProfileData")
PERSON_READERS = ("_readFromPerson", "_readNullableStringFromPerson")

PRIMITIVES = {
    # The app reads integers as `(value as num).toInt()`: a float (Zulip's server_timestamp) passes.
    "int": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "list": lambda v: isinstance(v, list),
    "map": lambda v: isinstance(v, dict),
    "object": lambda v: isinstance(v, dict),
    "any": lambda v: True,
}


def check_element(value, element, path, problems):
    """A list item or map value: a class, or a primitive type name."""
    if isinstance(element, dict):
        if not isinstance(value, dict):
            problems.append(f"{path}: not an object")
        else:
            check_class(value, element["class"], path, problems)
    elif value is None or not PRIMITIVES[element](value):
        problems.append(f"{path}: {value!r} is not {element}")


def check_value(value, spec, path, problems):
    if value is None:
        if not spec["nullable"]:
            problems.append(f"{path}: missing or null")
        return
    kind = spec["type"]
    if kind == "enum":
        if spec["lenient"]:
            kinds = {type(v) for v in spec["enum"]}
            if not isinstance(value, tuple(kinds) or object) or isinstance(value, bool):
                problems.append(f"{path}: {value!r} is not of the enum's type")
        elif value not in spec["enum"]:
            problems.append(f"{path}: {value!r} not among {spec['enum']}")
        return
    if not PRIMITIVES[kind](value):
        problems.append(f"{path}: {value!r} is not {kind}"[:300])
        return
    if kind == "list" and "items" in spec:
        for index, item in enumerate(value):
            check_element(item, spec["items"], f"{path}[{index}]", problems)
    elif kind == "map" and "values" in spec:
        for key, item in value.items():
            check_element(item, spec["values"], f"{path}[{key!r}]", problems)
    elif kind == "object" and "class" in spec and spec["class"] in CLASSES:
        check_class(value, spec["class"], path, problems)


def check_class(obj, cls, path, problems):
    """Every key the app's decoder of `cls` reads, present (unless nullable) with its type."""
    for key, spec in CLASSES[cls].items():
        reader = spec.get("reader")
        if reader is None or reader in PLAIN_READERS:
            value = obj.get(key)
        elif reader in PERSON_READERS:
            value = (obj.get("person") or {}).get(key)
        else:
            continue
        check_value(value, spec, f"{path}.{key}", problems)


def problems_of(obj, cls, path):
    problems = []
    check_class(obj, cls, path, problems)
    return problems


def check_message(message, path):
    cls = "StreamMessage" if message["type"] == "stream" else "DmMessage"
    return problems_of(message, cls, path)
