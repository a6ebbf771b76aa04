"""Make tests/support/data/flutter_keys.json: the JSON keys the Zulip mobile app (zulip-flutter) reads, with
the types it casts them to, from the generated decoders of a zulip-flutter checkout.

    python scripts/flutter_keys.py PATH/TO/zulip-flutter [--out tests/support/data/flutter_keys.json]

The app decodes every server response with json_serializable code in lib/api/model/*.g.dart and
lib/api/route/*.g.dart: one `_$ClassFromJson` function a class, one argument a field, each reading
`json['key']` and casting it (`as String`, `(… as num).toInt()`, `$enumDecode(...)`, a nested
`Other.fromJson(...)`). A required key that is missing or of another type throws in the app, so
this list is what tests/mobile/test_app_session.py checks /register, GET /messages and the events against.
Re-run it on a newer app release to check that release.

Each key is recorded as {"type", "nullable", and "class" | "items" | "values" | "enum"}; keys read
through one of the app's own reader functions carry "reader" (the test knows `_readFromPerson`,
which looks inside an event's `person`, and skips the others, which compute a value from several
keys). events.dart's Event.fromJson switch gives the class of each event type (and op).
"""

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

DECODER = re.compile(r"^(\w+) _\$(\w+)FromJson\(", re.M)
ENUM_MAP = re.compile(r"^const _\$(\w+)EnumMap = \{(.*?)^\};", re.M | re.S)
ARGUMENT = re.compile(r"^\s*(\w+):\s*(.*)$", re.S)
KEY = re.compile(r"(?:json\[|\(json,\s*)'([^']+)'\]?")
READER = re.compile(r"(\w+\._\w+|_\w+)\(\s*json,\s*'([^']+)'")
EVENT_CASE = re.compile(r"case '(\w+)':\s*(?:return (\w+)\.fromJson|switch)")
ENUMS = {}  # every generated enum map, filled by main before the decoders are read
OP_CASE = re.compile(r"case '(\w+)': return (\w+)\.fromJson")


def matching(text, start, open_char="(", close_char=")"):
    """Index just after the bracket that closes the one at `start` (string literals skipped)."""
    depth, i, quote = 0, start, None
    while i < len(text):
        c = text[i]
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced brackets")


def split_arguments(body):
    """Top-level comma-separated pieces of a call's argument list."""
    pieces, depth, current, quote = [], 0, [], None
    for c in body:
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0 and not quote:
            pieces.append("".join(current))
            current = []
        else:
            current.append(c)
    if "".join(current).strip():
        pieces.append("".join(current))
    return pieces


def enum_values(text):
    """{EnumName: [api values]} from the generated `_$XEnumMap` constants."""
    enums = {}
    for name, body in ENUM_MAP.findall(text):
        values = []
        for raw in re.findall(r":\s*([^,\n]+),", body):
            raw = raw.strip()
            if raw != "null":  # an enum's `unknown` member: no value the server sends
                values.append(raw.strip("'") if raw.startswith("'") else int(raw) if raw.lstrip("-").isdigit() else raw)
        enums[name] = values
    return enums


def element_type(expr):
    """What a list's items or a map's values are, from the `(e) => …` or `MapEntry(k, …)` mapper."""
    found = re.search(r"(?:\(e\) =>|MapEntry\(\s*[^,]+,)\s*(.*)", expr, re.S)
    if not found:
        return "any"
    inner = found.group(1)
    enum = re.match(r"\s*\$enumDecode\(\s*_\$(\w+)EnumMap", inner)
    if enum:  # a list of enum values: their JSON type (the app maps unknown ones to `unknown`)
        values = ENUMS.get(enum.group(1)) or [""]
        return "int" if isinstance(values[0], int) else "string"
    cls = re.match(r"\s*\(?\s*(\w+)\.fromJson\(", inner)
    if cls and cls.group(1)[0].isupper() and cls.group(1) not in ("DateTime", "Uri"):
        return {"class": cls.group(1)}
    return scalar_type(inner)


CASTS = {"String": "string", "bool": "bool", "List<dynamic>": "list", "Map<String, dynamic>": "object"}


def scalar_type(expr):
    """The JSON type the first cast of `expr` expects: int, number, string, bool, list, object or any."""
    cast = re.search(r"\bas (num|String|bool|List<dynamic>|Map<String, dynamic>)", expr)
    if not cast:
        return "any"
    if cast.group(1) == "num":
        return "int" if re.match(r"\??\)\s*\??\.toInt\(\)", expr[cast.end():]) else "number"
    return CASTS[cast.group(1)]


