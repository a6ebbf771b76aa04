"""Event queues: POST /register, GET /events (long poll), DELETE /events."""

from flask import Blueprint, current_app, jsonify, request

from chat_appliance.db.connection import close_connection
from chat_appliance.events.state import fetch_initial_state
from chat_appliance.web.auth import authenticate_request_cached, is_session_request
from chat_appliance.lib.errors import JsonableError, ParamError
from chat_appliance.lib.messages import max_message_id
from chat_appliance.lib.push_credentials import configured as push_configured
from chat_appliance.web.params import Param, endpoint, request_values
from chat_appliance.lib.validators import (check_bool, check_dict, check_json_list, check_string, int_range, is_id_string,
                                          list_of)
from chat_appliance.api.channels import parse_include_subscribers
from chat_appliance.web.context import app_state, auth_settings, limits, queue_manager
from chat_appliance.web.longpoll import DELETE_EVENTS_PARAMS, GET_EVENTS_PARAMS, EventsBody, Poll
from chat_appliance.web.rate_limit import client_ip
from chat_appliance.api.server import ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION

bp = Blueprint("events", __name__)

# Capabilities a client may declare; anything else it sends is kept but has no effect.
KNOWN_CAPABILITIES = ("notification_settings_null", "bulk_message_deletion", "user_avatar_url_field_optional",
                      "stream_typing_notifications", "user_settings_object", "linkifier_url_template",
                      "user_list_incomplete", "include_deactivated_groups", "archived_channels", "empty_topic_name",
                      "individual_emoji_changes")

# idle_queue_timeout: how long a queue nobody polls is kept. "mobile" is the app's choice: a phone
# in the background stops polling (push notifications cover that time), and 12 hours lets it
# resume overnight without a new /register. A number is clamped to [MIN, MAX]: below a minute a
# queue would expire between two polls, and a week bounds what an abandoned queue holds.
MOBILE_IDLE_QUEUE_SECONDS = 12 * 60 * 60
MIN_IDLE_QUEUE_SECONDS = 60
MAX_IDLE_QUEUE_SECONDS = 7 * 24 * 60 * 60


def check_idle_queue_timeout(var_name, value):
    """Seconds a queue may stay idle: a positive integer, or "mobile", each bare or JSON-encoded.
    The mobile app JSON-encodes every parameter, strings included, so it sends `"mobile"` with
    the quotes; scripts send the bare word or digits."""
    text = str(value).strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    if text == "mobile":
        return MOBILE_IDLE_QUEUE_SECONDS
    if not (text.isascii() and text.isdigit()) or not text.strip("0"):
        raise ParamError(f"Invalid {var_name}")
    if len(text) > 12:  # far beyond the maximum (and int() of thousands of digits is refused)
        return MAX_IDLE_QUEUE_SECONDS
    return min(max(int(text), MIN_IDLE_QUEUE_SECONDS), MAX_IDLE_QUEUE_SECONDS)


def check_legacy_narrow(var_name, value):
    """[[operator, operand], ...] as zulip-terminal and print-events send it; the
    {"operator", "operand"} form is accepted too."""
    value = check_json_list(var_name, value)
    pairs = []
    for index, item in enumerate(value):
        if isinstance(item, dict) and "operator" in item and "operand" in item:
            item = [item["operator"], item["operand"]]
        if not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], str):
            raise ParamError(f"{var_name}[{index}] is not a list of two strings")
        pairs.append((item[0], check_queue_narrow_operand(f"{var_name}[{index}]", item[0], item[1])))
    return pairs


def check_queue_narrow_operand(var_name, operator, operand):
    """Refuse at /register what the queue's filter could not evaluate: it runs for every message
    sent, so a bad operand must never reach it. Ids are 64-bit integers or ASCII digits (not "²")."""
    if isinstance(operand, bool) or not isinstance(operand, (str, int, list)):
        raise ParamError(f"{var_name} has an invalid operand")
    if isinstance(operand, str) and operand.isdigit() and not is_id_string(operand):
        raise ParamError(f"{var_name} has an invalid operand")
    if isinstance(operand, list):
        if operator not in ("dm", "pm-with", "pm_with") or not all(
                isinstance(x, int) and not isinstance(x, bool) for x in operand):
            raise ParamError(f"{var_name} has an invalid operand")
    return operand


