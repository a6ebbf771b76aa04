"""A stand-in for Zulip's Mobile Push Notification Service, on loopback, for the tests.

A small Flask app under werkzeug's threaded server. It checks each request as the real service
(zilencer) does, from the facts of its protocol: server registration with a UUID org id and a
64-character key; HTTP Basic auth (org id, org key) on everything else, compared in constant
time; form fields for push/register and push/unregister (token_kind and user_id JSON-encoded
integers, APNs needing ios_app_id); a JSON body for push/notify and push/test_notification.
Beyond the real service, it checks the notification payloads against the shapes Zulip's server
sends and the apps read, and answers 400 naming what is wrong: a test then sees no notification
and `problems` says why.

Like the real service, push/notify is refused until the server has uploaded its organizations'
role counts (server/analytics: "Missing data"), and for an organization of more than 10 people
(the free limit without a plan).

End-to-end encrypted push (Zulip 11/12, zilencer's push/e2ee/register and push/e2ee/notify): the
stand-in has its own key pair, `bouncer_public_key` (the real service's public key is built into
the app; its private key is the service's). A registration is opened with the private key and
checked as zilencer checks it (the public key named, the sealed JSON with token, token_kind,
timestamp and, for APNs only, ios_app_id; the token id matching the token; not older than a day),
and kept in `e2ee_devices`. A notify request is checked field by field; what the service would
hand to FCM (data: push_key_id as a string, encrypted_data) or APNs (the payload) is kept in
`e2ee_delivered`; token ids it does not know come back in delete_token_ids.

Everything accepted is kept: `servers`, `devices`, `calls` (endpoint, fields), `notifications`,
`analytics` (uploads). `fail_next` makes the next N authenticated calls answer 500.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import threading
import time
import uuid

from flask import Flask, jsonify, request
from nacl.exceptions import CryptoError
from nacl.public import PrivateKey, SealedBox
from werkzeug.serving import make_server

APNS, FCM = 1, 2
BASE_KEYS = {"server": str, "realm_id": int, "realm_uri": str, "realm_url": str, "realm_name": str, "user_id": int}
MESSAGE_KEYS = {"sender_id": int, "sender_email": str, "time": int, "recipient_type": str}
GCM_MESSAGE_KEYS = {"event": str, "zulip_message_id": int, "content": str, "content_truncated": bool,
                    "sender_full_name": str, "sender_avatar_url": str}
STREAM_KEYS = {"stream": str, "stream_id": int, "topic": str}
ID_LIST = re.compile(r"^\d+(,\d+)*$")
SYNCED_BILLING_EVENTS = {101, 102, 103, 104, 105, 201, 202, 229}
MAX_USERS_WITHOUT_PLAN = 10
REALM_KEYS = {"id": int, "host": str, "url": str, "date_created": (int, float), "deactivated": bool,
              "uuid": str, "uuid_owner_secret": str}
REALM_OPTIONAL = {"name": str, "org_type": int, "is_system_bot_realm": bool, "authentication_methods": dict}
# zilencer refuses a sealed registration older than this (PUSH_REGISTRATION_LIVENESS_TIMEOUT).
REGISTRATION_LIVENESS_SECONDS = 24 * 60 * 60
APNS_APP_ID = re.compile(r"^[A-Za-z0-9.-]+$")


class ServiceError(Exception):
    def __init__(self, msg, code="BAD_REQUEST", status=400):
        super().__init__(msg)
        self.msg, self.code, self.status = msg, code, status


def check_keys(where, data, spec, problems):
    for key, kind in spec.items():
        if key not in data:
            problems.append(f"{where}: missing {key}")
        elif not isinstance(data[key], kind) or (kind is int and isinstance(data[key], bool)):
            problems.append(f"{where}: {key} is {type(data[key]).__name__}, not {getattr(kind, '__name__', kind)}")


def message_shape(where, data, problems):
    check_keys(where, data, {**BASE_KEYS, **MESSAGE_KEYS}, problems)
    if data.get("recipient_type") == "stream":
        check_keys(where, data, STREAM_KEYS, problems)
    elif data.get("recipient_type") == "private":
        if "pm_users" in data and not ID_LIST.match(str(data["pm_users"])):
            problems.append(f"{where}: pm_users is not comma-separated ids")
    else:
        problems.append(f"{where}: recipient_type {data.get('recipient_type')!r}")


def payload_problems(body):
    """What is wrong with a push/notify body, as the apps would read it."""
    problems = []
    gcm, options, apns = body.get("gcm_payload"), body.get("gcm_options"), body.get("apns_payload")
    if not isinstance(gcm, dict) or not isinstance(options, dict) or not isinstance(apns, dict):
        return ["gcm_payload, gcm_options and apns_payload must be objects"]
    zulip = (apns.get("custom") or {}).get("zulip")
    if not isinstance(zulip, dict):
        return ["apns_payload.custom.zulip must be an object"]
    if not isinstance(apns.get("badge"), int):
        problems.append("apns_payload.badge must be an integer")
    event = gcm.get("event")
    if event == "message":
        message_shape("gcm_payload", gcm, problems)
        check_keys("gcm_payload", gcm, GCM_MESSAGE_KEYS, problems)
        if options != {"priority": "high"}:
            problems.append(f"gcm_options {options!r} for a message")
        message_shape("apns custom.zulip", zulip, problems)
        if zulip.get("message_ids") != [gcm.get("zulip_message_id")]:
            problems.append("apns custom.zulip.message_ids must be [the message id]")
        alert = apns.get("alert")
        if not isinstance(alert, dict) or not all(isinstance(alert.get(k), str) for k in ("title", "subtitle", "body")):
            problems.append("apns_payload.alert needs title, subtitle and body strings")
        if apns.get("sound") != "default":
            problems.append("apns_payload.sound must be 'default'")
        if len(gcm.get("content", "")) > 201:
            problems.append("content longer than 200 characters and the ellipsis")
    elif event == "remove":
        check_keys("gcm_payload", gcm, {**BASE_KEYS, "zulip_message_ids": str, "zulip_message_id": int}, problems)
        if not ID_LIST.match(str(gcm.get("zulip_message_ids"))):
            problems.append("zulip_message_ids is not comma-separated ids")
        if options != {"priority": "normal"}:
            problems.append(f"gcm_options {options!r} for a remove")
        check_keys("apns custom.zulip", zulip, {**BASE_KEYS, "zulip_message_ids": str}, problems)
        if zulip.get("event") != "remove":
            problems.append("apns custom.zulip.event must be 'remove'")
    else:
        problems.append(f"unknown gcm_payload.event {event!r}")
    return problems


def e2ee_request_problems(where, push_request, problems):
    """What is wrong with one entry of push/e2ee/notify's push_requests (zilencer's
    FCMPushRequest or APNsPushRequest, nothing more)."""
    if not isinstance(push_request, dict):
        problems.append(f"{where} is not an object")
        return
    payload = push_request.get("payload")
    if "fcm_priority" in push_request:
        expected = {"token_id", "fcm_priority", "payload"}
        if push_request["fcm_priority"] not in ("high", "normal"):
            problems.append(f"{where}.fcm_priority {push_request['fcm_priority']!r}")
        payload_keys = {"push_key_id", "encrypted_data"}
    else:
        expected = {"token_id", "http_headers", "payload"}
        headers = push_request.get("http_headers")
        if headers not in ({"apns_priority": 10, "apns_push_type": "alert"},
                           {"apns_priority": 5, "apns_push_type": "background"},
                           {"apns_priority": 1, "apns_push_type": "background"}):
            problems.append(f"{where}.http_headers {headers!r}")
        payload_keys = {"push_key_id", "encrypted_data", "aps"}
    if set(push_request) != expected:
        problems.append(f"{where} has keys {sorted(push_request)}, not {sorted(expected)}")
    if not isinstance(push_request.get("token_id"), str):
        problems.append(f"{where}.token_id is not a string")
    if not isinstance(payload, dict) or set(payload) != payload_keys:
        problems.append(f"{where}.payload must have exactly {sorted(payload_keys)}")
        return
    key_id = payload["push_key_id"]
    if not isinstance(key_id, int) or isinstance(key_id, bool) or not 0 <= key_id < 2**32:
        problems.append(f"{where}.payload.push_key_id is not an unsigned 32-bit integer")
    try:
        if len(base64.b64decode(payload["encrypted_data"], validate=True)) < 24 + 16:
            problems.append(f"{where}.payload.encrypted_data is shorter than a nonce and a MAC")
    except (binascii.Error, ValueError, TypeError):
        problems.append(f"{where}.payload.encrypted_data is not base64")


class PushServiceStandIn:
    """Start with .start(), stop with .stop(); `url` is where it listens."""

    def __init__(self):
        self.servers = {}  # org id -> {"key", "hostname", "contact_email"}
        self.devices = []  # {"server", "user_id", "user_uuid", "realm_uuid", "token", "kind", "ios_app_id"}
        self.calls = []  # (endpoint, fields) of accepted calls
        self.notifications = []  # push/notify bodies accepted
        self.analytics = []  # server/analytics uploads accepted (decoded)
        self.last_audit_id = {}  # org id -> the last audit-log row id received
        self.humans = {}  # (org id, realm uuid) -> people counted from the last role-count row
        self.problems = []  # why requests were refused
        self.fail_next = 0
        self.bouncer_key = PrivateKey.generate()
        self.bouncer_public_key = base64.b64encode(bytes(self.bouncer_key.public_key)).decode()
        self.e2ee_devices = {}  # (org id, realm uuid, token id) -> {"token", "token_kind", "ios_app_id"}
        # {"token", "token_kind", "fcm_data" | "apns_payload", "fcm_priority" | "http_headers"}
        self.e2ee_delivered = []
        self.lock = threading.Lock()
        self.app = self.build()
        self.httpd = None

    # --- running ---
    def start(self):
        self.httpd = make_server("127.0.0.1", 0, self.app, threaded=True)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def register_server(self, org_id=None, key=None, hostname="zulip.example"):
        """A server registered directly (as if register-push-service had run)."""
        org_id = org_id or str(uuid.uuid4())
        key = key or "k" * 64
        self.servers[org_id] = {"key": key, "hostname": hostname, "contact_email": "admin@zulip.example"}
        return org_id, key

    def open_registration(self, sealed, token_id):
        """The app's PushRegistration, opened and checked as zilencer checks it."""
        invalid = ServiceError("Invalid encrypted_push_registration")
        try:
            registration = json.loads(SealedBox(self.bouncer_key).decrypt(base64.b64decode(sealed, validate=True)))
        except (binascii.Error, ValueError, CryptoError):
            raise invalid from None
        if not isinstance(registration, dict) or set(registration) - {"token", "token_kind", "timestamp", "ios_app_id"}:
            raise invalid
        token, kind, app_id = registration.get("token"), registration.get("token_kind"), registration.get("ios_app_id")
        if not isinstance(token, str) or not token or len(token) > 4096 or kind not in ("fcm", "apns"):
            raise invalid
        if not isinstance(registration.get("timestamp"), int):
            raise invalid
        if kind == "apns":
            if not isinstance(app_id, str) or not APNS_APP_ID.match(app_id):
                raise invalid
            try:
                bytes.fromhex(token)
            except ValueError:
                raise invalid from None
        elif app_id is not None:
            raise invalid
        if base64.b64encode(hashlib.sha256(token.encode()).digest()[:8]).decode() != token_id:
            raise invalid
        return registration

    def calls_to(self, endpoint):
        return [fields for name, fields in self.calls if name == endpoint]

    # --- the protocol ---
    def authenticate(self):
        header = request.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            raise ServiceError("Missing authorization", "UNAUTHORIZED", 401)
        try:
            org_id, _sep, key = base64.b64decode(header[6:]).decode().partition(":")
        except (ValueError, UnicodeDecodeError):
            raise ServiceError("Invalid authorization", "UNAUTHORIZED", 401) from None
        server = self.servers.get(org_id)
        if server is None:
            raise ServiceError(f"Zulip server auth failure: {org_id} is not registered -- did you run "
                               "`manage.py register_server`?", "INVALID_ZULIP_SERVER", 401)
        if not hmac.compare_digest(server["key"].encode(), key.encode()):
            raise ServiceError(f"Zulip server auth failure: key does not match role {org_id}",
                               "INVALID_ZULIP_SERVER", 401)
        if not request.headers.get("User-Agent", "").startswith("ZulipServer/"):
            raise ServiceError("User-Agent must name a Zulip server")
        return org_id

    @staticmethod
    def form_json(name, required=False):
        """The form field `name` decoded from JSON; None when it is absent and not required."""
        raw = request.form.get(name)
        if raw is None:
            if required:
                raise ServiceError(f"Missing '{name}' argument", "REQUEST_VARIABLE_MISSING")
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise ServiceError(f"{name} is not valid JSON") from None

    @staticmethod
    def form_int(name, required=False):
        if not required and name not in request.form:
            return None
        value = PushServiceStandIn.form_json(name, required=True)  # present: a JSON null is refused below
        if not isinstance(value, int) or isinstance(value, bool):
            raise ServiceError(f"{name} is not an integer")
        return value

    @staticmethod
    def form_str(name, required=False):
        value = request.form.get(name)
        if required and not value:
            raise ServiceError(f"Missing '{name}' argument", "REQUEST_VARIABLE_MISSING")
        return value

    def user_identity(self, org_id):
        if request.form.get("server_uuid") not in (None, org_id):
            raise ServiceError("server_uuid is not the authenticated server")
        user_id, user_uuid = self.form_int("user_id"), self.form_str("user_uuid")
        realm_uuid = self.form_str("realm_uuid")
        if user_id is None and user_uuid is None:
            raise ServiceError("Missing user_id or user_uuid")
        if realm_uuid is not None and user_uuid is None:
            raise ServiceError("realm_uuid needs user_uuid")
        for value in (user_uuid, realm_uuid):
            if value is not None and str(uuid.UUID(value)) != value:
                raise ServiceError("Invalid UUID")
        return user_id, user_uuid, realm_uuid

    def token_and_kind(self):
        token, kind = self.form_str("token", required=True), self.form_int("token_kind", required=True)
        if kind not in (APNS, FCM):
            raise ServiceError("Invalid token type")
        if kind == APNS:
            try:
                bytes.fromhex(token)
            except ValueError:
                raise ServiceError("Invalid APNS token") from None
        return token, kind

    def build(self):
        app = Flask("push_service_standin")

        @app.errorhandler(ServiceError)
        def refused(error):
            with self.lock:
                self.problems.append(error.msg)
            return jsonify(result="error", msg=error.msg, code=error.code), error.status

        def authenticated(view):
            def wrapper():
                org_id = self.authenticate()
                with self.lock:
                    if self.fail_next:
                        self.fail_next -= 1
                        return jsonify(result="error", msg="Internal server error"), 500
                return view(org_id)
            wrapper.__name__ = view.__name__
            return wrapper

        @app.post("/api/v1/remotes/server/register")
        def server_register():
            fields = request.form.to_dict()
            org_id, key = self.form_str("zulip_org_id", True), self.form_str("zulip_org_key", True)
            hostname, email = self.form_str("hostname", True), self.form_str("contact_email", True)
            new_key = self.form_str("new_org_key")
            try:
                if len(org_id) != 36 or str(uuid.UUID(org_id, version=4)) != org_id:
                    raise ValueError
            except ValueError:
                raise ServiceError("Invalid UUID") from None
            if len(key) != 64 or (new_key is not None and len(new_key) != 64):
                raise ServiceError("zulip_org_key is not 64 characters long")
            if not re.match(r"^[A-Za-z0-9.-]+(:\d+)?$", hostname) or len(hostname) > 128:
                raise ServiceError(f"{hostname} is not a valid hostname")
            if not re.match(r"^[^@\s]+@[^@\s]+\.[^@\s]+$", email):
                raise ServiceError("Enter a valid email address.")
            if email.rsplit("@", 1)[1].lower() == "example.com":
                raise ServiceError("Invalid email address.")
            with self.lock:
                server = self.servers.get(org_id)
                if server is not None and not hmac.compare_digest(server["key"].encode(), key.encode()):
                    raise ServiceError(f"Zulip server auth failure: key does not match role {org_id}",
                                       "INVALID_ZULIP_SERVER", 401)
                if server is None and any(s["hostname"] == hostname for s in self.servers.values()):
                    raise ServiceError(f"A server with hostname {hostname} already exists")
                created = server is None
                self.servers[org_id] = {"key": new_key or key, "hostname": hostname, "contact_email": email}
                self.calls.append(("server/register", fields))
            return jsonify(result="success", msg="", created=created)

        @app.post("/api/v1/remotes/push/register")
        @authenticated
        def push_register(org_id):
            token, kind = self.token_and_kind()
            ios_app_id = self.form_str("ios_app_id")
            if kind == APNS and ios_app_id is None:
                raise ServiceError("Missing ios_app_id")
            user_id, user_uuid, realm_uuid = self.user_identity(org_id)
            with self.lock:
                if not any(d["server"] == org_id and d["token"] == token and d["kind"] == kind
                           and d["user_uuid"] == user_uuid for d in self.devices):
                    self.devices.append({"server": org_id, "user_id": user_id, "user_uuid": user_uuid,
                                         "realm_uuid": realm_uuid, "token": token, "kind": kind,
                                         "ios_app_id": ios_app_id})
                self.calls.append(("push/register", request.form.to_dict()))
            return jsonify(result="success", msg="")

        @app.post("/api/v1/remotes/push/unregister")
        @authenticated
        def push_unregister(org_id):
            token, kind = self.token_and_kind()
            user_id, user_uuid, _realm = self.user_identity(org_id)
            with self.lock:
                before = len(self.devices)
                self.devices = [d for d in self.devices if not (
                    d["server"] == org_id and d["token"] == token and d["kind"] == kind
                    and (d["user_uuid"] == user_uuid or (user_id is not None and d["user_id"] == user_id)))]
                if len(self.devices) == before:
                    raise ServiceError("Token does not exist")
                self.calls.append(("push/unregister", request.form.to_dict()))
            return jsonify(result="success", msg="")

        def json_body(allowed, required):
            if request.mimetype != "application/json":
                raise ServiceError("Expected a JSON body")
            body = request.get_json(silent=True)
            if not isinstance(body, dict):
                raise ServiceError("Malformed JSON")
            extra = set(body) - set(allowed)
            if extra:
                raise ServiceError(f"Unexpected fields {sorted(extra)}")
            for key in required:
                if key not in body:
                    raise ServiceError(f"Missing '{key}' argument", "REQUEST_VARIABLE_MISSING")
            for key, kind in allowed.items():
                if key in body and body[key] is not None and not isinstance(body[key], kind):
                    raise ServiceError(f"{key} has the wrong type")
            return body

        @app.get("/api/v1/remotes/server/analytics/status")
        @authenticated
        def analytics_status(org_id):
            return jsonify(result="success", msg="", last_realm_count_id=0, last_installation_count_id=0,
                           last_realmauditlog_id=self.last_audit_id.get(org_id, 0))

        @app.post("/api/v1/remotes/server/analytics")
        @authenticated
        def analytics(org_id):
            def field(name, required=True):
                return self.form_json(name, required)

            realms, rows = field("realms"), field("realmauditlog_rows", required=False) or []
            if field("realm_counts") != [] or field("installation_counts") != []:
                raise ServiceError("this stand-in expects no usage counts")
            if not isinstance(field("version"), str) or not isinstance(field("api_feature_level", False), (int, type(None))):
                raise ServiceError("version must be a JSON string, api_feature_level a JSON integer")
            for realm in realms:
                problems = []
                check_keys("realm", realm, REALM_KEYS, problems)
                extra = set(realm) - set(REALM_KEYS) - set(REALM_OPTIONAL)
                if extra:
                    problems.append(f"realm: unexpected {sorted(extra)}")
                if problems:
                    raise ServiceError("; ".join(problems))
                if str(uuid.UUID(realm["uuid"], version=4)) != realm["uuid"]:
                    raise ServiceError("Invalid UUID")
            by_id = {realm["id"]: realm["uuid"] for realm in realms}
            last = self.last_audit_id.get(org_id, 0)
            counts = {}
            for row in rows:
                problems = []
                check_keys("audit row", row, {"id": int, "realm": int, "event_time": (int, float), "backfilled": bool,
                                              "event_type": int}, problems)
                if problems:
                    raise ServiceError("; ".join(problems))
                if row["event_type"] not in SYNCED_BILLING_EVENTS:
                    raise ServiceError("Invalid event type.")
                if row["id"] <= last:
                    raise ServiceError("Data is out of order.")
                last = row["id"]
                extra = json.loads(row["extra_data"]) if isinstance(row["extra_data"], str) else row["extra_data"]
                humans = (extra or {}).get("10", {}).get("11")
                if not isinstance(humans, dict) or row["realm"] not in by_id:
                    raise ServiceError("audit row without role counts, or for an unknown realm")
                counts[(org_id, by_id[row["realm"]])] = sum(humans.values())
            with self.lock:
                self.last_audit_id[org_id] = last
                self.humans.update(counts)
                self.analytics.append({"realms": realms, "realmauditlog_rows": rows})
            answer = {realm["uuid"]: {"can_push": self.humans.get((org_id, realm["uuid"]), 0) <= MAX_USERS_WITHOUT_PLAN,
                                      "expected_end_timestamp": None} for realm in realms}
            return jsonify(result="success", msg="", realms=answer)

        @app.post("/api/v1/remotes/push/notify")
        @authenticated
        def push_notify(org_id):
            body = json_body({"user_id": int, "user_uuid": str, "realm_uuid": str, "gcm_payload": dict,
                              "apns_payload": dict, "gcm_options": dict, "android_devices": list,
                              "apple_devices": list}, ())
            if body.get("user_id") is None and body.get("user_uuid") is None:
                raise ServiceError("Missing user_id or user_uuid")
            problems = payload_problems(body)
            if problems:
                raise ServiceError("; ".join(problems))
            humans = self.humans.get((org_id, body.get("realm_uuid")))
            if humans is None:
                raise ServiceError("Your plan doesn't allow sending push notifications. Reason provided by the "
                                   "server: Missing data", "PUSH_NOTIFICATIONS_DISALLOWED")
            if humans > MAX_USERS_WITHOUT_PLAN:
                raise ServiceError("Your plan doesn't allow sending push notifications. Reason provided by the "
                                   "server: Push notifications access with 10+ users requires signing up for a plan.",
                                   "PUSH_NOTIFICATIONS_DISALLOWED")
            with self.lock:
                mine = [d for d in self.devices if d["server"] == org_id and (
                    d["user_uuid"] == body.get("user_uuid") or d["user_id"] == body.get("user_id"))]
                android = [d["token"] for d in mine if d["kind"] == FCM]
                apple = [d["token"] for d in mine if d["kind"] == APNS]
                self.notifications.append(body)
                self.calls.append(("push/notify", body))
            deleted = {"android_devices": sorted(set(body.get("android_devices") or []) - set(android)),
                       "apple_devices": sorted(set(body.get("apple_devices") or []) - set(apple))}
            return jsonify(result="success", msg="", total_android_devices=len(android),
                           total_apple_devices=len(apple), deleted_devices=deleted, realm=None)

        def known_realm(org_id, realm_uuid):
            if (org_id, realm_uuid) not in self.humans:
                raise ServiceError("Organization not registered", "MISSING_REMOTE_REALM", 403)

        @app.post("/api/v1/remotes/push/e2ee/register")
        @authenticated
        def push_e2ee_register(org_id):
            realm_uuid = self.form_str("realm_uuid", True)
            token_id = self.form_str("token_id", True)
            sealed = self.form_str("encrypted_push_registration", True)
            public_key = self.form_str("bouncer_public_key", True)
            known_realm(org_id, realm_uuid)
            if public_key != self.bouncer_public_key:
                raise ServiceError("Invalid bouncer_public_key", "INVALID_BOUNCER_PUBLIC_KEY")
            registration = self.open_registration(sealed, token_id)
            if registration["timestamp"] < time.time() - REGISTRATION_LIVENESS_SECONDS:
                raise ServiceError("Request expired", "REQUEST_EXPIRED")
            with self.lock:
                self.e2ee_devices[(org_id, realm_uuid, token_id)] = {
                    key: registration.get(key) for key in ("token", "token_kind", "ios_app_id")}
                self.calls.append(("push/e2ee/register", request.form.to_dict()))
            return jsonify(result="success", msg="")

        @app.post("/api/v1/remotes/push/e2ee/notify")
        @authenticated
        def push_e2ee_notify(org_id):
            body = json_body({"realm_uuid": str, "push_requests": list}, ("realm_uuid", "push_requests"))
            known_realm(org_id, body["realm_uuid"])
            problems = []
            for index, push_request in enumerate(body["push_requests"]):
                e2ee_request_problems(f"push_requests[{index}]", push_request, problems)
            if problems:
                raise ServiceError("; ".join(problems))
            delivered, gone = [], []
            with self.lock:
                for push_request in body["push_requests"]:
                    device = self.e2ee_devices.get((org_id, body["realm_uuid"], push_request["token_id"]))
                    if device is None:
                        gone.append(push_request["token_id"])
                    elif device["token_kind"] == "fcm" and "fcm_priority" in push_request:
                        # zilencer hands FCM only strings.
                        payload = push_request["payload"]
                        delivered.append({"token": device["token"], "token_kind": "fcm",
                                          "fcm_priority": push_request["fcm_priority"],
                                          "fcm_data": {"push_key_id": str(payload["push_key_id"]),
                                                       "encrypted_data": payload["encrypted_data"]}})
                    elif device["token_kind"] == "apns" and "http_headers" in push_request:
                        delivered.append({"token": device["token"], "token_kind": "apns",
                                          "http_headers": push_request["http_headers"],
                                          "apns_payload": push_request["payload"]})
                    else:
                        raise ServiceError(f"push request for a {device['token_kind']} token in the other shape")
                self.e2ee_delivered.extend(delivered)
                self.calls.append(("push/e2ee/notify", body))
            return jsonify(result="success", msg="",
                           android_successfully_sent_count=sum(d["token_kind"] == "fcm" for d in delivered),
                           apple_successfully_sent_count=sum(d["token_kind"] == "apns" for d in delivered),
                           delete_token_ids=gone,
                           realm_push_status={"can_push": True, "expected_end_timestamp": None})

        @app.post("/api/v1/remotes/push/test_notification")
        @authenticated
        def push_test_notification(org_id):
            body = json_body({"token": str, "token_kind": int, "user_id": int, "user_uuid": str,
                              "realm_uuid": str, "base_payload": dict},
                             ("token", "token_kind", "user_id", "user_uuid", "base_payload"))
            with self.lock:
                if not any(d["server"] == org_id and d["token"] == body["token"] and d["kind"] == body["token_kind"]
                           and d["user_uuid"] == body["user_uuid"] for d in self.devices):
                    raise ServiceError("Device not recognized by the push bouncer",
                                       "INVALID_REMOTE_PUSH_DEVICE_TOKEN")
                self.calls.append(("push/test_notification", body))
            return jsonify(result="success", msg="")

        return app
