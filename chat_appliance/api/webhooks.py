"""Incoming webhooks: POST /api/v1/external/{integration}?api_key=KEY&stream=NAME&topic=TOPIC.

Third-party services cannot send HTTP Basic credentials, so the key travels in the query
string (Basic auth works too). The body is read as the service's JSON whatever its
Content-Type says (some label JSON as form data); a form with a JSON `payload` field, as
Slack-style senders post, works too. Everything an integration does not decide is decided here,
once for all of them: the topic= override, only_events=/exclude_events=, the answers to
unsupported events and unreadable payloads, and where the message goes."""

from __future__ import annotations

from urllib.parse import unquote

from flask import Blueprint, jsonify, request

from chat_appliance.actions.webhooks import (
    do_send_webhook_direct_message,
    do_send_webhook_message,
    full_name_for_email,
    guess_user,
    user_for_webhook_key,
)
from chat_appliance.integrations import registry
from chat_appliance.integrations.base import (
    AnomalousPayload,
    DirectMessage,
    Integration,
    InvalidPayload,
    MissingEventHeader,
    UnsupportedEvent,
    WebhookRequest,
    matches_any,
)
from chat_appliance.web.auth import authenticate_request
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.json_input import JsonInputError, parse_json
from chat_appliance.web.rate_limit import check_api_request
from chat_appliance.web.response import json_success
from chat_appliance.web.context import limits

bp = Blueprint("webhooks", __name__)

# The largest body an integration reads. Real payloads are a few hundred kilobytes at most (a
# GitHub push of many commits); anything larger is not a service's event.
MAX_PAYLOAD_BYTES = 2 * 1024 * 1024

# What a formatter's reading of a payload raises when the payload is not of the shape the
# integration knows (a missing key, a value of another kind): the service's error, not ours.
PAYLOAD_SHAPE_ERRORS = (KeyError, IndexError, TypeError, AttributeError, ValueError)


def read_body():
    """Read the body once, bounded, before anything parses a form: the form is then parsed from
    the kept bytes, and a JSON body labelled as a form is still there to read."""
    if request.content_length is not None and request.content_length > MAX_PAYLOAD_BYTES:
        raise JsonableError("Request body too large", http_status=413)
    if len(request.get_data(cache=True)) > MAX_PAYLOAD_BYTES:
        raise JsonableError("Request body too large", http_status=413)


def webhook_payload(integration: Integration):
    """The JSON of the request's body, or of a form's `payload` field; the request's parameters
    for an integration that reads a form (any JSON it was sent is still held to the depth limit,
    as everywhere JSON is read)."""
    raw = request.get_data(cache=True)
    if request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data") and "payload" in request.form:
        raw = request.form["payload"].encode()
    payload = {}
    if raw.strip():
        try:
            payload = parse_json(raw)
        except JsonInputError as error:
            if "deeply" in str(error):
                raise JsonableError("Malformed JSON: nested too deeply") from None
            if not integration.form_parameters:
                raise JsonableError("Malformed JSON") from None
    return request.values.to_dict() if integration.form_parameters else payload


def json_list_param(name):
    """only_events / exclude_events: a JSON list of strings, or None when absent."""
    raw = request.values.get(name)
    if raw is None:
        return None
    try:
        value = parse_json(raw)
    except JsonInputError:
        raise JsonableError(f'Argument "{name}" is not valid JSON.') from None
    if not isinstance(value, list):
        raise JsonableError(f"{name} is not a list")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise JsonableError(f"{name}[{index}] is not a string")
    return value


def wanted(event, only_events, exclude_events):
    """Zulip's generic filter on the integration's event names, with shell-style wildcards."""
    if only_events is not None and not matches_any(event, only_events):
        return False
    return not (exclude_events is not None and matches_any(event, exclude_events))


def webhook_user():
    """The account of the key in the URL, else of HTTP Basic credentials (which, here alone,
    may be an incoming webhook bot's)."""
    api_key = request.values.get("api_key")
    try:
        return user_for_webhook_key(api_key) if api_key is not None else authenticate_request(allow_webhook_access=True)
    except JsonableError:
        check_api_request(None)  # failed credentials count against the address
        raise


