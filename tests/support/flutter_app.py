"""The Zulip mobile app's (zulip-flutter's) view of responses: its register parameters and a checker
of the keys and types its decoders require, from tests/support/data/flutter_keys.json (made by
scripts/flutter_keys.py from the app's generated decoders)."""

import base64
import hashlib
import json
import secrets
import time
from pathlib import Path

from nacl.public import PublicKey, SealedBox
from nacl.secret import SecretBox

KEYS = json.loads((Path(__file__).parent / "data" / "flutter_keys.json").read_text(encoding="utf-8"))
CLASSES = KEYS["classes"]

# The client capabilities lib/api/route/events.dart's registerQueue declares.
APP_CAPABILITIES = {
    "notification_settings_null": True, "bulk_message_deletion": True, "user_avatar_url_field_optional": True,
    "stream_typing_notifications": True, "user_settings_object": True, "include_deactivated_groups": True,
    "empty_topic_name": True, "individual_emoji_changes": True,
}

# The User-Agent lib/api/core.dart's userAgentHeader builds on a phone.
APP_USER_AGENT = "ZulipFlutter/30.0.262+262 (Android 14)"


class Raw:
    """The app's RawParameter: a value sent as it is, not JSON-encoded."""

    def __init__(self, value):
        self.value = value


def dart_json(value):
    """dart:convert's jsonEncode: compact, non-ASCII left as it is."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def encode_parameters(params):
    """lib/api/core.dart's encodeParameters: RawParameter values as they are, every other value
    (strings included) JSON-encoded. The app leaves out null parameters before this (`?value`)."""
    return {key: value.value if isinstance(value, Raw) else dart_json(value)
            for key, value in params.items() if value is not None}


# Bytes that Dart's Uri encoders leave unescaped: Uri.encodeQueryComponent (what package:http's
# bodyFields uses) keeps RFC 2396's unreserved set; a Uri built with queryParameters keeps RFC
# 3986's. Both write a space as "+".
_UNRESERVED_2396 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.!~*'()")
_UNRESERVED_3986 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")


def _dart_escape(text, unreserved):
    out = []
    for byte in text.encode("utf-8"):
        if byte in unreserved:
            out.append(chr(byte))
        elif byte == 0x20:
            out.append("+")
        else:
            out.append(f"%{byte:02X}")
    return "".join(out)


def form_body(fields):
    """package:http's Request.bodyFields: the body bytes the app sends for POST, PATCH and DELETE."""
    return "&".join(f"{_dart_escape(k, _UNRESERVED_2396)}={_dart_escape(v, _UNRESERVED_2396)}"
                    for k, v in fields.items()).encode("ascii")


def query_string(fields):
    """The query of realmUrl.replace(queryParameters: ...), as the app's GET requests carry it."""
    return "&".join(f"{_dart_escape(k, _UNRESERVED_3986)}={_dart_escape(v, _UNRESERVED_3986)}"
                    for k, v in fields.items())


