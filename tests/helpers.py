"""Test helpers: a client that encodes requests as real Zulip clients do, and assertions that
check Zulip's envelope and validate success bodies against Zulip's OpenAPI description."""

import base64
import json
import time

from chat_appliance.actions.channels import do_create_streams, subscribe_users_to_streams
from chat_appliance.actions.realm import do_create_realm
from chat_appliance.actions.users import do_create_bot, do_create_user
from chat_appliance.db import write_transaction
from chat_appliance.lib.access import get_stream_by_name
from chat_appliance.models import (
    ROLE_ADMINISTRATOR,
    ROLE_GUEST,
    ROLE_MEMBER,
    ROLE_MODERATOR,
    Message,
    Realm,
    UserProfile,
    database,
)

from .openapi import validate_error, validate_response

# Cheap hashing keeps fixtures fast; production uses scrypt.
FAST_HASH = "pbkdf2:sha256:1000"
PASSWORD = "correct horse battery staple"
REALM_HOST = "zulip.example"


def app_config(instance_path):
    """The configuration of a test app on the database in `instance_path`."""
    return {
        "INSTANCE_PATH": str(instance_path),
        "PASSWORD_HASH_METHOD": FAST_HASH,
        "LOG_REQUESTS": False,
        "TESTING": True,
    }


def queue_manager(app):
    """The app's event queues."""
    return app.extensions["chat_appliance"].queues


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


class Org:
    """The example organization: named users and channels."""

    USERS = {
        "owner": "desdemona@zulip.example", "admin": "iago@zulip.example", "moderator": "shiva@zulip.example",
        "hamlet": "hamlet@zulip.example", "othello": "othello@zulip.example",
        "cordelia": "cordelia@zulip.example", "guest": "polonius@zulip.example",
        "bot": "hamlet-bot@zulip.example",
    }
    STREAMS = {"denmark": "Denmark", "verona": "Verona", "secret": "secret", "general": "general"}

    @staticmethod
    def populate(limits):
        """Create the organization in the current database (once per session, in the template)."""
        with database.connection_context():
            realm, owner = do_create_realm("Zulip Dev", REALM_HOST, f"http://{REALM_HOST}",
                                           Org.USERS["owner"], "Desdemona", PASSWORD, password_method=FAST_HASH)
            make = lambda key, name, role: do_create_user(  # noqa: E731
                realm, Org.USERS[key], PASSWORD, name, role=role, password_method=FAST_HASH)
            admin = make("admin", "Iago", ROLE_ADMINISTRATOR)
            make("moderator", "Shiva", ROLE_MODERATOR)
            hamlet = make("hamlet", "King Hamlet", ROLE_MEMBER)
            othello = make("othello", "Othello, the Moor of Venice", ROLE_MEMBER)
            cordelia = make("cordelia", "Cordelia, Lear's daughter", ROLE_MEMBER)
            guest = make("guest", "Polonius", ROLE_GUEST)
            bot = do_create_bot(hamlet, "Hamlet's Bot", "hamlet", 1)
            assert bot.email == Org.USERS["bot"], bot.email
            with write_transaction():
                streams, _created = do_create_streams(
                    realm, [("Denmark", "A Scandinavian country"), ("Verona", "A city in Italy")],
                    invite_only=False, history_public_to_subscribers=None, creator=owner, limits=limits)
                secret, _ = do_create_streams(realm, [("secret", "Private things")], invite_only=True,
                                              history_public_to_subscribers=False, creator=admin, limits=limits)
            subscribe_users_to_streams([streams["denmark"]], [hamlet, othello, admin])
            subscribe_users_to_streams([streams["verona"]], [hamlet, cordelia, guest])
            subscribe_users_to_streams([secret["secret"]], [admin, hamlet])

    def __init__(self, flask_client):
        """The organization as copied from the template: rows loaded by email and name."""
        self.flask_client = flask_client
        with database.connection_context():
            self.realm = Realm.get(Realm.host == REALM_HOST)
            for attribute, email in self.USERS.items():
                setattr(self, attribute, UserProfile.get(UserProfile.email == email))
            for attribute, name in self.STREAMS.items():
                setattr(self, attribute, get_stream_by_name(self.realm.id, name))

    def client(self, user):
        """An API client authenticated as `user`."""
        return ApiClient(self.flask_client, user.email, user.api_key)


class EventRecorder:
    """Events published while the test runs, with the ids of the users they were sent to."""

    def __init__(self):
        self.published = []

    def __call__(self, event, user_ids):
        self.published.append((event, set(user_ids)))

    def of(self, type_, **match):
        """(event, user ids) pairs of this type whose top-level fields equal `match`."""
        return [(e, ids) for e, ids in self.published
                if e["type"] == type_ and all(e.get(k) == v for k, v in match.items())]

    def one(self, type_, **match):
        """The single matching event, asserted to be exactly one."""
        found = self.of(type_, **match)
        assert len(found) == 1, (type_, match, self.published)
        return found[0]