def format_event(integration: Integration, hook: WebhookRequest):
    """(event, [(topic, content), ...]) for this request, or None when it posts nothing (a
    formatter returns one pair, or a list of them when one request tells several things, as a
    Bitbucket push to several branches does). The integration's own errors carry its display
    name; a payload it cannot read is an AnomalousPayload."""
    try:
        event = integration.event_of(hook)
        if event is None:
            return None
        formatter = integration.formatter_for(event)
        if formatter is None:
            raise UnsupportedEvent(event)
        hook.event = event
        formatted = formatter(hook)
    except (UnsupportedEvent, AnomalousPayload, MissingEventHeader, InvalidPayload) as error:
        error.integration = integration.display_name
        raise
    except PAYLOAD_SHAPE_ERRORS:
        raise AnomalousPayload(integration.display_name) from None
    if not formatted:
        return None
    return event, formatted if isinstance(formatted, list) else [formatted]


@bp.route("/external/<integration>", methods=["HEAD"])
def check_webhook_url(integration):
    """Some services (Trello) check that the URL answers a HEAD request before they post to it;
    like Zulip, answer success without credentials for those integrations only."""
    found = registry().get(integration)
    if found is None:
        raise JsonableError("Not Found", code="NOT_FOUND", http_status=404)
    if not found.answers_head_requests:
        raise JsonableError("Method Not Allowed", http_status=405)
    return json_success()


@bp.post("/external/<integration>")
def incoming_webhook(integration):
    """Format the service's request with the integration and send it as the calling bot."""
    found = registry().get(integration)
    if found is None:
        raise JsonableError("Not Found", code="NOT_FOUND", http_status=404)
    read_body()
    user = webhook_user()
    check_api_request(user)
    if not found.slack_compatible:
        return handle_webhook(found, user)
    # Scripts written for Slack read {"ok": ...}, as Zulip's slack_incoming answers them.
    try:
        handle_webhook(found, user)
    except JsonableError as error:
        response = jsonify({"ok": False, "error": error.msg})
        response.status_code = error.http_status
        return response
    return json_success({"ok": True})


def handle_webhook(found: Integration, user):
    """Read, format, filter and send; the success answer."""
    payload = webhook_payload(found)
    only_events, exclude_events = json_list_param("only_events"), json_list_param("exclude_events")
    # Like Zulip's REQ, the common parameters may come in the query string or a form body.
    stream, user_topic = request.values.get("stream"), request.values.get("topic")
    if found.unquote_url_parameters:
        # Jira and Bitbucket double-escape the URL they were given, so %20 arrives as %2520.
        stream = unquote(stream) if stream is not None else None
        user_topic = unquote(user_topic) if user_topic is not None else None
    hook = WebhookRequest(payload=payload, headers=request.headers, params=request.args,
                          topic_given=user_topic is not None,
                          full_name_for_email=lambda email: full_name_for_email(user.realm_id, email),
                          guess_user=lambda name: guess_user(user.realm_id, name))
    try:
        formatted = format_event(found, hook)
    except UnsupportedEvent as error:
        return json_success({"msg": error.message()})
    except MissingEventHeader as error:
        raise JsonableError(error.message(), code="MISSING_HTTP_EVENT_HEADER", header=error.header) from None
    except InvalidPayload as error:
        raise JsonableError(error.message(), code=error.code, **error.data) from None
    except AnomalousPayload as error:
        raise JsonableError(error.message(), code="ANOMALOUS_WEBHOOK_PAYLOAD", webhook_name=error.integration) from None
    if formatted is None:
        return json_success()
    event, messages = formatted
    if not wanted(event, only_events, exclude_events):
        return json_success()
    configured = limits()
    client_name = f"Zulip{found.display_name.replace(' ', '')}Webhook"
    for message in messages:
        if isinstance(message, DirectMessage):
            do_send_webhook_direct_message(user, user_id=message.user_id, content=message.content,
                                           client_name=client_name, limits=configured)
            continue
        topic, content = message
        if user_topic is not None:
            topic = user_topic
        if len(topic) > configured.max_topic_length:  # Zulip's truncate_topic
            topic = topic[: configured.max_topic_length - 3] + "..."
        do_send_webhook_message(user, stream=stream, topic=topic, content=content, client_name=client_name,
                                limits=configured)
    return json_success()