@bp.post("/register")
@endpoint(
    event_types=Param(list_of(check_string), default=None),
    fetch_event_types=Param(list_of(check_string), default=None),
    narrow=Param(check_legacy_narrow, default=()),
    # False here, unlike GET /messages (Zulip's events_register_backend).
    apply_markdown=Param(check_bool, default=False),
    client_gravatar=Param(check_bool, default=True),
    include_subscribers=Param(parse_include_subscribers, default="false"),
    all_public_streams=Param(check_bool, default=False),
    client_capabilities=Param(check_dict, default=None),
    slim_presence=Param(check_bool, default=False),
    # How far back `presences` reaches (Zulip feature level 288; two weeks unless asked).
    presence_history_limit_days=Param(int_range(low=0), default=None),
    idle_queue_timeout=Param(check_idle_queue_timeout, default=None),
)
def register(user, event_types, fetch_event_types, narrow, apply_markdown, client_gravatar, include_subscribers,
             all_public_streams, client_capabilities, slim_presence, presence_history_limit_days, idle_queue_timeout):
    """A new event queue for the requester, and the state it starts from."""
    if all_public_streams and user.is_guest:
        raise JsonableError("User not authorized for this query")
    capabilities = {name: bool((client_capabilities or {}).get(name, False)) for name in KNOWN_CAPABILITIES}
    options = {"client_gravatar": client_gravatar, "include_subscribers": include_subscribers,
               "client_capabilities": capabilities, "slim_presence": slim_presence, "limits": limits(),
               "presence_history_limit_days": presence_history_limit_days,
               # URLs in the state are absolute, on the address the client reached (Zulip's are
               # on the realm's URL).
               "base_url": request.host_url.rstrip("/"),
               "longpoll_timeout_seconds": int(queue_manager().heartbeat_seconds),
               "push_notifications_enabled": push_configured(current_app.config) is not None,
               "auth": auth_settings()}
    # The queue exists before the state is read, so no change falls between the two (at worst
    # the client sees one change twice, which Zulip's clients tolerate).
    queue = queue_manager().register(user_id=user.id, realm_id=user.realm_id, user_email=user.email,
                             event_types=event_types, narrow=narrow, apply_markdown=apply_markdown,
                             client_gravatar=client_gravatar, all_public_streams=all_public_streams,
                             client_capabilities=capabilities, idle_timeout=idle_queue_timeout)
    state = fetch_initial_state(user, fetch_event_types if fetch_event_types is not None else event_types, options)
    return {
        "queue_id": queue.id,
        "last_event_id": -1,
        "zulip_version": ZULIP_VERSION,
        "zulip_feature_level": ZULIP_FEATURE_LEVEL,
        "zulip_merge_base": ZULIP_MERGE_BASE,
        "max_message_id": max_message_id(user),
        **state,
    }


# --- GET/DELETE /events ----------------------------------------------------------------------
# `serve` answers these on its event loop (chat_appliance/server/asgi.py), without a thread per
# waiting poll; the views below answer them under any other WSGI server and in the test client.
# Both hand the request to the same handler (web/longpoll.py) once it is authenticated.


@bp.get("/events")
def get_events():
    """Events newer than last_event_id; waits for one (or a heartbeat) unless dont_block."""
    return events_response("GET")


@bp.delete("/events")
def delete_queue():
    """Remove one of the requester's queues."""
    return events_response("DELETE")


# The parameters the handler parses (tests/security/test_hostile_input.py feeds every declared parameter).
# (Function attributes, which mypy does not know of on a decorated view.)
get_events.param_specs = GET_EVENTS_PARAMS  # type: ignore[attr-defined]
delete_queue.param_specs = DELETE_EVENTS_PARAMS  # type: ignore[attr-defined]


def events_response(method):
    """This request's answer from the app's long-poll handler, as a Flask response."""
    handler = app_state().longpoll
    session = is_session_request()
    try:
        user = authenticate_request_cached()
    except JsonableError as error:
        answer = handler.refused(error, client_ip=client_ip(), session=session)
    else:
        answer = handler.start(method, user, request_values(), session=session)
        if isinstance(answer, Poll):
            # A waiting request must hold no database connection (SQLite's and PostgreSQL's are scarce).
            close_connection()
            # Under `serve` only what the loop does not answer natively reaches this view (HEAD);
            # it must not park a worker thread.
            answer = answer.wait(block=queue_manager().loop is None)
    body = answer.body.to_dict() if isinstance(answer.body, EventsBody) else answer.body
    response = jsonify(body)
    response.status_code = answer.status
    for name, value in answer.headers:
        response.headers[name] = value
    return response
