"""Incoming webhooks: POST /api/v1/external/{integration}?api_key=KEY&stream=NAME&topic=TOPIC.

Third-party services cannot send HTTP Basic credentials, so the key travels in the query
string (Basic auth works too). The body is the service's own JSON (or a form with a JSON
`payload` field, as Slack-style senders post)."""

from flask import Blueprint, request

from chat_appliance.actions.webhooks import do_send_webhook_message, user_for_webhook_key
from chat_appliance.integrations import INTEGRATIONS, UnsupportedEvent
from chat_appliance.web.auth import authenticate_request
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.json_input import JsonInputError, parse_json
from chat_appliance.web.rate_limit import check_api_request
from chat_appliance.web.response import json_success
from chat_appliance.web.context import limits

bp = Blueprint("webhooks", __name__)


def webhook_payload():
    """The request's JSON body, or the JSON of a form's `payload` field."""
    raw = request.form.get("payload") if request.form else request.get_data(as_text=True)
    if not raw:
        return {}
    try:
        return parse_json(raw)
    except JsonInputError as error:
        raise JsonableError("Malformed JSON" if "deeply" not in str(error) else "Malformed JSON: nested too deeply") from None


@bp.post("/external/<integration>")
def incoming_webhook(integration):
    """Format the service's request with the integration and send it as the calling bot."""
    module = INTEGRATIONS.get(integration)
    if module is None:
        raise JsonableError("Not Found", code="NOT_FOUND", http_status=404)
    api_key = request.args.get("api_key") or request.form.get("api_key")
    try:
        user = user_for_webhook_key(api_key) if api_key else authenticate_request()
    except JsonableError:
        check_api_request(None)  # failed credentials count against the address
        raise
    check_api_request(user)
    payload = webhook_payload()
    try:
        topic, content = module.format_message(payload, request.headers)
    except UnsupportedEvent as error:
        raise JsonableError(str(error), code="UNSUPPORTED_WEBHOOK_EVENT_TYPE") from None
    if content is None:
        return json_success()
    stream = request.args.get("stream")
    topic = request.args.get("topic") or topic or module.DEFAULT_TOPIC
    do_send_webhook_message(user, stream=stream, topic=topic[: limits().max_topic_length], content=content,
                            client_name=f"Zulip{module.__name__.rsplit('.', 1)[1].title().replace('_', '')}Webhook",
                            limits=limits())
    return json_success()
