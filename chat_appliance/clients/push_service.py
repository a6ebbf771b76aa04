"""Zulip's Mobile Push Notification Service, spoken as a self-hosted Zulip server speaks it.

The mobile apps get their notifications through Zulip's service (the "push bouncer"): this server
registers itself there once (`chat-appliance register-push-service`), then forwards the apps'
device tokens to it and asks it to deliver notifications. Facts of the protocol, from Zulip's
server (zerver/lib/remote_server.py, zerver/lib/push_notifications.py, zilencer/views.py):

- every call goes to {ZULIP_SERVICES_URL}/api/v1/remotes/<endpoint>; all but server/register
  carry HTTP Basic auth, user = the server's zulip_org_id (a UUID), password = its zulip_org_key
  (64 characters);
- server/register, push/register and push/unregister take form fields; push/notify and
  push/test_notification take a JSON body;
- token kinds are integers: APNs 1, FCM 2;
- users are named by user_id and by user_uuid, their realm by realm_uuid;
- a network failure or a 5xx is worth retrying later; a 4xx carries Zulip's error envelope.

Nothing here knows Flask or the models' tables: callers pass what the payloads need.
"""

from __future__ import annotations

import hashlib
import html.parser
import json
import re
import secrets
import string
import uuid
from base64 import b64encode
from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import urlencode, urljoin

from chat_appliance.clients import safe_fetch
from chat_appliance.lib.errors import PushServiceRefusedError, PushServiceRetryLaterError
# Whether push is configured: lib/push_credentials.py, with the stored credentials, so that the
# views that ask it (server_settings, register) need not load this module.
from chat_appliance.lib.push_credentials import configured

# Zulip's token kinds, as the service numbers them.
TOKEN_KINDS = {"apns": 1, "fcm": 2}
# Zulip's RemoteZulipServer: a UUID id and a 64-character key.
ORG_KEY_LENGTH = 64
# Zulip cuts a notification's text after this many characters (and adds "…").
MAX_CONTENT_LENGTH = 200


@dataclass(frozen=True)
class PushService:
    """Where the service is and how this server authenticates to it."""

    url: str
    org_id: str
    org_key: str
    timeout: float = 30.0

    def endpoint_url(self, endpoint: str) -> str:
        return urljoin(self.url, "/api/v1/remotes/" + endpoint)


def service_from_config(config: Mapping[str, Any]) -> PushService | None:
    """The configured service, or None: push needs a URL and this server's org id and key (from
    the configuration, else from the instance's credentials file)."""
    found = configured(config)
    if found is None:
        return None
    url, org_id, org_key = found
    return PushService(url=url, org_id=org_id, org_key=org_key,
                       timeout=float(config.get("PUSH_NOTIFICATION_TIMEOUT_SECONDS", 30)))


def new_org_credentials() -> tuple[str, str]:
    """A fresh zulip_org_id (UUID4) and zulip_org_key (64 letters and digits), as Zulip's
    installer makes them."""
    alphabet = string.ascii_letters + string.digits
    return str(uuid.uuid4()), "".join(secrets.choice(alphabet) for _ in range(ORG_KEY_LENGTH))


def masked(secret: str) -> str:
    """A secret as it may be printed: its first four characters."""
    return secret[:4] + "…" if secret else ""


def derived_uuid(org_id: str, kind: str, number: int) -> str:
    """A stable UUID (version 4 format) for a user or realm. Zulip keeps a random UUID column;
    this server has none, and the service needs the value stable for as long as the server's
    registration lasts, and distinct across servers: derived from the org id, which never
    changes (a rotated key keeps it) and is restored with the credentials."""
    digest = hashlib.sha256(f"{org_id}:{kind}:{number}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def send(service: PushService, method: str, endpoint: str, data: Mapping[str, Any] | None = None, *,
         json_body: bool = False, user_agent: str = "ZulipServer") -> dict[str, Any]:
    """One call to the service. Raises PushServiceRetryLaterError (no answer, a 5xx) or
    PushServiceRefusedError (a 4xx); returns the decoded answer of a 200."""
    headers = {"User-Agent": user_agent,
               "Authorization": "Basic " + b64encode(f"{service.org_id}:{service.org_key}".encode()).decode()}
    body = encode_body(data, json_body, headers)
    return request(service.endpoint_url(endpoint), method, body, headers, service.timeout)


def send_unauthenticated(url: str, endpoint: str, data: Mapping[str, Any], *, timeout: float = 30.0,
                         user_agent: str = "ZulipServer") -> dict[str, Any]:
    """server/register: form fields, no Basic auth (the key travels in the body)."""
    headers = {"User-Agent": user_agent}
    body = encode_body(data, False, headers)
    return request(urljoin(url, "/api/v1/remotes/" + endpoint), "POST", body, headers, timeout)


