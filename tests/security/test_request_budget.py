"""The general defence against slow requests: every operation of Zulip's API description, sent
the largest inputs it allows (lists at their length limit, every item the same id, strings at
their longest), must finish within a fixed budget of CPU time. CPU time of this thread, not wall
time: the Flask test client runs the request here, and a busy machine does not make it fail."""

import json
import time

from chat_appliance.lib.validators import MAX_LIST_LENGTH, MAX_MESSAGE_ID_LIST_LENGTH

from ..support.openapi import load_spec

# CPU seconds one request may take; the slowest operation measured about 0.15 s (a 1000-item
# subscription request). One POST /typing with 50,000 ids took 82 s before lists were bounded.
BUDGET_SECONDS = 1.0
# Operations that would end the test's own credentials or organization.
SKIPPED = {("post", "/users/me/api_key/regenerate"), ("post", "/realm/deactivate"), ("delete", "/users/me")}
MESSAGE_LISTS = {"messages", "message_ids", "msg_ids"}
STREAM_LISTS = {"stream_ids", "streams", "channel_ids", "subscriptions_ids"}


def resolve(spec, node):
    """The node with $ref followed and allOf merged (properties and required)."""
    while isinstance(node, dict) and "$ref" in node:
        target = spec
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    if isinstance(node, dict) and "allOf" in node:
        merged = {"properties": {}, "required": []}
        for part in node["allOf"]:
            part = resolve(spec, part)
            merged["properties"].update(part.get("properties", {}))
            merged["required"] += part.get("required", [])
            merged.setdefault("type", part.get("type"))
        return merged
    return node


class Values:
    """Largest allowed values, with ids that exist in the example organization."""

    def __init__(self, org, message_id):
        self.org, self.message_id = org, message_id

    def an_id(self, name):
        if "message" in name or name == "anchor":
            return self.message_id
        if "stream" in name or "channel" in name:
            return self.org.denmark.id
        if "group" in name:
            return 1
        return self.org.hamlet.id

    def of(self, spec, name, schema, example):
        schema = resolve(spec, schema or {})
        kind = schema.get("type")
        if kind == "array":
            length = schema.get("maxItems", MAX_MESSAGE_ID_LIST_LENGTH if name in MESSAGE_LISTS else MAX_LIST_LENGTH)
            items = resolve(spec, schema.get("items", {}))
            if isinstance(example, list) and example:
                item = example[0]
            elif items.get("type") == "integer":
                item = self.an_id(name if name not in STREAM_LISTS else "stream")
            elif items.get("type") == "object":
                item = items.get("example", {})
            else:
                item = "Denmark" if "subscription" in name else "x"
            return [item] * length
        if kind == "integer":
            return example if isinstance(example, int) else self.an_id(name)
        if kind == "boolean":
            return True
        if kind == "string":
            if "maxLength" in schema:
                return "x" * schema["maxLength"]
            if "enum" in schema:
                return schema["enum"][0]
            return example if isinstance(example, str) else "x" * 1000
        return example if example is not None else {}


def operations(spec):
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            if method in ("get", "post", "patch", "put", "delete") and (method, path) not in SKIPPED:
                yield method, path, operation


def request_for(spec, values, path, operation):
    """(URL, parameters) for one operation, every parameter at its largest."""
    params = {}
    url = path
    for parameter in operation.get("parameters", []):
        parameter = resolve(spec, parameter)
        value = values.of(spec, parameter["name"], parameter.get("schema") or
                          parameter.get("content", {}).get("application/json", {}).get("schema"),
                          parameter.get("example"))
        if parameter["in"] == "path":
            url = url.replace("{" + parameter["name"] + "}", str(value if not isinstance(value, list) else 1))
        elif parameter["in"] == "query":
            params[parameter["name"]] = value
    body = resolve(spec, operation.get("requestBody", {}))
    schema = resolve(spec, body.get("content", {}).get("application/x-www-form-urlencoded", {}).get("schema", {}))
    for name, prop in schema.get("properties", {}).items():
        prop = resolve(spec, prop)
        params[name] = values.of(spec, name, prop, prop.get("example"))
    wire = {name: value if isinstance(value, str) else json.dumps(value) for name, value in params.items()}
    return "/api/v1" + url, wire


def test_every_operation_stays_within_its_budget(org, flask_client):
    """Does every operation of the API description, sent its largest allowed inputs and lists
    made of one repeated id, answer without a 500 within BUDGET_SECONDS of CPU time?"""
    spec = load_spec()
    owner = org.client(org.owner)
    message_id = owner.post("messages", type="stream", to="Denmark", topic="budget", content="hello").get_json()["id"]
    values = Values(org, message_id)
    slow, total, count = [], 0.0, 0
    for method, path, operation in sorted(operations(spec), key=lambda op: (op[0] == "delete", op[1])):
        url, params = request_for(spec, values, path, operation)
        started = time.thread_time()
        if method == "get":
            response = flask_client.get(url, query_string=params, headers=owner.headers)
        else:
            response = flask_client.open(url, method=method.upper(), data=params, headers=owner.headers)
        spent = time.thread_time() - started
        total += spent
        count += 1
        assert response.status_code < 500, (method, path, response.get_data(as_text=True)[:300])
        if spent > BUDGET_SECONDS:
            slow.append((round(spent, 2), method.upper(), path))
    assert count > 100
    assert slow == [], sorted(slow, reverse=True)