def describe(expr, enums):
    """The record of one constructor argument, or None if it reads no key."""
    key_match = KEY.search(expr)
    if not key_match:
        return None, None
    key = key_match.group(1)
    spec = {}
    reader = READER.search(expr)
    if reader and reader.group(2) == key:
        spec["reader"] = reader.group(1).split(".")[-1]
    nullable = bool(re.search(r"as [\w<>, ]+\?|== null|\?\?|\$enumDecodeNullable|_\$JsonConverterFromJson", expr))
    spec["nullable"] = nullable
    enum = re.search(r"\$enumDecode(?:Nullable)?\(\s*_\$(\w+)EnumMap,\s*(?:json\[|[\w.]+\(json)", expr)
    if enum:
        spec["type"] = "enum"
        spec["enum"] = enums.get(enum.group(1), [])
        spec["lenient"] = "unknownValue" in expr
        return key, spec
    kind = scalar_type(expr[key_match.end():])
    direct = re.search(r"(\w+)\.fromJson\(\s*(?:\w+\._\w+\(json[^)]*\)|json\['[^']+'\])", expr)
    if kind == "list":
        spec.update(type="list", items=element_type(expr))
    elif kind == "object" and ".map(" in expr:
        spec.update(type="map", values=element_type(expr))
    elif direct and direct.group(1)[0].isupper() and direct.group(1) not in ("DateTime", "Uri"):
        # A class with a hand-written decoder (GroupSettingValue: a group id or an object) is
        # "any" unless the expression casts it; resolve_classes decides once all are known.
        spec.update(type="object", cast=kind, **{"class": direct.group(1)})
    else:
        spec["type"] = kind
    return key, spec


def decoders(text, enums):
    """{Class: {key: record}} for every `_$ClassFromJson` of one generated file."""
    classes = {}
    for match in DECODER.finditer(text):
        name = match.group(2)
        constructor = text.find(f"{name}(", text.find("=>", match.end()))
        end = matching(text, constructor + len(name))
        keys = {}
        for argument in split_arguments(text[constructor + len(name) + 1:end - 1]):
            found = ARGUMENT.match(argument)
            if not found:
                continue
            key, spec = describe(found.group(2), enums)
            if key is not None:
                keys[key] = spec
        classes[name] = keys
    return classes


def resolve_classes(classes):
    """Drop references to classes without a generated decoder (their shape is not in this list)."""
    for keys in classes.values():
        for spec in keys.values():
            cast = spec.pop("cast", None)
            for slot in ("items", "values"):
                if isinstance(spec.get(slot), dict) and spec[slot]["class"] not in classes:
                    spec[slot] = "any"
            if "class" in spec and spec["class"] not in classes:
                del spec["class"]
                spec["type"] = cast or "any"


def event_classes(events_dart):
    """{"type" or "type/op": Class} from Event.fromJson's switch."""
    start = events_dart.index("factory Event.fromJson")
    body = events_dart[start:matching(events_dart, events_dart.index("{", start), "{", "}")]
    result = {}
    for block in re.split(r"\n      case ", "\n" + body):
        head = re.match(r"'(\w+)':", block)
        if not head:
            continue
        ops = OP_CASE.findall(block)
        if ops and "switch (json['op']" in block:
            for op, cls in ops:
                result[f"{head.group(1)}/{op}"] = cls
        else:
            single = re.match(r"'\w+': return (\w+)\.fromJson", block)
            if single:
                result[head.group(1)] = single.group(1)
    result.pop("heartbeat", None)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="a zulip-flutter checkout (a work tree)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "tests/support/data/flutter_keys.json")
    parser.add_argument("--commit", help="the checkout's commit, when it is not a git work tree")
    parser.add_argument("--date", help="that commit's date")
    args = parser.parse_args(argv)
    generated = sorted((args.checkout / "lib/api").glob("*/*.g.dart"))
    if not generated:
        sys.exit(f"no lib/api/*/*.g.dart under {args.checkout}")
    texts = {path: path.read_text(encoding="utf-8") for path in generated}
    enums = ENUMS
    for text in texts.values():
        enums.update(enum_values(text))
    classes = {}
    for text in texts.values():
        classes.update(decoders(text, enums))
    resolve_classes(classes)
    commit = subprocess.run(["git", "-C", str(args.checkout), "log", "-1", "--format=%H %cI"],
                            capture_output=True, text=True).stdout.split()
    data = {
        "source": {"repository": "zulip/zulip-flutter", "commit": args.commit or (commit[0] if commit else None),
                   "date": args.date or (commit[1] if len(commit) > 1 else None)},
        "snapshot": "InitialSnapshot",
        "events": event_classes((args.checkout / "lib/api/model/events.dart").read_text(encoding="utf-8")),
        "classes": dict(sorted(classes.items())),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    keys = sum(len(v) for v in classes.values())
    print(f"{args.out}: {len(classes)} classes, {keys} keys, {len(data['events'])} event kinds")


if __name__ == "__main__":
    main()
