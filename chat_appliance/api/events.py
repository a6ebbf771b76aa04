"""Event queues: POST /register, GET /events (long poll), DELETE /events."""

from flask import Blueprint, current_app

from chat_appliance.db.connection import close_connection
from chat_appliance.events.state import fetch_initial_state
from chat_appliance.web.auth import authenticate_basic, cached_basic_user
from chat_appliance.lib.errors import JsonableError, UnauthorizedError
from chat_appliance.lib.messages import max_message_id
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import (
    ParamError,
    check_bool,
    check_dict,
    check_int,
    check_json_list,
    check_string,
    is_id_string,
    list_of,
)
from chat_appliance.api.channels import parse_include_subscribers
from chat_appliance.web.context import limits, queue_manager
from chat_appliance.api.server import ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION

bp = Blueprint("events", __name__)

# Capabilities a client may declare; anything else it sends is kept but has no effect.
KNOWN_CAPABILITIES = ("notification_settings_null", "bulk_message_deletion", "user_avatar_url_field_optional",
                      "stream_typing_notifications", "user_settings_object", "linkifier_url_template",
                      "user_list_incomplete", "include_deactivated_groups", "archived_channels", "empty_topic_name")


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
)
def register(user, event_types, fetch_event_types, narrow, apply_markdown, client_gravatar, include_subscribers,
             all_public_streams, client_capabilities, slim_presence):
    """A new event queue for the requester, and the state it starts from."""
    if all_public_streams and user.is_guest:
        raise JsonableError("User not authorized for this query")
    capabilities = {name: bool((client_capabilities or {}).get(name, False)) for name in KNOWN_CAPABILITIES}
    options = {"client_gravatar": client_gravatar, "include_subscribers": include_subscribers,
               "client_capabilities": capabilities, "slim_presence": slim_presence, "limits": limits()}
    # The queue exists before the state is read, so no change falls between the two (at worst
    # the client sees one change twice, which Zulip's clients tolerate).
    queue = queue_manager().register(user_id=user.id, realm_id=user.realm_id, user_email=user.email,
                             event_types=event_types, narrow=narrow, apply_markdown=apply_markdown,
                             client_gravatar=client_gravatar, all_public_streams=all_public_streams,
                             client_capabilities=capabilities)
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
# `serve` answers these on its event loop (chat_appliance/server/asgi.py), without a thread per waiting
# poll; the Flask views below answer them under any other WSGI server and in the test client.
# Both use the parameter specs and the authentication function defined here.

GET_EVENTS_PARAMS = {"queue_id": Param(), "last_event_id": Param(check_int, default=None),
                     "dont_block": Param(check_bool, default=False)}
DELETE_EVENTS_PARAMS = {"queue_id": Param()}


def unauthenticated_session(headers):
    """The /json/events authenticator until session cookies exist: every request is anonymous."""
    raise UnauthorizedError()


# Called with the request's headers (lower-case names: "cookie", ...) for /json/events; returns
# the user (anything with id, realm_id and email) or raises the Zulip error. The web client's
# session support replaces it with set_session_authenticator.
_session_authenticator = unauthenticated_session


def set_session_authenticator(authenticator):
    """Install the session-cookie check used by /json/events (a callable(headers) -> user)."""
    global _session_authenticator
    _session_authenticator = authenticator


def authenticate_events(headers, *, session=False):
    """The user of an events request from its headers (a dict with lower-case names): HTTP
    Basic with the API key for /api/v1 (checked against the credential cache first), the
    session for /json (session=True). Raises the Zulip 401 errors. May query the database on a
    cache miss: the event loop calls it in the worker pool unless cached_events_user answered."""
    if session:
        return _session_authenticator(headers)
    return authenticate_basic(headers.get("authorization"))


def cached_events_user(headers, *, session=False):
    """authenticate_events' answer when it needs no database (Basic credentials in the cache), else None."""
    if session:
        return None
    return cached_basic_user(headers.get("authorization"))


@bp.get("/events")
@endpoint(auth="cached", rate_limit="report", **GET_EVENTS_PARAMS)
def get_events(user, queue_id, last_event_id, dont_block):
    """Events newer than last_event_id; waits for one (or a heartbeat) unless dont_block."""
    queue = queue_manager().access(queue_id, user.id)
    if queue_manager().loop is not None:
        # Under `serve` only what the loop does not answer natively reaches this view (HEAD);
        # it must not park a worker thread.
        dont_block = True
    heartbeat = current_app.config["EVENT_HEARTBEAT_SECONDS"]
    # A waiting request must hold no database connection (SQLite's and PostgreSQL's are scarce).
    close_connection()
    events = queue.get(last_event_id, dont_block=dont_block, heartbeat_seconds=heartbeat)
    return {"events": events, "queue_id": queue_id}


@bp.delete("/events")
@endpoint(auth="cached", **DELETE_EVENTS_PARAMS)
def delete_queue(user, queue_id):
    """Remove one of the requester's queues."""
    queue_manager().access(queue_id, user.id)
    queue_manager().delete(queue_id)