def encode_body(data: Mapping[str, Any] | None, json_body: bool, headers: dict[str, str]) -> bytes | None:
    if data is None:
        return None
    if json_body:
        headers["Content-Type"] = "application/json"
        return json.dumps(data).encode()
    headers["Content-Type"] = "application/x-www-form-urlencoded"
    return urlencode({k: v for k, v in data.items() if v is not None}).encode()


def request(url: str, method: str, body: bytes | None, headers: dict[str, str], timeout: float) -> dict[str, Any]:
    # Through the one fetch guard, without its address check: the service URL is the operator's
    # own setting (a test stand-in or a proxy may live on a private network). No redirects.
    try:
        response = safe_fetch.fetch(url, method=method, data=body, headers=headers, timeout=timeout,
                                    allow_private=True)
    except (OSError, ValueError) as error:
        raise PushServiceRetryLaterError(f"{type(error).__name__} while connecting to {url}") from None
    if response.status >= 500:
        raise PushServiceRetryLaterError(f"Received {response.status} from push notification service",
                                         server_error=True)
    try:
        answer = json.loads(response.body or b"{}")
    except ValueError:
        answer = None
    if response.status >= 400:
        if isinstance(answer, dict) and isinstance(answer.get("msg"), str):
            raise PushServiceRefusedError(answer["msg"], answer.get("code"))
        raise PushServiceRefusedError(f"Push notification service answered {response.status}")
    if response.status != 200 or not isinstance(answer, dict):
        raise PushServiceRetryLaterError(f"Unexpected answer {response.status} from push notification service")
    return answer


# ---- Notification payloads, in the shapes Zulip's server sends. ----

VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class _Node:
    """An element of rendered HTML: enough of a DOM for the notification text."""

    tag: str
    attrs: dict[str, str]
    children: list[_Node]
    text: str = ""
    tail: str = ""

    @property
    def classes(self) -> str:
        return self.attrs.get("class") or ""

    def text_content(self) -> str:
        return self.text + "".join(child.text_content() + child.tail for child in self.children)


class _TreeBuilder(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = _Node("div", {}, [])
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = _Node(tag, {k: v or "" for k, v in attrs}, [])
        self.stack[-1].children.append(node)
        if tag not in VOID_TAGS:
            self.stack.append(node)

    def handle_endtag(self, tag):
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data):
        parent = self.stack[-1]
        if parent.children:
            parent.children[-1].tail += data
        else:
            parent.text += data


def _is_message_link(href: str) -> bool:
    return "#narrow/" in href and "/near/" in href


def _is_user_said_paragraph(node: _Node) -> bool:
    """A quote's header, "@person [said](link):": one mention, one message link, a colon."""
    def walk(n):
        yield n
        for child in n.children:
            yield from walk(child)
    mentions = [n for n in walk(node) if "user-mention" in n.classes.split()]
    links = [n for n in walk(node) if n.tag == "a" and _is_message_link(n.attrs.get("href", ""))]
    if len(mentions) != 1 or len(links) != 1:
        return False
    rest = node.text_content().replace(mentions[0].text_content(), "").replace(links[0].text_content(), "")
    return rest.strip() == ":"


def _collapse_quotes(root: _Node) -> None:
    """Zulip's rule: when a message mixes quotes (and their "said" lines) with its own text, each
    run of quoted parts becomes "[…]"."""
    quoted = [child.tag == "blockquote" or _is_user_said_paragraph(child) for child in root.children]
    if all(quoted) or not any(quoted):
        return
    kept: list[_Node] = []
    for index, child in enumerate(root.children):
        if not quoted[index]:
            kept.append(child)
        elif index == 0 or not quoted[index - 1]:
            kept.append(_Node("p", {}, [], text="[…]", tail=child.tail))
        elif kept:
            kept[-1].tail = child.tail
    root.children = kept


def _tex_to_source(node: _Node) -> None:
    """KaTeX output becomes its TeX source between $$ (Zulip's change_katex_to_raw_latex)."""
    for index, child in enumerate(node.children):
        if "katex" in child.classes.split():
            annotation = next((n for n in _descendants(child) if n.tag == "annotation"), None)
            source = annotation.text_content() if annotation else child.text_content()
            node.children[index] = _Node("span", {}, [], text=f"$${source}$$", tail=child.tail)
        else:
            _tex_to_source(child)


def _descendants(node: _Node):
    for child in node.children:
        yield child
        yield from _descendants(child)


def _own_text(node: _Node) -> str:
    match = re.search(r"emoji-(\S+)", node.classes) if "emoji" in node.classes else None
    if match:
        try:
            return "".join(chr(int(part, 16)) for part in match.group(1).split("-"))
        except ValueError:
            pass
    if node.tag == "img":
        return node.attrs.get("alt", "")
    if node.tag == "blockquote":
        return ""
    return node.text


