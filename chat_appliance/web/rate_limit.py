"""Rate limits with Zulip's rules and answers, kept in the server process's memory.

Rules are Zulip's: per domain a list of (seconds, requests). `api_by_user` limits every
authenticated API request by account (bots included), `api_by_ip` limits unauthenticated ones by
client address, and `authenticate_by_username` counts failed logins per account.

API requests use token buckets: a bucket holds `requests` tokens and refills at
requests/seconds tokens per second, so a client may burst up to the limit and then continue at
the sustained rate. Failed logins are counted in a window instead: after the limit is reached the
account stays locked until the window that began with the oldest counted failure ends, whatever
the password, because a lock that lets one guess through every few minutes is still a guessing
service. Other accounts are never affected.

The appliance is one process, so memory is the right store: no external service. Each app keeps
its own RateLimiter on its state (app.py's AppState), so two apps in one process (the tests) share
no counts, and closing an app forgets them; a restart likewise only ever frees clients.
"""

import math
import threading
import time
from collections import deque
from dataclasses import dataclass

from flask import current_app, g, request

from chat_appliance.lib.errors import RateLimitedError

API_BY_USER = "api_by_user"
API_BY_IP = "api_by_ip"
AUTHENTICATE_BY_USERNAME = "authenticate_by_username"
PASSWORD_RESET_BY_EMAIL = "password_reset_form_by_email"
EMAIL_CHANGE_BY_USER = "email_change_by_user"

# Zulip's DEFAULT_RATE_LIMITING_RULES for the domains the appliance serves.
DEFAULT_RULES = {
    API_BY_USER: [(60, 200)],
    API_BY_IP: [(60, 100)],
    AUTHENTICATE_BY_USERNAME: [(1800, 5)],
    # Reset mails per address: 2 an hour, 5 a day, so that the form cannot flood a mailbox.
    PASSWORD_RESET_BY_EMAIL: [(3600, 2), (86400, 5)],
    # Confirmation mails for a new address per account: the same, so that nobody mails strangers
    # through the server by asking for address changes.
    EMAIL_CHANGE_BY_USER: [(3600, 2), (86400, 5)],
}

# Buckets untouched for this long are full again and can be forgotten.
_COLLECT_EVERY_SECONDS = 60


@dataclass
class Status:
    """What one rule says about one key after a request: for the X-RateLimit-* headers."""

    limit: int
    remaining: int
    reset: float  # UNIX time at which the key has its whole budget again
    retry_after: float  # seconds until the next request is allowed; 0 when allowed now


class _Bucket:
    __slots__ = ("tokens", "updated")

    def __init__(self, tokens, now):
        self.tokens = tokens
        self.updated = now


class RateLimiter:
    """Token buckets and login-failure windows for every (domain, key, rule)."""

    def __init__(self, clock=time.monotonic, wall_clock=time.time):
        self._clock = clock
        self._wall_clock = wall_clock
        self._lock = threading.Lock()
        self._buckets = {}
        self._failures = {}
        self._collected_at = clock()

    def clear(self):
        """Forget every count (tests; a restart does the same)."""
        with self._lock:
            self._buckets.clear()
            self._failures.clear()

    # --- token buckets: API requests ------------------------------------------------------

    def _refilled(self, key, seconds, limit, now):
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(float(limit), now)
        else:
            bucket.tokens = min(float(limit), bucket.tokens + (now - bucket.updated) * limit / seconds)
            bucket.updated = now
        return bucket

    def _status(self, bucket, seconds, limit, now):
        rate = limit / seconds
        wall = self._wall_clock()
        retry_after = 0.0 if bucket.tokens >= 1 else (1 - bucket.tokens) / rate
        return Status(limit=limit, remaining=int(math.floor(bucket.tokens + 1e-9)),
                      reset=wall + (limit - bucket.tokens) / rate, retry_after=retry_after)

    def hit(self, domain, key, rules, *, consume=True):
        """Take one token from every rule's bucket for `key`, if all have one; return
        (allowed, statuses). With consume=False only report (a long poll)."""
        now = self._clock()
        with self._lock:
            self._collect(now)
            buckets = [(self._refilled((domain, key, seconds, limit), seconds, limit, now), seconds, limit)
                       for seconds, limit in rules]
            allowed = all(bucket.tokens >= 1 for bucket, _s, _l in buckets)
            if allowed and consume:
                for bucket, _s, _l in buckets:
                    bucket.tokens -= 1
            return allowed, [self._status(bucket, seconds, limit, now) for bucket, seconds, limit in buckets]

    def _collect(self, now):
        if now - self._collected_at < _COLLECT_EVERY_SECONDS:
            return
        self._collected_at = now
        for key, bucket in list(self._buckets.items()):
            _domain, _key, seconds, limit = key
            if bucket.tokens + (now - bucket.updated) * limit / seconds >= limit:
                del self._buckets[key]
        for key, times in list(self._failures.items()):
            seconds = key[2]
            while times and times[0] <= now - seconds:
                times.popleft()
            if not times:
                del self._failures[key]

    # --- failure windows: logins -----------------------------------------------------------

    def failures_status(self, domain, key, rules):
        """Statuses of the failure windows of `key`; retry_after > 0 when it is locked."""
        now = self._clock()
        wall = self._wall_clock()
        statuses = []
        with self._lock:
            for seconds, limit in rules:
                times = self._failures.get((domain, key, seconds, limit))
                while times and times[0] <= now - seconds:
                    times.popleft()
                count = len(times) if times else 0
                retry_after = times[0] + seconds - now if count >= limit else 0.0
                reset = wall + (times[0] + seconds - now if count else 0.0)
                statuses.append(Status(limit=limit, remaining=max(0, limit - count), reset=reset,
                                       retry_after=retry_after))
        return statuses

    def record_failure(self, domain, key, rules):
        """Count one failure of `key` in every rule's window."""
        now = self._clock()
        with self._lock:
            for seconds, limit in rules:
                self._failures.setdefault((domain, key, seconds, limit), deque()).append(now)


