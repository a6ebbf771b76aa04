"""Service bots at work: when a message mentions an outgoing webhook or embedded bot, or is a
direct message to one, the bot is called off the request path and its answer is posted back.

The dispatcher listens to committed message events (the same events the queues get), so a
message that rolled back never triggers a bot. Calls run on a small pool of worker threads,
each with its own database connection; an outgoing webhook gets a timeout and a bounded number
of attempts, and a failure is reported to the bot's owner by the Notification Bot.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import contextvars
import json
import logging
import re
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from importlib import import_module

from chat_appliance import __version__
from chat_appliance.config import Limits
from chat_appliance.clients import safe_fetch
from chat_appliance.lib.database_outage import log_failure
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.json_input import JsonInputError, parse_json
from chat_appliance.lib.system_bots import NOTIFICATION_BOT, system_bot
from chat_appliance.models import (BOT_EMBEDDED, BOT_OUTGOING_WEBHOOK, INTERFACE_SLACK, BotService, Message,
                                   UserProfile, database)
from chat_appliance.actions.bot_storage import do_remove_storage, do_update_storage, stored_items
from chat_appliance.actions.messages import check_send_message
from chat_appliance.actions.reactions import check_emoji, do_add_reaction
from chat_appliance.workers.base import WorkerContext

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict

log = logging.getLogger(__name__)

SERVICE_BOT_TYPES = (BOT_OUTGOING_WEBHOOK, BOT_EMBEDDED)
# A loud mention of a user in rendered HTML (silent mentions, `@_**name**`, trigger nothing).
MENTION_RE = re.compile(r'<span class="user-mention" data-user-id="(\d+)"')
# Waits between attempts at an unreachable webhook.
RETRY_DELAYS_SECONDS = (0.5, 2.0, 5.0)
USER_AGENT = f"ChatApplianceOutgoingWebhook/{__version__}"


class WebhookFailure(Exception):
    """The webhook answered, but not usefully: reported to the owner, not retried."""

    def __init__(self, summary, detail=""):
        super().__init__(summary)
        self.summary, self.detail = summary, detail


def bot_candidates(message: JSONDict) -> tuple[set[int], str]:
    """(ids of users who would be called if they are service bots, trigger): those loudly
    mentioned in a channel message, the other recipients of a direct message. No database."""
    if message["type"] == "stream":
        candidates, trigger = {int(i) for i in MENTION_RE.findall(message["content"])}, "mention"
    else:
        candidates, trigger = {r["id"] for r in message["display_recipient"]}, "direct_message"
    candidates.discard(message["sender_id"])
    return candidates, trigger


def triggered_bots(event: JSONDict) -> list[tuple[UserProfile, BotService, str]]:
    """[(bot, service, trigger)] for a committed message event: loudly mentioned service bots in
    a channel ("mention"), service bots among a direct message's recipients ("direct_message").
    Messages sent by service bots trigger nothing, so that two bots never answer each other forever."""
    message = event["message"]
    candidates, trigger = bot_candidates(message)
    if not candidates:
        return []
    sender = UserProfile.get_or_none(UserProfile.id == message["sender_id"])
    if sender is None or (sender.is_bot and sender.bot_type in SERVICE_BOT_TYPES):
        return []
    bots = (UserProfile.select(UserProfile, BotService).join(BotService, on=(BotService.bot == UserProfile.id))
            .where(UserProfile.id.in_(sorted(candidates)) & UserProfile.is_active
                   & UserProfile.bot_type.in_(SERVICE_BOT_TYPES) & (UserProfile.realm == event["realm_id"])))
    return [(bot, bot.botservice, trigger) for bot in bots]


def outgoing_message_dict(event: JSONDict) -> JSONDict:
    """The message as Zulip sends it to services: Markdown content, with the rendered form beside it."""
    message = dict(event["message"])
    message["rendered_content"] = message["content"]
    message["content"] = event["raw_content"]
    message["content_type"] = "text/x-markdown"
    return message


def strip_mention(content: str, bot: UserProfile) -> Any:
    """The message without the bot's leading @-mention (`@**Name**` or `@**Name|id**`), as
    zulip_bots bots expect their commands; None when the bot is not mentioned first."""
    match = re.match(r"@\*\*(?:%s|[^*|]*\|%d)\*\*" % (re.escape(bot.full_name), bot.id), content)
    return content[match.end():].lstrip() if match else None


def reply_destination(message: JSONDict) -> JSONDict:
    """Where an answer to `message` goes: its channel and topic, or everyone in its conversation."""
    if message["type"] == "stream":
        return {"message_type": "stream", "to": message["stream_id"], "topic": message["subject"]}
    return {"message_type": "private", "to": [r["id"] for r in message["display_recipient"]], "topic": None}


class ServiceDispatcher:
    """The worker that calls service bots (workers/base.py). One per app; `close()` stops its
    threads."""

    def __init__(self, config, workers=2):
        # The app's configuration mapping, read at each call (tests and `dev` adjust it).
        self.config = config
        self.retry_delays = RETRY_DELAYS_SECONDS
        self._workers = workers
        self._pool = None

    @classmethod
    def start(cls, context: WorkerContext) -> ServiceDispatcher:
        return cls(context.config)

    @property
    def limits(self) -> Limits:
        return Limits.from_config(self.config)

    def __call__(self, event, user_ids):
        """Bus listener: hand message events to a worker (the publisher never waits on a bot)."""
        if event.get("type") != "message":
            return
        # Most channel messages mention nobody: no worker, no database connection for them
        # (handing each send to a worker cost it 0.15 ms and woke another thread).
        if not bot_candidates(event["message"])[0]:
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="service-bot")
        # The worker runs in a copy of this context, so it works with the publishing app's runtime.
        self._pool.submit(contextvars.copy_context().run, self._run_guarded, event)

    def close(self) -> None:
        """Finish the calls under way, then stop the workers."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _run_guarded(self, event):
        try:
            with database.connection_context():
                for bot, service, trigger in triggered_bots(event):
                    self.handle(bot, service, trigger, event)
        except Exception as error:  # a worker must survive anything one bot does
            log_failure(log, error, "service bot dispatch failed for message %s", event["message"].get("id"))

    def handle(self, bot: UserProfile, service: BotService, trigger: str, event: JSONDict) -> None:
        """Call one bot about one message."""
        if bot.bot_type == BOT_OUTGOING_WEBHOOK:
            self.call_webhook(bot, service, trigger, event)
        else:
            self.run_embedded_bot(bot, service, trigger, event)

    # --- outgoing webhooks ---------------------------------------------------------------------

    def webhook_request(self, bot: UserProfile, service: BotService, trigger: str,
                        event: JSONDict) -> tuple[bytes, str]:
        """(body bytes, content type) in the bot's interface: Zulip's JSON or Slack's form."""
        message = outgoing_message_dict(event)
        if service.interface == INTERFACE_SLACK:
            fields = {
                "token": service.token, "team_id": str(bot.realm_id), "team_domain": bot.realm.host,
                "channel_id": str(message.get("stream_id") or ""),
                "channel_name": message["display_recipient"] if message["type"] == "stream" else "",
                "thread_ts": str(message["timestamp"]), "timestamp": str(message["timestamp"]),
                "user_id": str(message["sender_id"]), "user_name": message["sender_full_name"],
                "text": message["content"], "trigger_word": trigger, "service_id": str(service.id),
            }
            return urllib.parse.urlencode(fields).encode(), "application/x-www-form-urlencoded"
        payload = {"bot_email": bot.email, "bot_full_name": bot.full_name, "data": message["content"],
                   "message": message, "token": service.token, "trigger": trigger}
        return json.dumps(payload).encode(), "application/json"

    def call_webhook(self, bot: UserProfile, service: BotService, trigger: str, event: JSONDict) -> None:
        """POST to the payload URL with retries for unreachable endpoints; post the answer back."""
        body, content_type = self.webhook_request(bot, service, trigger, event)
        failure = None
        attempts = max(1, self.config["OUTGOING_WEBHOOK_ATTEMPTS"])
        for attempt in range(attempts):
            try:
                answer = self.post(service.base_url, body, content_type)
            except WebhookFailure as error:
                failure = error
                break
            except OSError as error:  # timeouts and refused connections included
                reason = getattr(error, "reason", error)
                failure = WebhookFailure("The request could not be completed", f"{type(reason).__name__}: {reason}")
                if attempt + 1 < attempts:
                    time.sleep(self.retry_delays[min(attempt, len(self.retry_delays) - 1)])
                continue
            self.post_answer(bot, service, event, answer)
            return
        self.report_failure(bot, event, failure)

    def post(self, url: str, body: bytes, content_type: str) -> JSONDict | None:
        """One request; returns the decoded JSON answer (None for an empty body). Through
        clients/safe_fetch: the address is checked and pinned, and a redirect is a failure (it could
        point into this server's network, and the answer would be posted into the chat)."""
        try:
            response = safe_fetch.fetch(url, method="POST", data=body, timeout=self.config["OUTGOING_WEBHOOK_TIMEOUT_SECONDS"],
                                        headers={"Content-Type": content_type, "User-Agent": USER_AGENT},
                                        allow_private=self.config["OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES"])
        except safe_fetch.UnsafeURLError as error:
            raise WebhookFailure("The payload URL is not allowed", str(error)) from None
        if 300 <= response.status < 400:
            raise WebhookFailure(f"The webhook answered with a redirect (HTTP status {response.status}), which is not followed",
                                 response.headers.get("location", "")[:2000])
        if not 200 <= response.status < 300:
            detail = response.body[:2000].decode("utf-8", "replace")
            raise WebhookFailure(f"The webhook answered with HTTP status {response.status}", detail)
        text = response.body.decode("utf-8", "replace")
        if not text.strip():
            return None
        try:
            return parse_json(text)
        except JsonInputError:
            raise WebhookFailure("The webhook's answer is not valid JSON", text[:2000]) from None

    def post_answer(self, bot: UserProfile, service: BotService, event: JSONDict, answer: Any) -> None:
        """`content` (or `response_string`; Slack's `text`) becomes the bot's reply, unless the
        answer says `response_not_required`."""
        if not isinstance(answer, dict) or answer.get("response_not_required"):
            return
        key = "text" if service.interface == INTERFACE_SLACK else None
        content = answer.get(key) if key else answer.get("response_string", answer.get("content"))
        if content is None or str(content).strip() == "":
            return
        self.send_reply(bot, event["message"], str(content))

    def report_failure(self, bot: UserProfile, event: JSONDict, failure: Any) -> None:
        """Tell the bot's owner, in a direct message from the Notification Bot, what went wrong."""
        log.warning("outgoing webhook of %s failed: %s %s", bot.email, failure.summary, failure.detail)
        owner = UserProfile.get_or_none(UserProfile.id == bot.bot_owner_id)
        notifier = system_bot(bot.realm, NOTIFICATION_BOT[0])
        if owner is None or not owner.is_active or notifier is None:
            return
        message = event["message"]
        lines = [f"Your bot @_**{bot.full_name}|{bot.id}** was called about message {message['id']}, "
                 f"and its outgoing webhook failed: {failure.summary}."]
        if failure.detail:
            lines.append(f"~~~ quote\n{failure.detail[:1000]}\n~~~")
        check_send_message(notifier, message_type="private", to=[owner.id], topic=None,
                           content="\n".join(lines), client_name="Internal", limits=self.limits)

    def send_reply(self, bot: UserProfile, message: JSONDict, content: str) -> None:
        """The bot's answer in the conversation `message` belongs to."""
        destination = reply_destination(message)
        check_send_message(bot, content=content[: self.limits.max_message_length],
                           client_name="OutgoingWebhookResponse", limits=self.limits, **destination)

    # --- embedded bots -------------------------------------------------------------------------

    def run_embedded_bot(self, bot: UserProfile, service: BotService, trigger: str, event: JSONDict) -> None:
        """Run the zulip_bots bot in this worker, as Zulip runs embedded bots in its own process."""
        module = import_module(f"zulip_bots.bots.{service.name}.{service.name}")
        handler = EmbeddedBotHandler(self, bot, service)
        message_handler = module.handler_class()
        if hasattr(message_handler, "validate_config"):
            module.handler_class.validate_config(service.config_data)
        if hasattr(message_handler, "initialize"):
            message_handler.initialize(bot_handler=handler)
        message = outgoing_message_dict(event)
        message["full_content"] = message["content"]
        if trigger == "mention":
            message["content"] = strip_mention(message["content"], bot)
            if message["content"] is None:
                return
        try:
            message_handler.handle_message(message=message, bot_handler=handler)
        except EmbeddedBotQuit:
            pass