def _plain(node: _Node, ol_depth: int = 0) -> str:
    if node.tag == "ol":
        counter = int(node.attrs["start"]) if node.attrs.get("start", "").isdigit() else 1
        indent = ("\n" + "  " * ol_depth) if ol_depth else ""
        items = []
        for item in node.children:
            items.append(indent + str(counter) + ". " + _plain(item, ol_depth + 1).strip())
            counter += 1
        return "\n".join(items)
    if "spoiler-block" in node.classes:
        header = next((n for n in _descendants(node) if "spoiler-header" in n.classes), None)
        text = _plain(header, ol_depth).strip() if header else ""
        return f"{text} (…)\n" if text else "(…)\n"
    inner = "".join(_plain(child, ol_depth) for child in node.children)
    if node.tag == "blockquote":
        inner = "".join(f"> {line}\n" for line in inner.splitlines() if line)
    return _own_text(node) + inner + node.tail


def mobile_push_content(rendered: str) -> str:
    """The notification text of a rendered message, as Zulip derives it: the text of the HTML,
    emoji as their characters, images as their alt text, quotes prefixed "> " (and collapsed to
    "[…]" beside the message's own text), ordered lists numbered, a spoiler as its header and
    "(…)", TeX as its source between $$."""
    builder = _TreeBuilder()
    builder.feed(rendered or "")
    builder.close()
    root = builder.root
    _tex_to_source(root)
    _collapse_quotes(root)
    return _plain(root)


def truncate_content(content: str) -> tuple[str, bool]:
    """At most MAX_CONTENT_LENGTH characters, then "…"; and whether it was cut."""
    if len(content) <= MAX_CONTENT_LENGTH:
        return content, False
    return content[:MAX_CONTENT_LENGTH] + "…", True


@dataclass
class Recipient:
    """The person a notification is for, and their organization."""

    user_id: int
    user_uuid: str
    realm_id: int
    realm_uuid: str
    realm_url: str
    realm_name: str
    server: str  # the host name of the server (Zulip's EXTERNAL_HOST)


@dataclass
class PushMessage:
    """What a notification tells about a message."""

    id: int
    sender_id: int
    sender_email: str
    sender_full_name: str
    sender_avatar_url: str
    date_sent: int
    rendered_content: str
    stream_id: int | None = None
    stream_name: str = ""
    topic: str = ""
    # A group DM's participants (everyone, sorted); empty for a one-to-one DM.
    group_user_ids: tuple[int, ...] = ()
    group_full_names: tuple[str, ...] = ()


def base_payload(recipient: Recipient) -> dict[str, Any]:
    """What every notification carries about whom it is for."""
    return {"server": recipient.server, "realm_id": recipient.realm_id, "realm_uri": recipient.realm_url,
            "realm_url": recipient.realm_url, "realm_name": recipient.realm_name, "user_id": recipient.user_id}


def message_payload(recipient: Recipient, message: PushMessage, mentioned_group: tuple[int, str] | None) -> dict[str, Any]:
    """The part of a message notification common to FCM and APNs."""
    data = base_payload(recipient)
    data.update(sender_id=message.sender_id, sender_email=message.sender_email, time=message.date_sent)
    if mentioned_group is not None:
        data.update(mentioned_user_group_id=mentioned_group[0], mentioned_user_group_name=mentioned_group[1])
    if message.stream_id is not None:
        data.update(recipient_type="stream", stream=message.stream_name, stream_id=message.stream_id,
                    topic=message.topic)
    else:
        data["recipient_type"] = "private"
        if message.group_user_ids:
            data["pm_users"] = ",".join(str(i) for i in message.group_user_ids)
    return data


