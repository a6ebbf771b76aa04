"""Hostile input: every route and every declared parameter, fed numbers past 64 bits, negative
ids, NUL characters and absurd JSON, answers a 4xx (or a success) and never a 500."""

import json
import re
from urllib.parse import quote_plus

import pytest

from chat_appliance.lib.validators import MAX_INT

from ..support.helpers import err, ok

HUGE = "2338377346764091730952192"  # about 2^81
JUST_OVER = str(MAX_INT + 1)

# Values a fuzzer or an attacker sends for any parameter, as they appear on the wire.
HOSTILE_VALUES = [
    HUGE,
    "-" + HUGE,
    JUST_OVER,
    f"[{HUGE}]",
    f"[1, {JUST_OVER}]",
    f'{{"new": {HUGE}}}',
    f'[["channel", {HUGE}], ["id", "{HUGE}"]]',
    '[{"operator": "channel", "operand": "\u00b2"}]',
    '[{"operator": "dm-including", "operand": []}]',
    '[{"operator": "search", "operand": "a\\u0000b"}]',
    '"\\u0000"',
    '{"key\\u0000": "value"}',
    "9" * 5000,
    "[" * 100000,
    "[" * 100 + "]" * 100,
    json.dumps([{"operator": "search", "operand": f"w{i}"} for i in range(2000)]),
]


def routes(app):
    """(method, path template, converters) for every API route."""
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            yield method, rule


def fill(rule, int_value, text_value="x"):
    """The rule's path with every int argument set to int_value and others to text_value."""
    path = rule.rule
    for name, converter in rule._converters.items():
        value = int_value if type(converter).__name__.endswith("IntConverter") or "Integer" in type(converter).__name__ \
            else text_value
        path = re.sub(rf"<[^>]*\b{name}>", value, path)
    return path


def call(flask_client, headers, method, path, data=None):
    if method == "GET":
        return flask_client.get(path, query_string=data or {}, headers=headers)
    return flask_client.open(path, method=method, data=data or {}, headers=headers)


# What a form body or query string must escape: its separators, the escape character, space
# (written +), and everything outside printable ASCII (as UTF-8). Clients send brackets, braces,
# quotes and colons as they are, as these do.
FORM_SAFE = "".join(chr(c) for c in range(33, 127) if chr(c) not in "%&+=#;")


def form_encoded(name, value):
    """`name=value` for a body or query string, escaped only where it must be: percent-escaping
    every bracket of "[" * 100000 made the test client and werkzeug's form parser (both pure
    Python) spend most of this module's time on URL decoding rather than on the app."""
    return quote_plus(name, safe=FORM_SAFE) + "=" + quote_plus(value, safe=FORM_SAFE)


def call_encoded(flask_client, headers, method, path, encoded):
    """One request carrying one already encoded parameter: in the query string of a GET, in a
    url-encoded body otherwise."""
    if method == "GET":
        return flask_client.get(path, query_string=encoded, headers=headers)
    return flask_client.open(path, method=method, data=encoded.encode(),
                             content_type="application/x-www-form-urlencoded", headers=headers)


def assert_not_500(response, what):
    assert response.status_code < 500, (what, response.status_code, response.get_data(as_text=True)[:300])
    if response.is_json:
        assert response.get_json()["result"] in ("success", "error"), what


