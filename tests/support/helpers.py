"""Test helpers: a client that encodes requests as real Zulip clients do, and assertions that
check Zulip's envelope and validate success bodies against Zulip's OpenAPI description."""

import base64
import io
import json
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from chat_appliance.actions.channels import do_create_streams, subscribe_users_to_streams
from chat_appliance.actions.realm import do_create_realm
from chat_appliance.actions.users import do_create_bot, do_create_user
from chat_appliance.db.connection import write_transaction
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

from . import pg
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
        # Off unless a test wants limits (tests/api/test_rate_limits.py turns them on).
        "RATE_LIMITING": False,
    }


def queue_manager(app):
    """The app's event queues."""
    return app.extensions["chat_appliance"].queues


# Real Zulip sends it in /register; this copy of the OpenAPI description does not list it.
UNDOCUMENTED_REGISTER_KEYS = ("server_report_message_types", "devices")


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

    prefix = "/api/v1/"

    def call(self, method, path, params=None, **kwargs):
        return self.send(method, path, params, self.headers, **kwargs)

    def send(self, method, path, params, headers, **kwargs):
        """One request under `prefix`, with these headers."""
        url = self.prefix + path.lstrip("/")
        data = encode_params(params or {})
        if method == "GET":
            return self.flask_client.get(url, query_string=data, headers=headers, **kwargs)
        return self.flask_client.open(url, method=method, data=data, headers=headers, **kwargs)

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
            # One query for everyone: most tests load the organization and nothing else.
            by_email = {user.email: user for user in
                        UserProfile.select().where(UserProfile.email.in_(list(self.USERS.values())))}
            for attribute, email in self.USERS.items():
                setattr(self, attribute, by_email[email])
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


def queues(org, *users, **params):
    """{user: (client, queue id)} for fresh queues of these users."""
    result = {}
    for user in users:
        client = org.client(user)
        result[user.id] = (client, register(client, **params)["queue_id"])
    return result


def polled(qs, user):
    client, queue_id = qs[user.id]
    return get_events(client, queue_id)


PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


def upload_emoji(org, user, name, content=PNG, filename="parrot.png", files=1):
    """POST /realm/emoji/{name} as the zulip library sends it: multipart, one file."""
    client = org.client(user)
    data = {f"file{i}": (io.BytesIO(content), filename) for i in range(files)}
    return org.flask_client.post(f"/api/v1/realm/emoji/{name}", headers=client.headers, data=data,
                                 content_type="multipart/form-data")


def upload(org, user, content=b"hello file", name="notes.txt", field=None):
    """Upload as the zulip library does: multipart, the field named after the file's path."""
    client = org.client(user)
    return org.flask_client.post("/api/v1/user_uploads", headers=client.headers,
                                 data={field or f"/home/someone/{name}": (io.BytesIO(content), name)},
                                 content_type="multipart/form-data")


def thumbnails_made(app, timeout=30.0):
    """Wait until the thumbnail worker (workers/thumbnails.py) has no job queued, being decoded
    or left to find: an upload's job is queued when its request answers, so after this every
    image uploaded so far has its thumbnails, or has been given up."""
    assert app.extensions["chat_appliance"].workers["thumbnails"].drain(timeout), "thumbnail worker still busy"


def download(org, user, url):
    """GET an upload's URL as `user` (None: without credentials)."""
    headers = org.client(user).headers if user is not None else {}
    return org.flask_client.get(url, headers=headers)


ZULIP_REALM_ID = 7


