"""Responses are encoded by orjson (lib/response.FastJSONProvider): the same JSON as before,
compact and in key order, and values orjson refuses still encode."""

import datetime
import json

from flask import jsonify


def test_encodes_as_the_standard_encoder_would(app):
    """Does every value come back the same through json.loads, integer keys and dates included,
    with keys in order and no spaces?"""
    value = {"b": 1, "a": [1.5, None, True, "caf\u00e9 \u2603"], 7: {"x": (1, 2)}}
    text = app.json.dumps(value)
    assert json.loads(text) == {"b": 1, "a": [1.5, None, True, "caf\u00e9 \u2603"], "7": {"x": [1, 2]}}
    assert text.startswith('{"b":1,"a":') and " " not in text.replace("caf\u00e9 \u2603", "")
    assert json.loads(app.json.dumps({"when": datetime.date(2026, 11, 23)}))["when"].startswith("Mon, 23 Nov 2026")


def test_integers_past_64_bits_fall_back(app):
    """Does a number orjson cannot hold still encode, in a body and in a response?"""
    assert json.loads(app.json.dumps({"n": 2**70})) == {"n": 2**70}
    with app.test_request_context():
        response = jsonify(n=2**70)
    assert json.loads(response.get_data()) == {"n": 2**70} and response.mimetype == "application/json"


def test_values_already_encoded_go_in_as_they_are(app):
    """Is a RawJSON (a cached message object) written as its bytes by orjson, and decoded and
    encoded again on the fallback path, in a body and in a response?"""
    from chat_appliance.lib.raw_json import RawJSON

    raw = RawJSON(b'{"id":7,"content":"caf\xc3\xa9","flags":["read"]}')
    assert app.json.dumps({"messages": [raw, raw]}) == (
        '{"messages":[{"id":7,"content":"caf\u00e9","flags":["read"]},{"id":7,"content":"caf\u00e9","flags":["read"]}]}')
    assert json.loads(app.json.dumps({"messages": [raw], "n": 2**70})) == {
        "messages": [{"id": 7, "content": "caf\u00e9", "flags": ["read"]}], "n": 2**70}
    assert json.loads(app.json.dumps({"messages": [raw]}, indent=1)) == {
        "messages": [{"id": 7, "content": "caf\u00e9", "flags": ["read"]}]}
    with app.test_request_context():
        response = jsonify(messages=[raw], n=2**70)
    assert json.loads(response.get_data())["messages"][0]["id"] == 7
