"""Test helpers: a client that encodes requests as real Zulip clients do, and assertions that
check Zulip's envelope and validate success bodies against Zulip's OpenAPI description."""

import base64
import json
import time

from chat_appliance.models import Message, UserProfile, database

from .openapi import validate_error, validate_response

# Real Zulip sends it in /register; this copy of the OpenAPI description does not list it.
UNDOCUMENTED_REGISTER_KEYS = ("server_report_message_types",)


def encode_params(params):
    """As the zulip library: strings raw, everything else json.dumps-ed, None dropped."""
    return {k: (v if isinstance(v, str) else json.dumps(v)) for k, v in params.items() if v is not None}


class ApiClient:
    """Calls /api/v1 with HTTP Basic auth and form-encoded parameters."""

    def __init__(self, flask_client, email, api_key):
        self.flask_client = flask_client
        self.headers = {}
        if email is not None:
            token = base64.b64encode(f"{email}:{api_key}".encode()).decode()
            self.headers["Authorization"] = f"Basic {token}"

    def call(self, method, path, params=None, **kwargs):
        url = "/api/v1/" + path.lstrip("/")
        data = encode_params(params or {})
        if method == "GET":
            return self.flask_client.get(url, query_string=data, headers=self.headers, **kwargs)
        return self.flask_client.open(url, method=method, data=data, headers=self.headers, **kwargs)

    def get(self, path, **params):
        return self.call("GET", path, params)

    def post(self, path, **params):
        return self.call("POST", path, params)

    def patch(self, path, **params):
        return self.call("PATCH", path, params)

    def put(self, path, **params):
        return self.call("PUT", path, params)

    def delete(self, path, **params):
        return self.call("DELETE", path, params)


def ok(response, undocumented=()):
    """Assert a Zulip success envelope with HTTP 200, valid against the OpenAPI schema; return the body.

    `undocumented` names keys real Zulip sends that this copy of the description lacks; they are
    left out of the validation only."""
    body = response.get_json()
    assert response.status_code == 200, (response.status_code, body)
    assert body["result"] == "success" and body["msg"] == "", body
    validate_response(response.request.method, response.request.path, 200,
                      {k: v for k, v in body.items() if k not in undocumented})
    return body


def err(response, status, code, msg=None):
    """Assert a Zulip error envelope with this status and code (and msg, if given), whose shape
    matches Zulip's documented error shapes (openapi.validate_error); return the body."""
    body = response.get_json()
    assert response.status_code == status, (response.status_code, body)
    assert body["result"] == "error", body
    assert body["code"] == code, body
    assert isinstance(body["msg"], str) and body["msg"], body
    if msg is not None:
        assert body["msg"] == msg, body
    validate_error(response.request.method, response.request.path, status, body)
    return body


def register(client, **params):
    """POST /register, asserted successful; the body."""
    return ok(client.post("register", **params), undocumented=UNDOCUMENTED_REGISTER_KEYS)


def get_events(client, queue_id, last_event_id=-1, dont_block=True, validate=True):
    """The events of a poll (validated against the OpenAPI description unless validate=False)."""
    response = client.get("events", queue_id=queue_id, last_event_id=last_event_id, dont_block=dont_block)
    if not validate:
        body = response.get_json()
        assert response.status_code == 200 and body["result"] == "success", body
        return body["events"]
    return ok(response)["events"]


def send(client, to="Denmark", topic="castle", content="hello"):
    """POST /messages to a channel, asserted successful; the new message's id."""
    return ok(client.post("messages", type="stream", to=to, topic=topic, content=content))["id"]


def set_date_sent(message_id, seconds_ago):
    """Backdate a message (edit and delete time limits)."""
    with database.connection_context():
        Message.update(date_sent=int(time.time()) - seconds_ago).where(Message.id == message_id).execute()


def active_ids(org):
    """Ids of every active user of the example organization (system bots included)."""
    with database.connection_context():
        return {u.id for u in UserProfile.select().where((UserProfile.realm == org.realm.id) & UserProfile.is_active)}