def zulip_export(folder, *, version="10.4", flags_mask=3):
    """A minimal export as a Zulip 10 server's `manage.py export` lays it out: two people, one
    channel, a channel message with a reaction and an upload, a one-to-one message without
    rendered HTML, a custom emoji, the Welcome Bot as a cross-realm bot."""
    folder.mkdir(parents=True)
    realm = {
        "zerver_realm": [{"id": ZULIP_REALM_ID, "name": "Zulip Team", "string_id": "team", "description": "",
                          "date_created": 1600000000.5, "deactivated": False,
                          "message_edit_history_visibility_policy": 1}],
        "zerver_userprofile": [
            {"id": 10, "email": "ada@team.example", "delivery_email": "ada@team.example", "full_name": "Ada",
             "realm": ZULIP_REALM_ID, "role": 100, "is_active": True, "is_bot": False, "bot_type": None,
             "bot_owner": None, "date_joined": 1600000001.0, "timezone": "", "email_address_visibility": 1,
             "is_mirror_dummy": False, "recipient": 101, "twenty_four_hour_time": True},
            {"id": 11, "email": "user11@team.example", "delivery_email": "bob@team.example", "full_name": "Bob",
             "realm": ZULIP_REALM_ID, "role": 400, "is_active": True, "is_bot": False, "bot_type": None,
             "bot_owner": None, "date_joined": 1600000002.0, "timezone": "", "email_address_visibility": 4,
             "is_mirror_dummy": False, "recipient": 102},
        ],
        "zerver_userprofile_mirrordummy": [],
        "zerver_userprofile_crossrealm": [{"id": 2, "email": "welcome-bot@zulip.com", "recipient_id": 3}],
        "zerver_stream": [{"id": 20, "name": "engineering", "realm": ZULIP_REALM_ID, "invite_only": False,
                           "history_public_to_subscribers": True, "date_created": 1600000003.0,
                           "description": "Builders", "rendered_description": "<p>Builders</p>",
                           "deactivated": False, "recipient": 120}],
        "zerver_recipient": [{"id": 101, "type": 1, "type_id": 10}, {"id": 102, "type": 1, "type_id": 11},
                             {"id": 120, "type": 2, "type_id": 20}, {"id": 130, "type": 3, "type_id": 40}],
        "zerver_subscription": [
            {"id": 1, "user_profile": 10, "recipient": 101, "active": True, "is_muted": False, "color": "#76ce90"},
            {"id": 2, "user_profile": 11, "recipient": 102, "active": True, "is_muted": False, "color": "#76ce90"},
            {"id": 3, "user_profile": 10, "recipient": 120, "active": True, "is_muted": False, "color": "#76ce90"},
            {"id": 4, "user_profile": 11, "recipient": 120, "active": True, "is_muted": True, "color": "#e79ab5"},
            {"id": 5, "user_profile": 10, "recipient": 130, "active": True},
            {"id": 6, "user_profile": 11, "recipient": 130, "active": True},
        ],
        "zerver_huddle": [{"id": 40, "huddle_hash": "x", "recipient": 130, "group_size": 2}],
        "zerver_client": [{"id": 1, "name": "website"}],
        "zerver_defaultstream": [{"id": 1, "realm": ZULIP_REALM_ID, "stream": 20}],
        "zerver_realmemoji": [{"id": 5, "realm": ZULIP_REALM_ID, "author": 10, "name": "shipit",
                               "file_name": "5.png", "is_animated": False, "deactivated": False}],
        "zerver_reaction": [{"id": 1, "user_profile": 11, "message": 1000, "emoji_name": "shipit",
                             "emoji_code": "5", "reaction_type": "realm_emoji"}],
        "zerver_usertopic": [], "zerver_alertword": [{"id": 1, "user_profile": 11, "realm": ZULIP_REALM_ID,
                                                     "word": "deploy"}],
    }
    upload_path = f"{ZULIP_REALM_ID}/ab/Xyz123/plan.txt"
    messages = {
        "zerver_message": [
            {"id": 1000, "sender": 10, "recipient": 120, "realm": ZULIP_REALM_ID, "subject": "launch",
             "content": f"Plan: [plan.txt](/user_uploads/{upload_path})",
             "rendered_content": f'<p>Plan: <a href="/user_uploads/{upload_path}">plan.txt</a></p>',
             "rendered_content_version": 1, "date_sent": 1600000100.25, "sending_client": 1,
             "last_edit_time": None, "edit_history": None, "has_attachment": True, "has_image": False,
             "has_link": True},
            {"id": 1001, "sender": 11, "recipient": 101, "realm": ZULIP_REALM_ID, "subject": "",
             "content": "hi **Ada**", "rendered_content": None, "date_sent": 1600000200.0, "sending_client": 1,
             "last_edit_time": None, "edit_history": None, "has_attachment": False, "has_image": False,
             "has_link": False},
            {"id": 1002, "sender": 10, "recipient": 130, "realm": ZULIP_REALM_ID, "subject": "",
             "content": "same pair, as a group", "rendered_content": "<p>same pair, as a group</p>",
             "date_sent": 1600000300.0, "sending_client": 1, "has_attachment": False, "has_image": False,
             "has_link": False},
        ],
        "zerver_usermessage": [
            {"id": 5, "user_profile": 10, "message": 1002, "flags_mask": 2049},
            {"id": 6, "user_profile": 11, "message": 1002, "flags_mask": 2048},
            {"id": 1, "user_profile": 10, "message": 1000, "flags_mask": 1},
            {"id": 2, "user_profile": 11, "message": 1000, "flags_mask": flags_mask},
            {"id": 3, "user_profile": 10, "message": 1001, "flags_mask": 2048},
            {"id": 4, "user_profile": 11, "message": 1001, "flags_mask": 2049},
        ],
    }
    (folder / "realm.json").write_text(json.dumps(realm))
    (folder / "messages-000001.json").write_text(json.dumps(messages))
    (folder / "attachment.json").write_text(json.dumps({"zerver_attachment": [
        {"id": 50, "file_name": "plan.txt", "path_id": upload_path, "owner": 10, "realm": ZULIP_REALM_ID,
         "create_time": 1600000099.0, "size": 9, "messages": [1000], "scheduled_messages": []}]}))
    (folder / "uploads" / upload_path).parent.mkdir(parents=True)
    (folder / "uploads" / upload_path).write_bytes(b"ship it!\n")
    (folder / "uploads" / "records.json").write_text(json.dumps([
        {"realm_id": ZULIP_REALM_ID, "user_profile_id": 10, "user_profile_email": "ada@team.example",
         "s3_path": upload_path, "path": upload_path, "size": 9, "last_modified": 1600000099.0,
         "content_type": None}]))
    emoji_path = f"{ZULIP_REALM_ID}/emoji/images/5.png"
    (folder / "emoji" / emoji_path).parent.mkdir(parents=True)
    (folder / "emoji" / emoji_path).write_bytes(PNG)
    (folder / "emoji" / "records.json").write_text(json.dumps([
        {"realm_id": ZULIP_REALM_ID, "author": 10, "path": emoji_path, "s3_path": emoji_path, "file_name": "5.png",
         "name": "shipit", "deactivated": False}]))
    (folder / "migration_status.json").write_text(json.dumps(
        {"migrations_by_app": {"zerver": ["[X] 0001_initial"]}, "zulip_version": version}))
    return folder