class AppClient:
    """Requests as the app's ApiConnection sends them: Basic auth, its User-Agent, parameters
    through encodeParameters, and the body or query encoded as package:http encodes it. The
    methods below mirror the app's route bindings (lib/api/route/*.dart), parameter for parameter."""

    def __init__(self, flask_client, email, api_key):
        self.flask_client = flask_client
        token = base64.b64encode(f"{email}:{api_key}".encode()).decode()
        self.headers = {"Authorization": f"Basic {token}", "User-Agent": APP_USER_AGENT}

    def request(self, method, path, params=None):
        """One request to /api/v1/PATH; `params` as the app's route binding builds them."""
        url = "/api/v1/" + path
        fields = encode_parameters(params) if params is not None else None
        if method == "GET":
            query = query_string(fields) if fields else ""
            return self.flask_client.get(url + ("?" + query if query else ""), headers=self.headers)
        headers = dict(self.headers)
        body = b""
        if fields is not None:
            # package:http sets this Content-Type whenever bodyFields is assigned, even to {}.
            headers["Content-Type"] = "application/x-www-form-urlencoded; charset=utf-8"
            body = form_body(fields)
        return self.flask_client.open(url, method=method, data=body, headers=headers)

    # lib/api/route/events.dart
    def register_queue(self, idle_queue_timeout=None):
        return self.request("POST", "register", {
            "idle_queue_timeout": idle_queue_timeout,
            "apply_markdown": True, "client_gravatar": False, "slim_presence": True,
            "client_capabilities": APP_CAPABILITIES})

    def get_events(self, queue_id, last_event_id=None, dont_block=None):
        return self.request("GET", "events", {"queue_id": Raw(queue_id), "last_event_id": last_event_id,
                                              "dont_block": dont_block})

    # lib/api/route/messages.dart
    def get_message(self, message_id, apply_markdown=None):
        return self.request("GET", f"messages/{message_id}", {"apply_markdown": apply_markdown,
                                                               "allow_empty_topic_name": True})

    def get_messages(self, narrow, anchor, num_before, num_after, include_anchor=None, client_gravatar=None,
                     apply_markdown=None):
        return self.request("GET", "messages", {
            "narrow": narrow, "anchor": Raw(str(anchor)), "include_anchor": include_anchor,
            "num_before": num_before, "num_after": num_after, "client_gravatar": client_gravatar,
            "apply_markdown": apply_markdown, "allow_empty_topic_name": True})

    def send_message(self, *, stream_id=None, topic=None, user_ids=None, content, queue_id=None, local_id=None,
                     read_by_sender=None):
        if stream_id is not None:
            destination = {"type": Raw("channel"), "to": stream_id, "topic": Raw(topic)}
        else:
            destination = {"type": Raw("direct"), "to": user_ids}
        return self.request("POST", "messages", {
            **destination, "content": Raw(content),
            "queue_id": Raw(queue_id) if queue_id is not None else None,
            "local_id": Raw(local_id) if local_id is not None else None, "read_by_sender": read_by_sender})

    def update_message(self, message_id, *, topic=None, propagate_mode=None, send_notification_to_old_thread=None,
                       send_notification_to_new_thread=None, content=None, prev_content_sha256=None,
                       stream_id=None):
        def raw(value):
            return Raw(value) if value is not None else None
        return self.request("PATCH", f"messages/{message_id}", {
            "topic": raw(topic), "propagate_mode": raw(propagate_mode),
            "send_notification_to_old_thread": send_notification_to_old_thread,
            "send_notification_to_new_thread": send_notification_to_new_thread,
            "content": raw(content), "prev_content_sha256": raw(prev_content_sha256), "stream_id": stream_id})

    def delete_message(self, message_id):
        return self.request("DELETE", f"messages/{message_id}", {})

    def report_message(self, message_id, report_type, description=None):
        return self.request("POST", f"messages/{message_id}/report", {
            "report_type": Raw(report_type),
            "description": Raw(description) if description is not None else None})

    def add_reaction(self, message_id, emoji_name, emoji_code, reaction_type):
        return self.request("POST", f"messages/{message_id}/reactions", {
            "emoji_name": Raw(emoji_name), "emoji_code": Raw(emoji_code), "reaction_type": Raw(reaction_type)})

    def remove_reaction(self, message_id, emoji_name, emoji_code, reaction_type):
        return self.request("DELETE", f"messages/{message_id}/reactions", {
            "emoji_name": Raw(emoji_name), "emoji_code": Raw(emoji_code), "reaction_type": Raw(reaction_type)})

    def update_message_flags(self, messages, op, flag):
        return self.request("POST", "messages/flags", {"messages": messages, "op": Raw(op), "flag": Raw(flag)})

    def update_message_flags_for_narrow(self, anchor, num_before, num_after, narrow, op, flag, include_anchor=None):
        return self.request("POST", "messages/flags/narrow", {
            "anchor": Raw(str(anchor)), "include_anchor": include_anchor, "num_before": num_before,
            "num_after": num_after, "narrow": narrow, "op": Raw(op), "flag": Raw(flag)})

    def get_read_receipts(self, message_id):
        return self.request("GET", f"messages/{message_id}/read_receipts")

    def get_file_temporary_url(self, realm_id, filename):
        return self.request("GET", f"user_uploads/{realm_id}/{filename}", {})

    def upload_file(self, content, filename, content_type):
        """postFileFromStream: a MultipartRequest with one part, "file", laid out as package:http
        lays it out (lower-case part headers, its boundary prefix)."""
        boundary = "dart-http-boundary-" + "x" * 51
        body = (f"--{boundary}\r\ncontent-type: {content_type}\r\n"
                f'content-disposition: form-data; name="file"; filename="{filename}"\r\n\r\n').encode()
        body += content + f"\r\n--{boundary}--\r\n".encode()
        headers = dict(self.headers, **{"Content-Type": f"multipart/form-data; boundary={boundary}"})
        return self.flask_client.post("/api/v1/user_uploads", data=body, headers=headers)

    # lib/api/route/channels.dart
    def subscribe_to_channel(self, names, principals=None):
        return self.request("POST", "users/me/subscriptions", {
            "subscriptions": [{"name": name} for name in names], "principals": principals})

    def unsubscribe_from_channel(self, names, principals=None):
        return self.request("DELETE", "users/me/subscriptions", {"subscriptions": names, "principals": principals})

    def update_subscription_settings(self, stream_id, property, value):
        return self.request("POST", "users/me/subscriptions/properties", {
            "subscription_data": [{"stream_id": stream_id, "property": property, "value": value}]})

    def get_channel_topics(self, channel_id):
        return self.request("GET", f"users/me/{channel_id}/topics", {"allow_empty_topic_name": True})

    def mute_topic(self, channel_id, topic, op):
        """updateUserTopicCompat's form for servers before feature level 170."""
        return self.request("PATCH", "users/me/subscriptions/muted_topics", {
            "stream_id": channel_id, "topic": Raw(topic), "op": Raw(op)})

    def update_user_topic(self, channel_id, topic, visibility_policy):
        return self.request("POST", "user_topics", {
            "stream_id": channel_id, "topic": Raw(topic), "visibility_policy": visibility_policy})

    # lib/api/route/account.dart
    def fetch_api_key(self, username, password):
        """Sent before the app has a key: no Authorization header."""
        headers = {"User-Agent": APP_USER_AGENT, "Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}
        body = form_body(encode_parameters({"username": Raw(username), "password": Raw(password)}))
        return self.flask_client.post("/api/v1/fetch_api_key", data=body, headers=headers)

    def register_client_device(self):
        return self.request("POST", "register_client_device", {})

    def remove_client_device(self, device_id):
        return self.request("POST", "remove_client_device", {"device_id": device_id})

    # lib/api/route/notifications.dart
    def register_push_device(self, device_id, *, push_key_id=None, push_key=None, token_kind=None, token_id=None,
                             bouncer_public_key=None, encrypted_push_registration=None):
        params = {"device_id": device_id}
        if push_key is not None:
            params.update(push_key_id=push_key_id, push_key=Raw(push_key))
        if token_id is not None:
            params.update(token_kind=Raw(token_kind), token_id=Raw(token_id),
                          bouncer_public_key=Raw(bouncer_public_key),
                          encrypted_push_registration=Raw(encrypted_push_registration))
        return self.request("POST", "mobile_push/register", params)

    def register_e2ee_push(self, device_id, token, bouncer_public_key, *, token_kind="fcm", ios_app_id=None,
                           push_key=None, push_key_id=None, timestamp=None, send_key=True, send_token=True):
        """What lib/model/push_device.dart's _registerToken sends: a push key (a fresh one unless
        given) and the token sealed to the service's public key; either may be left out, as the app
        leaves out what the server already has. Returns (response, push key bytes, push key id)."""
        push_key = push_key or generate_push_key()
        push_key_id = generate_push_key_id() if push_key_id is None else push_key_id
        key_args, token_args = {}, {}
        if send_key:
            key_args = {"push_key_id": push_key_id, "push_key": base64.b64encode(push_key).decode()}
        if send_token:
            sealed = encrypt_push_registration(bouncer_public_key, token_kind, token, timestamp, ios_app_id)
            token_args = {"token_kind": token_kind, "token_id": compute_token_id(token),
                          "bouncer_public_key": bouncer_public_key, "encrypted_push_registration": sealed}
        return self.register_push_device(device_id, **key_args, **token_args), push_key, push_key_id

    def add_fcm_token(self, token):
        return self.request("POST", "users/me/android_gcm_reg_id", {"token": Raw(token)})

    def remove_fcm_token(self, token):
        return self.request("DELETE", "users/me/android_gcm_reg_id", {"token": Raw(token)})

    def add_apns_token(self, token, appid):
        return self.request("POST", "users/me/apns_device_token", {"token": Raw(token), "appid": Raw(appid)})

    def remove_apns_token(self, token):
        return self.request("DELETE", "users/me/apns_device_token", {"token": Raw(token)})

    # lib/api/route/realm.dart
    def get_server_settings(self):
        return self.request("GET", "server_settings")

    # lib/api/route/saved_snippets.dart
    def create_saved_snippet(self, title, content):
        return self.request("POST", "saved_snippets", {"title": Raw(title), "content": Raw(content)})

    # lib/api/route/settings.dart: emojiset goes raw, the others JSON-encoded (booleans).
    def update_settings(self, **settings):
        return self.request("PATCH", "settings", {
            name: Raw(value) if name == "emojiset" else value for name, value in settings.items()})

    # lib/api/route/submessage.dart: content is the widget's data object, JSON-encoded.
    def send_submessage(self, message_id, msg_type, content):
        return self.request("POST", "submessage", {"message_id": message_id, "msg_type": Raw(msg_type),
                                                   "content": content})

    # lib/api/route/typing.dart (servers with stream_id for channels, and "direct")
    def set_typing_status(self, op, *, stream_id=None, topic=None, user_ids=None):
        if stream_id is not None:
            return self.request("POST", "typing", {"op": Raw(op), "type": Raw("channel"), "stream_id": stream_id,
                                                   "topic": Raw(topic)})
        return self.request("POST", "typing", {"op": Raw(op), "type": Raw("direct"), "to": user_ids})

    # lib/api/route/users.dart
    def get_own_user(self):
        return self.request("GET", "users/me", {})

    def update_status(self, status_text=None, emoji=None):
        params = {}
        if status_text is not None:
            params["status_text"] = Raw(status_text)
        if emoji is not None:
            name, code, kind = emoji
            params.update(emoji_name=Raw(name), emoji_code=Raw(code), reaction_type=Raw(kind))
        return self.request("POST", "users/me/status", params)

    def update_presence(self, status, last_update_id=None, history_limit_days=None, new_user_input=None,
                        ping_only=None):
        return self.request("POST", "users/me/presence", {
            "last_update_id": last_update_id, "history_limit_days": history_limit_days,
            "new_user_input": new_user_input, "ping_only": ping_only, "status": Raw(status),
            "slim_presence": True})


def app_client(org, user):
    """The app signed in as `user` of the example organization."""
    return AppClient(org.flask_client, user.email, user.api_key)


def app_register(app):
    """The register the app makes at start (lib/model/store.dart: idleQueueTimeout mobile),
    asserted successful and valid against the OpenAPI description; the body."""
    from .helpers import UNDOCUMENTED_REGISTER_KEYS, ok
    return ok(app.register_queue(idle_queue_timeout="mobile"), undocumented=UNDOCUMENTED_REGISTER_KEYS)


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


# ---- End-to-end encrypted notifications: lib/model/push_key.dart, lib/model/push_device.dart,
# lib/notifications/receive.dart and lib/api/notifications.dart, with PyNaCl for the app's libsodium.

# The tag byte of a secretbox push key (PushKeyStore.pushKeyTagSecretbox).
PUSH_KEY_TAG_SECRETBOX = 0x31


def generate_push_key():
    """PushKeyStore.generatePushKey: the tag byte, then 32 random bytes."""
    return bytes([PUSH_KEY_TAG_SECRETBOX]) + secrets.token_bytes(32)


def generate_push_key_id():
    """PushKeyStore.generatePushKeyId: a random unsigned 32-bit integer."""
    return secrets.randbelow(1 << 32)


def compute_token_id(token):
    """NotificationService.computeTokenId: base64 of the first 8 bytes of the token's SHA-256."""
    return base64.b64encode(hashlib.sha256(token.encode()).digest()[:8]).decode()


def encrypt_push_registration(bouncer_public_key, token_kind, token, timestamp=None, ios_app_id=None):
    """The PushRegistration JSON (token_kind, token, timestamp; ios_app_id on iOS only), sealed
    with crypto_box_seal to the service's public key (PushDeviceManager._encryptToBouncer), base64."""
    registration = {"token_kind": token_kind, "token": token,
                    "timestamp": int(time.time()) if timestamp is None else timestamp}
    if ios_app_id is not None:
        registration["ios_app_id"] = ios_app_id
    sealed = SealedBox(PublicKey(base64.b64decode(bouncer_public_key))).encrypt(dart_json(registration).encode())
    return base64.b64encode(bytes(sealed)).decode()


def decrypt_notification(push_key, encrypted_data):
    """PushKeyStore.decryptNotification: the 24-byte nonce first, then the secretbox ciphertext,
    opened with the key after its tag byte; the JSON plaintext decoded."""
    assert push_key[0] == PUSH_KEY_TAG_SECRETBOX and len(push_key) == 33
    cryptotext = base64.b64decode(encrypted_data)
    plaintext = SecretBox(push_key[1:]).decrypt(cryptotext[24:], cryptotext[:24])
    return json.loads(plaintext)


def encrypted_fcm_message(data):
    """EncryptedFcmMessage.fromJson: push_key_id an integer in a string (FCM data are strings),
    encrypted_data base64. (push_key_id, encrypted_data)."""
    assert isinstance(data["push_key_id"], str) and isinstance(data["encrypted_data"], str), data
    return int(data["push_key_id"], 10), data["encrypted_data"]


def notif_payload_problems(payload):
    """What NotifPayload.fromJson would fail on in a decrypted payload (its `message` and `remove`
    types; other types it ignores, as UnexpectedNotifPayload)."""
    problems = []

    def need(key, check, what, nullable=False):
        value = payload.get(key)
        if value is None and nullable:
            return
        if not check(value):
            problems.append(f"{key}: {value!r} is not {what}")

    def is_int(value):
        return isinstance(value, int) and not isinstance(value, bool)

    def is_str(value):
        return isinstance(value, str)

    def int_list(value):
        return isinstance(value, list) and all(is_int(item) for item in value)

    need("realm_url", is_str, "a URL")
    need("realm_name", is_str, "a string", nullable=True)
    need("user_id", is_int, "an int")
    if payload.get("type") == "message":
        for key in ("sender_id", "message_id", "time"):
            need(key, is_int, "an int")
        for key in ("sender_avatar_url", "sender_full_name", "content"):
            need(key, is_str, "a string")
        if "channel_id" in payload:
            need("channel_id", is_int, "an int")
            need("channel_name", is_str, "a string", nullable=True)
            need("topic", is_str, "a string")
        else:
            need("recipient_user_ids", int_list, "a list of ints")
    elif payload.get("type") == "remove":
        need("message_ids", int_list, "a list of ints")
    return problems
