"""GET and DELETE /events, answered the same way whatever carries the request.

Two transports carry them: the event loop of `chat-appliance serve` (server/asgi.py), where a
waiting poll holds no thread and no database connection, and the Flask views (api/events.py),
used under any other WSGI server and by the test client. Each authenticates the request its own
way (it has the headers, or Flask's request) and hands over the user, the merged parameters and
the client's address. Everything after that is here, once: the rate-limit report and its
X-RateLimit-* headers, the parameters and their errors, the queue lookup, the wait with its
spread heartbeat (events/queues.py), and Zulip's error envelope with its extra headers. This
module sees no request object and imports neither Flask nor werkzeug.
"""

from dataclasses import dataclass, field

from chat_appliance.lib.errors import JsonableError, RateLimitedError
from chat_appliance.web.params import Param, parse_values
from chat_appliance.lib.validators import check_bool, check_int
from chat_appliance.events.queues import shard_of
from chat_appliance.web.rate_limit import (
    API_BY_IP,
    API_BY_USER,
    enabled_in,
    header_pairs,
    refusal,
    rules_in,
    strictest,
)
from chat_appliance.web.response import success_body

GET_EVENTS_PARAMS = {"queue_id": Param(), "last_event_id": Param(check_int, default=None),
                     "dont_block": Param(check_bool, default=False)}
DELETE_EVENTS_PARAMS = {"queue_id": Param()}


@dataclass
class Answer:
    """One response: status, headers beyond Content-Type, and a body that is a dict or EventsBody."""

    status: int
    body: object
    headers: list = field(default_factory=list)


class EventsBody:
    """A GET /events success answer, kept apart from its JSON: the event loop encodes the message
    objects a fan-out shares once (server/asgi.py), the Flask view calls to_dict."""

    __slots__ = ("events", "ignored", "queue_id")

    def __init__(self, events, queue_id, ignored):
        self.events, self.queue_id, self.ignored = events, queue_id, ignored

    def to_dict(self):
        return success_body({"events": self.events, "queue_id": self.queue_id}, ignored=self.ignored)


class LongPoll:
    """The events handler of one app. Its queues and rate limiter are read from the app's state
    (app.py's AppState) and its config on every request, as the Flask helpers read them, so that
    a replaced limiter or a changed setting takes effect at once."""

    def __init__(self, state, config):
        self.state = state
        self.config = config

    @property
    def queues(self):
        return self.state.queues

    @property
    def limiter(self):
        return self.state.rate_limiter

    def refused(self, error, *, client_ip, session):
        """The answer to a request whose credentials failed. Like any unauthenticated request it
        counts against the client's address, and a used-up budget turns it into RATE_LIMIT_HIT."""
        headers = []
        if enabled_in(self.config):
            allowed, statuses = self.limiter.hit(API_BY_IP, client_ip, rules_in(self.config, API_BY_IP))
            headers = header_pairs(strictest(statuses))
            if not allowed:
                error = refusal(statuses)
        return self.error(error, headers, session=session)

    def start(self, method, user, values, *, session):
        """GET or DELETE /events for an authenticated user: an Answer, or for a GET a Poll that the
        transport runs (it may have to wait). `values` are the query and form merged."""
        headers, refused = self.count(user, consume=method == "DELETE")
        if refused is not None:
            return self.error(refused, headers, session=session)
        try:
            if method == "DELETE":
                params, ignored = parse_values(DELETE_EVENTS_PARAMS, values)
                link = self.state.runtime.shard
                holder = shard_of(params["queue_id"])
                if link is not None and holder is not None and holder != link.shard_id:
                    # Another shard holds it (the proxy sent this one here): that shard deletes
                    # it if it is this user's.
                    link.delete_remote_queue(params["queue_id"], user.id)
                    return Answer(200, success_body(ignored=ignored), headers)
                self.queues.access(params["queue_id"], user.id)
                self.queues.delete(params["queue_id"])
                return Answer(200, success_body(ignored=ignored), headers)
            params, ignored = parse_values(GET_EVENTS_PARAMS, values)
            queue = self.queues.access(params["queue_id"], user.id)
        except JsonableError as error:
            return self.error(error, headers, session=session)
        return Poll(self, queue, params, ignored, headers, session)

    def count(self, user, *, consume):
        """(X-RateLimit-* headers of the user's budget, RATE_LIMIT_HIT error or None), after taking
        one request from the budget if `consume` (a DELETE, like any API request). A long poll
        only reports the budget: Zulip clients poll without pause, and that alone must never
        exhaust it."""
        if not enabled_in(self.config):
            return [], None
        allowed, statuses = self.limiter.hit(API_BY_USER, user.id, rules_in(self.config, API_BY_USER),
                                             consume=consume)
        return header_pairs(strictest(statuses)), None if allowed or not consume else refusal(statuses)

    @staticmethod
    def error(error, headers, *, session):
        """Zulip's error envelope, with the headers app.py's error handler adds."""
        headers = list(headers)
        if error.http_status == 401 and not session:
            # API clients expect a Basic challenge; the web client's /json calls never get one
            # (the browser would open its own password dialog).
            headers.append(("WWW-Authenticate", 'Basic realm="zulip"'))
        if isinstance(error, RateLimitedError):
            headers.append(("Retry-After", str(error.data["retry-after"])))
        return Answer(error.http_status, error.to_dict(), headers)


class Poll:
    """A GET /events past its checks: the events at once, or after a wait for one (or for the
    heartbeat). The transport picks how to wait: in its thread (wait) or on its loop (wait_async)."""

    __slots__ = ("handler", "headers", "ignored", "params", "queue", "session")

    def __init__(self, handler, queue, params, ignored, headers, session):
        self.handler, self.queue, self.params, self.ignored = handler, queue, params, ignored
        self.headers, self.session = headers, session

    def wait(self, *, block=True):
        """The answer, waiting in this thread if needed (never with block=False)."""
        try:
            events = self.queue.get(self.params["last_event_id"], dont_block=self.params["dont_block"] or not block)
        except JsonableError as error:
            return self.handler.error(error, self.headers, session=self.session)
        return self.answer(events)

    async def wait_async(self, disconnected=None):
        """The answer, waiting on the running event loop; None if the client went away while
        waiting (nothing is sent, its events stay queued). See EventQueue.get_async."""
        try:
            events = await self.queue.get_async(self.params["last_event_id"], dont_block=self.params["dont_block"],
                                                disconnected=disconnected)
        except JsonableError as error:
            return self.handler.error(error, self.headers, session=self.session)
        return None if events is None else self.answer(events)

    def answer(self, events):
        return Answer(200, EventsBody(events, self.params["queue_id"], self.ignored), self.headers)