@pytest.fixture
def admin_headers(org):
    import base64

    token = base64.b64encode(f"{org.owner.email}:{org.owner.api_key}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def test_every_route_refuses_ids_past_64_bits(app, org, flask_client, admin_headers):
    """Does every route with an id in its path answer a 4xx for ids past 64 bits, at the 64-bit
    edge, and for negative ids, as the organization's owner?"""
    walked = 0
    for method, rule in routes(app):
        if not any("Integer" in type(c).__name__ or "Int" in type(c).__name__ for c in rule._converters.values()):
            continue
        for value in (HUGE, JUST_OVER, str(MAX_INT), "-1", "0"):
            response = call(flask_client, admin_headers, method, fill(rule, value))
            assert_not_500(response, (method, rule.rule, value))
            if value != "0":
                assert 400 <= response.status_code < 500, (method, rule.rule, value, response.get_json())
            walked += 1
    assert walked > 100


def test_huge_ids_in_paths_anchors_counts_and_lists(org):
    """Do huge ids in paths, anchors, counts and lists get Zulip's answers?"""
    owner = org.client(org.owner)
    # An id past 64 bits is an id that matches nothing: each endpoint's own answer, as Zulip's.
    for path in (f"messages/{HUGE}/history", f"messages/{HUGE}", f"messages/{MAX_INT}"):
        err(owner.get(path), 400, "BAD_REQUEST", "Invalid message(s)")
    err(owner.get(f"users/{HUGE}"), 400, "BAD_REQUEST", "No such user")
    err(owner.post(f"messages/{HUGE}/reactions", emoji_name="smile"), 400, "BAD_REQUEST", "Invalid message(s)")
    # Absurdly long digit strings are not converted at all.
    err(owner.get("messages/" + "9" * 5000), 404, "NOT_FOUND")
    fetched = ok(owner.get("messages", anchor=HUGE, num_before=1, num_after=0))
    assert fetched["found_newest"] is True
    err(owner.get("messages", anchor="newest", num_before=int(HUGE), num_after=0), 400, "BAD_REQUEST")
    err(owner.get("messages", message_ids=f"[{HUGE}]"), 400, "BAD_REQUEST")
    err(owner.post("messages/flags", messages=f"[{HUGE}]", op="add", flag="read"), 400, "BAD_REQUEST")
    err(owner.post("messages", type="direct", to=f"[{HUGE}]", content="hi"), 400, "BAD_REQUEST")
    err(owner.get("messages", anchor="newest", num_before=1, num_after=0,
                  narrow='[{"operator": "channel", "operand": "\u00b2"}]'), 400, "BAD_NARROW")
    err(owner.get("messages", anchor="newest", num_before=1, num_after=0,
                  narrow='[{"operator": "dm-including", "operand": []}]'), 400, "BAD_NARROW")


def test_nul_and_nesting_refused_before_storage(org):
    """Are NUL characters inside JSON values refused (PostgreSQL cannot store them), and are
    deeply nested documents and over-long narrows a 400?"""
    hamlet = org.client(org.hamlet)
    body = err(hamlet.put("bot_storage", storage='{"key\\u0000": "v"}'), 400, "BAD_REQUEST")
    assert "NULL" in body["msg"]
    err(hamlet.post("register", narrow="[" * 100000), 400, "BAD_REQUEST")
    narrow = json.dumps([{"operator": "search", "operand": f"w{i}"} for i in range(2000)])
    err(hamlet.get("messages", anchor="newest", num_before=1, num_after=0, narrow=narrow), 400, "BAD_REQUEST")
    err(hamlet.post("register", narrow='[["stream", "\u00b2"]]'), 400, "BAD_REQUEST")


@pytest.mark.timeout(600)  # about 7,000 requests: 11 s alone, several times that under a loaded suite
def test_every_parameter_refuses_hostile_values(app, org, flask_client, admin_headers):
    """Does every declared parameter of every endpoint, fed numbers past 64 bits, NULs, deep or
    huge JSON, answer without a 500?"""
    checked = 0
    for method, rule in routes(app):
        view = app.view_functions[rule.endpoint]
        specs = getattr(view, "param_specs", None)
        if not specs:
            continue
        path = fill(rule, "1", "general")
        for name in specs:
            for value in HOSTILE_VALUES:
                response = call_encoded(flask_client, admin_headers, method, path, form_encoded(name, value))
                assert_not_500(response, (method, rule.rule, name, value[:40]))
                checked += 1
    assert checked > 1000