def gcm_message_payload(recipient: Recipient, message: PushMessage,
                        mentioned_group: tuple[int, str] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """FCM data and options for a new message (Zulip's event "message", priority high)."""
    content, truncated = truncate_content(mobile_push_content(message.rendered_content))
    data = message_payload(recipient, message, mentioned_group)
    data.update(event="message", zulip_message_id=message.id, content=content, content_truncated=truncated,
                sender_full_name=message.sender_full_name, sender_avatar_url=message.sender_avatar_url)
    return data, {"priority": "high"}


def apns_title(message: PushMessage) -> str:
    if message.group_user_ids:
        return ", ".join(sorted(message.group_full_names))
    if message.stream_id is not None:
        return f"#{message.stream_name} > {message.topic}"
    return message.sender_full_name


def apns_subtitle(message: PushMessage, trigger: str, mentioned_group: tuple[int, str] | None) -> str:
    name = message.sender_full_name
    if trigger == "mention":
        return f"{name} mentioned @{mentioned_group[1]}:" if mentioned_group else f"{name} mentioned you:"
    if trigger in ("wildcard_mention", "followed_topic_wildcard_mention"):
        return f"{name} mentioned everyone:"
    if message.stream_id is None and not message.group_user_ids:
        return ""
    return name + ":"


def apns_message_payload(recipient: Recipient, message: PushMessage, trigger: str,
                         mentioned_group: tuple[int, str] | None = None) -> dict[str, Any]:
    """The APNs payload for a new message: an alert (title, subtitle, body), the default sound,
    a badge (Zulip sends 0) and Zulip's data under custom.zulip."""
    content, _truncated = truncate_content(mobile_push_content(message.rendered_content))
    data = message_payload(recipient, message, mentioned_group)
    data["message_ids"] = [message.id]
    return {"alert": {"title": apns_title(message), "subtitle": apns_subtitle(message, trigger, mentioned_group),
                      "body": content},
            "sound": "default", "badge": 0, "custom": {"zulip": data}}


def gcm_remove_payload(recipient: Recipient, message_ids: list[int]) -> tuple[dict[str, Any], dict[str, Any]]:
    """FCM data and options taking notifications of read messages away (priority normal)."""
    data = base_payload(recipient)
    data.update(event="remove", zulip_message_ids=",".join(str(i) for i in message_ids),
                zulip_message_id=message_ids[0])
    return data, {"priority": "normal"}


def apns_remove_payload(recipient: Recipient, message_ids: list[int]) -> dict[str, Any]:
    data = base_payload(recipient)
    data.update(event="remove", zulip_message_ids=",".join(str(i) for i in message_ids))
    return {"badge": 0, "custom": {"zulip": data}}


def notify_body(recipient: Recipient, gcm: tuple[dict[str, Any], dict[str, Any]], apns: dict[str, Any],
                android_tokens: list[str], apple_tokens: list[str]) -> dict[str, Any]:
    """The JSON body of push/notify."""
    return {"user_uuid": recipient.user_uuid, "user_id": recipient.user_id, "realm_uuid": recipient.realm_uuid,
            "gcm_payload": gcm[0], "gcm_options": gcm[1], "apns_payload": apns,
            "android_devices": android_tokens, "apple_devices": apple_tokens}


# ---- Server data (server/analytics), from which the service decides whether a server may push ----

# Zulip's audit-log event type for a change of role, and the extra_data keys of role counts.
USER_ROLE_CHANGED = 105
ROLE_COUNT, ROLE_COUNT_HUMANS, ROLE_COUNT_BOTS = "10", "11", "12"


@dataclass
class RealmSummary:
    """What the service is told about an organization."""

    id: int
    host: str
    url: str
    name: str
    date_created: int
    humans_by_role: dict[int, int]
    bots: int


def realm_info(service: PushService, realm: RealmSummary) -> dict[str, Any]:
    """One entry of server/analytics' `realms` (Zulip's RealmDataForAnalytics)."""
    realm_uuid = derived_uuid(service.org_id, "realm", realm.id)
    owner_secret = hashlib.sha256(f"{service.org_key}:{realm_uuid}".encode()).hexdigest()
    return {"id": realm.id, "host": realm.host, "url": realm.url, "name": realm.name, "org_type": 0,
            "date_created": float(realm.date_created), "deactivated": False, "is_system_bot_realm": False,
            "authentication_methods": {"Email": True}, "uuid": realm_uuid,
            "uuid_owner_secret": "zuliprealm_" + owner_secret[:32]}


def role_count_row(row_id: int, realm: RealmSummary, when: float) -> dict[str, Any]:
    """An audit-log row carrying the organization's current role counts, which is what the
    service counts users from (this server keeps no audit log: each sync sends a snapshot)."""
    counts = {ROLE_COUNT: {ROLE_COUNT_HUMANS: {str(role): n for role, n in sorted(realm.humans_by_role.items())},
                           ROLE_COUNT_BOTS: realm.bots}}
    return {"id": row_id, "realm": realm.id, "event_time": when, "backfilled": False,
            "extra_data": json.dumps(counts), "event_type": USER_ROLE_CHANGED}


def analytics_request(service: PushService, realms: list[RealmSummary], row_id: int, when: float,
                      version: str, feature_level: int) -> dict[str, str]:
    """The form fields of server/analytics (each a JSON document, as Zulip sends them): no usage
    counts, the organizations, and one role-count row per organization."""
    rows = [role_count_row(row_id + index, realm, when) for index, realm in enumerate(realms)]
    return {"realm_counts": "[]", "installation_counts": "[]", "realmauditlog_rows": json.dumps(rows),
            "realms": json.dumps([realm_info(service, realm) for realm in realms]),
            "version": json.dumps(version), "merge_base": json.dumps(version),
            "api_feature_level": json.dumps(feature_level)}