class EmbeddedBotQuit(Exception):
    """Raised by EmbeddedBotHandler.quit: the bot is done with this message."""


class EmbeddedBotStorage:
    """zulip_bots' storage interface over bot storage; values are JSON-encoded as zulip_bots does."""

    def __init__(self, bot):
        self.bot = bot

    def put(self, key: str, value: Any) -> None:
        do_update_storage(self.bot, {key: json.dumps(value)})

    def get(self, key: str) -> Any:
        try:
            return json.loads(stored_items(self.bot, [key])[key])
        except JsonableError:
            raise KeyError(key) from None

    def contains(self, key: str) -> bool:
        return key in stored_items(self.bot)

    def remove(self, key: str) -> None:
        try:
            do_remove_storage(self.bot, [key])
        except JsonableError:
            raise KeyError(key) from None


class EmbeddedBotHandler:
    """What a zulip_bots bot may do, done in-process as the bot user (zulip_bots' AbstractBotHandler)."""

    def __init__(self, dispatcher, bot, service):
        self._dispatcher, self._bot, self._service = dispatcher, bot, service
        self.user_id, self.full_name, self.email = bot.id, bot.full_name, bot.email
        self.storage = EmbeddedBotStorage(bot)

    def identity(self) -> Any:
        return import_module("zulip_bots.lib").BotIdentity(self.full_name, self.email)

    def send_message(self, message: Any) -> JSONDict:
        is_stream = message["type"] == "stream"
        to = message["to"]
        if not is_stream and isinstance(to, str):
            to = [address.strip() for address in to.split(",") if address.strip()]
        message_id, _policy = check_send_message(
            self._bot, message_type=message["type"], to=to,
            topic=message.get("topic", message.get("subject")) if is_stream else None,
            content=message["content"], client_name="EmbeddedBot", limits=self._dispatcher.limits)
        return {"result": "success", "msg": "", "id": message_id}

    def send_reply(self, message: JSONDict, response: str, widget_content: Any = None) -> JSONDict:
        self._dispatcher.send_reply(self._bot, message, response)
        return {"result": "success", "msg": ""}

    def react(self, message: JSONDict, emoji_name: str) -> JSONDict:
        do_add_reaction(self._bot, Message.get_by_id(message["id"]), *check_emoji(emoji_name, None, "unicode_emoji"))
        return {"result": "success", "msg": ""}

    def get_config_info(self, bot_name: Any, optional: bool = False) -> Any:
        return dict(self._service.config_data)

    def quit(self, message: Any = "") -> None:
        raise EmbeddedBotQuit(message)