INIT_ARGS = ["--org-name", "Acme", "--owner-email", "boss@acme.example", "--owner-name", "The Boss",
             "--owner-password", "s3cret-pass"]


def run(*args, env=None):
    """Run `python -m chat_appliance ARGS` and return the completed process."""
    return subprocess.run([sys.executable, "-m", "chat_appliance", *args], capture_output=True, text=True,
                          timeout=60, env=env)


def grant_in_channel(stream, setting, group_name):
    """Set one of a channel's group settings to a system group."""
    from chat_appliance.lib.groups import system_group
    from chat_appliance.models import Stream

    with database.connection_context():
        row = Stream.get_by_id(stream.id)
        row.settings = dict(row.settings, **{setting: system_group(row.realm_id, group_name).id})
        row.save()


def kinds(events):
    return [(e["type"], e.get("op")) for e in events if e["type"] != "heartbeat"]


def wait_for(predicate, seconds=10.0):
    """The predicate's first true value within `seconds` (polled), else its last answer."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    return predicate()


def content_of(client, msg_id):
    """A message's Markdown source, as GET /messages/{id} returns it."""
    return ok(client.get(f"messages/{msg_id}"))["message"]["content"]


@contextmanager
def local_http_server(answer):
    """An HTTP server on 127.0.0.1 (a free port) in a thread, for the duration of the `with`; gives
    its base URL. Each GET is answered from answer(path): (content type, body bytes) for a 200, or
    None for a bare 404."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            found = answer(self.path)
            if found is None:
                self.send_response(404)
                self.end_headers()
                return
            kind, body = found
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


def new_instance_client(path, email):
    """A Flask client on an instance an import made, as `email` (with the key the import gave them)."""
    from chat_appliance.app import create_app
    from chat_appliance.config import load_config
    from chat_appliance.db.connection import close_connection

    close_connection()
    app = create_app({"INSTANCE_PATH": str(path), "DATABASE_URL": load_config(path)["DATABASE_URL"],
                      "PASSWORD_HASH_METHOD": FAST_HASH, "LOG_REQUESTS": False, "TESTING": True})
    with database.connection_context():
        user = UserProfile.get(UserProfile.delivery_email == email)
    return app.test_client(), ApiClient(app.test_client(), user.email, user.api_key)


def write_elsewhere(sql, *params):
    """A committed write by another connection than the app's: on SQLite another sqlite3
    connection to the file, as an admin command or a script in another process makes one."""
    if pg.ENABLED:
        with write_transaction():
            database.execute_sql(sql.replace("?", "%s"), params)
        return
    other = sqlite3.connect(database.obj.database)
    try:
        other.execute(sql, params)
        other.commit()
    finally:
        other.close()