def limiter():
    """The RateLimiter of the app serving this request (kept on its AppState)."""
    return current_app.extensions["chat_appliance"].rate_limiter


# --- configuration -------------------------------------------------------------------------


def enabled():
    """RATE_LIMITING in the app's config (false for load tests and the development server)."""
    return enabled_in(current_app.config)


def rules_for(domain):
    """The configured rules of a domain: RATE_LIMITING_RULES overrides Zulip's defaults per domain."""
    return rules_in(current_app.config, domain)


# The same two, given the app's config: for the event loop's long poll (web/longpoll.py), which
# answers outside any Flask request.

def enabled_in(config):
    return bool(config.get("RATE_LIMITING", True))


def rules_in(config, domain):
    configured = (config.get("RATE_LIMITING_RULES") or {}).get(domain)
    return [tuple(rule) for rule in (configured if configured is not None else DEFAULT_RULES[domain])]


def client_ip():
    """The client's address (behind a trusted proxy, lib/proxy.py has already put the forwarded
    address in REMOTE_ADDR)."""
    return request.remote_addr or ""


# --- the checks views make ------------------------------------------------------------------


def strictest(statuses, current=None):
    """The status with the fewest requests left (then the latest reset) among these and `current`."""
    for status in statuses:
        if current is None or (status.remaining, -status.reset) < (current.remaining, -current.reset):
            current = status
    return current


def _note(statuses):
    """Remember the strictest applying status for the X-RateLimit-* headers of this response."""
    g.rate_limit_status = strictest(statuses, g.get("rate_limit_status"))


def refusal(statuses):
    """The RATE_LIMIT_HIT error for these statuses."""
    retry_after = max(status.retry_after for status in statuses)
    # Whole seconds (the OpenAPI type), rounded up past float noise.
    return RateLimitedError(max(1, math.ceil(retry_after - 1e-6)))


def _refuse(statuses):
    raise refusal(statuses)


def check_api_request(user=None, *, consume=True):
    """Count this API request against its user's budget (or its address's, unauthenticated);
    raise RATE_LIMIT_HIT when it is used up. consume=False (long polls) only reports: a queue
    keeps delivering even to a client whose other requests used up the budget."""
    if not enabled():
        return
    if user is not None:
        domain, key = API_BY_USER, user.id
    else:
        domain, key = API_BY_IP, client_ip()
    allowed, statuses = limiter().hit(domain, key, rules_for(domain), consume=consume)
    _note(statuses)
    if consume and not allowed:
        _refuse(statuses)


def password_reset_allowed(email):
    """Whether another reset mail may go to this address now (counted whatever the answer, which
    never says: the form answers the same either way)."""
    if not enabled():
        return True
    allowed, _statuses = limiter().hit(PASSWORD_RESET_BY_EMAIL, mailbox(email), rules_for(PASSWORD_RESET_BY_EMAIL))
    return allowed


def check_email_change_allowed(user):
    """Raise RATE_LIMIT_HIT when the account has asked for too many address-change mails."""
    if not enabled():
        return
    allowed, statuses = limiter().hit(EMAIL_CHANGE_BY_USER, user.id, rules_for(EMAIL_CHANGE_BY_USER))
    if not allowed:
        _refuse(statuses)


def mailbox(email):
    """The mailbox an address reaches, as a rate limit's key: lower case, without a +tag (most
    mail servers deliver victim+1@ and victim+2@ to victim@, so each must not get an allowance
    of its own)."""
    local, _, domain = email.strip().lower().rpartition("@")
    return f"{local.split('+', 1)[0]}@{domain}"


def _login_key(email, user):
    """The account when the name given is one (keyed on the typed name, an account
    whose address is hidden had two names, and twice the guesses); else the name as typed."""
    return f"account:{user.id}" if user is not None else (email or "").strip().lower()


def check_login_allowed(email, user=None):
    """Raise RATE_LIMIT_HIT when the account `user` (or, for a name that is no account, `email`)
    has used up its failed logins: call before checking the password, so that the right password
    is refused too during the lock-out. Every sign-in path (POST /fetch_api_key, the web client's
    login) calls this and record_failed_login."""
    if not enabled():
        return
    statuses = limiter().failures_status(AUTHENTICATE_BY_USERNAME, _login_key(email, user),
                                         rules_for(AUTHENTICATE_BY_USERNAME))
    _note(statuses)
    if any(status.retry_after > 0 for status in statuses):
        _refuse(statuses)


def record_failed_login(email, user=None):
    """Count one failed login for the account `user`, else for the name `email`."""
    if not enabled():
        return
    rules = rules_for(AUTHENTICATE_BY_USERNAME)
    limiter().record_failure(AUTHENTICATE_BY_USERNAME, _login_key(email, user), rules)
    _note(limiter().failures_status(AUTHENTICATE_BY_USERNAME, _login_key(email, user), rules))


def add_headers(response):
    """X-RateLimit-Limit/Remaining/Reset for the strictest limit that applied to this request
    (Retry-After on a 429 comes with the error, app.py)."""
    status = g.get("rate_limit_status")
    if status is None:
        return response
    for name, value in header_pairs(status):
        response.headers[name] = value
    return response


def header_pairs(status):
    """The X-RateLimit-* headers for a status, as (name, value) pairs."""
    return [("X-RateLimit-Limit", str(status.limit)), ("X-RateLimit-Remaining", str(status.remaining)),
            ("X-RateLimit-Reset", str(int(math.ceil(status.reset))))]
