"""Rate limits: Zulip's rules, answers and headers, the login lock-out, the switch."""

import time

import pytest

from chat_appliance.config import load_config
from chat_appliance.web.rate_limit import RateLimiter

from ..support.helpers import PASSWORD, ApiClient, err, ok

# The suite's app (a copy of the session's template database) with rate limits on: the test
# configuration turns them off everywhere else.
pytestmark = pytest.mark.config(RATE_LIMITING=True)


class FakeClock:
    """Monotonic and wall time that only move when a test says so."""

    def __init__(self):
        self.now = 1000.0
        self.wall = time.time()

    def monotonic(self):
        return self.now

    def time(self):
        return self.wall + (self.now - 1000.0)

    def advance(self, seconds):
        self.now += seconds


@pytest.fixture
def clock(app):
    """The app's limiter runs on a clock the test moves (it is replaced on the app's state, which
    close_app forgets with the test)."""
    fake = FakeClock()
    app.extensions["chat_appliance"].rate_limiter = RateLimiter(clock=fake.monotonic, wall_clock=fake.time)
    return fake


def headers_of(response):
    return tuple(int(response.headers[name]) for name in ("X-RateLimit-Limit", "X-RateLimit-Remaining",
                                                          "X-RateLimit-Reset"))


def test_api_by_user_default_and_headers(org, clock):
    """Does an account get Zulip's 200 requests per minute, with the headers on every response
    counting down, and then a 429 with RATE_LIMIT_HIT, retry-after and Retry-After?"""
    hamlet = org.client(org.hamlet)
    first = hamlet.get("users/me")
    ok(first)
    limit, remaining, reset = headers_of(first)
    assert (limit, remaining) == (200, 199)
    assert clock.time() < reset <= clock.time() + 61
    for expected_remaining in range(198, -1, -1):
        response = hamlet.get("users/me")
        assert response.status_code == 200
        assert headers_of(response)[1] == expected_remaining
    refused = hamlet.get("users/me")
    body = err(refused, 429, "RATE_LIMIT_HIT", "API usage exceeded rate limit")
    assert body["retry-after"] == 1  # one token back after 60/200 s
    assert refused.headers["Retry-After"] == "1"
    assert headers_of(refused)[:2] == (200, 0)
    clock.advance(0.31)
    ok(hamlet.get("users/me"))
    err(hamlet.get("users/me"), 429, "RATE_LIMIT_HIT")


def test_limits_are_per_account_and_bots_alike(app, org, clock):
    """Does one account's exhausted budget leave others alone, and does a bot get the same limit?"""
    app.config["RATE_LIMITING_RULES"] = {"api_by_user": [[60, 3]]}
    hamlet, othello, bot = org.client(org.hamlet), org.client(org.othello), org.client(org.bot)
    for _ in range(3):
        ok(hamlet.get("users/me"))
    err(hamlet.get("users/me"), 429, "RATE_LIMIT_HIT")
    ok(othello.get("users/me"))
    for _ in range(3):
        assert bot.get("users/me").status_code == 200
    err(bot.get("users/me"), 429, "RATE_LIMIT_HIT")


def test_configured_rules_and_refill(app, org, clock):
    """Do configured rules replace the defaults, with several windows at once, and do the buckets
    refill at the sustained rate?"""
    app.config["RATE_LIMITING_RULES"] = {"api_by_user": [[10, 2], [100, 4]]}
    hamlet = org.client(org.hamlet)
    assert headers_of(hamlet.get("users/me"))[:2] == (2, 1)
    ok(hamlet.get("users/me"))
    refused = hamlet.get("users/me")
    assert err(refused, 429, "RATE_LIMIT_HIT")["retry-after"] == 5
    clock.advance(10)
    ok(hamlet.get("users/me"))
    # The 100 s rule (4 requests, one back every 25 s) is now the strictest.
    assert headers_of(hamlet.get("users/me"))[:2] == (4, 0)
    refused = hamlet.get("users/me")
    # The short window has a token in 5 s, the long one (0.4 tokens left) in 15 s.
    assert err(refused, 429, "RATE_LIMIT_HIT")["retry-after"] == 15
    assert refused.headers["Retry-After"] == "15"


def test_long_polls_do_not_use_the_budget(app, org, clock):
    """Can a client poll /events without pause and never run out of budget on that alone?"""
    app.config["RATE_LIMITING_RULES"] = {"api_by_user": [[60, 3]]}
    hamlet = org.client(org.hamlet)
    queue_id = ok(hamlet.post("register", event_types=["message"]))["queue_id"]
    for _ in range(10):
        polled = hamlet.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True)
        ok(polled)
        assert headers_of(polled)[:2] == (3, 2)
    ok(hamlet.get("users/me"))
    ok(hamlet.get("users/me"))
    err(hamlet.get("users/me"), 429, "RATE_LIMIT_HIT")
    # Even with the budget used up, the queue keeps delivering.
    ok(hamlet.get("events", queue_id=queue_id, last_event_id=-1, dont_block=True))


def test_unauthenticated_requests_by_address(app, anon, flask_client, clock):
    """Are unauthenticated requests limited per client address (100 per minute by default),
    failed credentials included, and is X-Forwarded-For believed only from a trusted proxy?"""
    first = anon.get("server_settings")
    assert headers_of(first)[:2] == (100, 99)
    for _ in range(99):
        assert anon.get("server_settings").status_code == 200
    err(anon.get("server_settings"), 429, "RATE_LIMIT_HIT")
    wrong = ApiClient(flask_client, "nobody@zulip.example", "x" * 32)
    err(wrong.get("users/me"), 429, "RATE_LIMIT_HIT")
    # A forged header from an untrusted peer changes nothing.
    forged = flask_client.get("/api/v1/server_settings", headers={"X-Forwarded-For": "203.0.113.9"})
    assert forged.status_code == 429
    # Behind a trusted proxy, each forwarded client has its own budget.
    app.config["TRUSTED_PROXIES"] = ["127.0.0.1"]
    proxied = flask_client.get("/api/v1/server_settings", headers={"X-Forwarded-For": "203.0.113.9"})
    assert proxied.status_code == 200 and headers_of(proxied)[1] == 99


def test_login_lock_out_and_its_end(app, org, flask_client, clock):
    """After 5 failed logins, is the account refused for the rest of the 30 minutes even with
    the right password, while other accounts sign in, and does the lock end with the window?"""
    anon = ApiClient(flask_client, None, None)
    email = org.hamlet.email
    for attempt in range(5):
        response = anon.post("fetch_api_key", username=email, password=f"wrong {attempt}")
        err(response, 401, "AUTHENTICATION_FAILED", "Your username or password is incorrect")
        assert headers_of(response)[:2] == (5, 4 - attempt)
        clock.advance(60)
    locked = anon.post("fetch_api_key", username=email.upper(), password=PASSWORD)
    body = err(locked, 429, "RATE_LIMIT_HIT", "API usage exceeded rate limit")
    assert body["retry-after"] == 1800 - 5 * 60
    assert locked.headers["Retry-After"] == str(1800 - 5 * 60)
    ok(anon.post("fetch_api_key", username=org.othello.email, password=PASSWORD))
    clock.advance(1800 - 5 * 60 - 1)
    err(anon.post("fetch_api_key", username=email, password=PASSWORD), 429, "RATE_LIMIT_HIT")
    clock.advance(1)
    assert ok(anon.post("fetch_api_key", username=email, password=PASSWORD))["user_id"] == org.hamlet.id


def test_login_answers_do_not_tell_accounts_apart(org, anon):
    """Do an unknown email, a wrong password and a deactivated account (right password or not)
    all get the same answer?"""
    from chat_appliance.actions.users import do_deactivate_user
    from chat_appliance.models import database

    with database.connection_context():
        do_deactivate_user(org.cordelia)
    answers = [
        anon.post("fetch_api_key", username="nobody@zulip.example", password=PASSWORD),
        anon.post("fetch_api_key", username=org.hamlet.email, password="wrong"),
        anon.post("fetch_api_key", username=org.cordelia.email, password="wrong"),
        anon.post("fetch_api_key", username=org.cordelia.email, password=PASSWORD),
    ]
    for response in answers:
        err(response, 401, "AUTHENTICATION_FAILED", "Your username or password is incorrect")


def test_switch_off(app, org, clock, monkeypatch):
    """Does RATE_LIMITING=false (config or $CHAT_APPLIANCE_RATE_LIMITING) turn every limit and
    header off?"""
    app.config["RATE_LIMITING"] = False
    app.config["RATE_LIMITING_RULES"] = {"api_by_user": [[60, 1]], "authenticate_by_username": [[60, 1]]}
    hamlet = org.client(org.hamlet)
    for _ in range(5):
        response = hamlet.get("users/me")
        ok(response)
        assert "X-RateLimit-Limit" not in response.headers
    monkeypatch.setenv("CHAT_APPLIANCE_RATE_LIMITING", "false")
    assert load_config(app.config["INSTANCE_PATH"])["RATE_LIMITING"] is False
    monkeypatch.setenv("CHAT_APPLIANCE_RATE_LIMITING", "true")
    assert load_config(app.config["INSTANCE_PATH"])["RATE_LIMITING"] is True


def test_incoming_webhooks_count_too(app, org, clock):
    """Does a bot posting to an incoming webhook spend the same per-account budget as its API
    requests?"""
    from chat_appliance.integrations import registry

    app.config["RATE_LIMITING_RULES"] = {"api_by_user": [[60, 1]]}
    bot = org.client(org.bot)
    integration = sorted(registry())[0]
    posted = org.flask_client.post(f"/api/v1/external/{integration}?stream=Denmark", headers=bot.headers, json={})
    assert posted.status_code != 429 and headers_of(posted)[:2] == (1, 0)
    err(bot.get("users/me"), 429, "RATE_LIMIT_HIT")


def test_web_sign_in_and_fetch_api_key_share_one_lock_out(app, org, flask_client, clock):
    """Do failed web sign-ins (/accounts/login) and failed POST /fetch_api_key count toward the
    same per-account limit, so that the web form is no way around the lock-out?"""
    anon = ApiClient(flask_client, None, None)
    email = org.hamlet.email

    def web_sign_in(password):
        return flask_client.post("/accounts/login", data={"username": email, "password": password},
                                 headers={"X-Requested-With": "XMLHttpRequest"})

    for attempt in range(3):
        assert web_sign_in(f"wrong {attempt}").status_code == 401
    for attempt in range(2):
        err(anon.post("fetch_api_key", username=email, password=f"bad {attempt}"), 401, "AUTHENTICATION_FAILED")
    locked = web_sign_in(PASSWORD)
    assert locked.status_code == 429 and locked.get_json()["code"] == "RATE_LIMIT_HIT"
    err(anon.post("fetch_api_key", username=email, password=PASSWORD), 429, "RATE_LIMIT_HIT")
    assert web_sign_in(PASSWORD).status_code == 429


def test_wrong_old_passwords_count_as_failed_logins(app, org, flask_client, clock):
    """Does a wrong old password in PATCH /settings count toward the account's login lock-out, so
    that a stolen API key cannot guess the password there, and is the right one then refused too
    (while a missing old password is refused without counting)?"""
    hamlet = org.client(org.hamlet)
    anon = ApiClient(flask_client, None, None)
    err(hamlet.patch("settings", new_password="a brand new secret"), 400, "BAD_REQUEST", "Please fill out all fields.")
    for attempt in range(4):
        err(hamlet.patch("settings", old_password=f"wrong {attempt}", new_password="a brand new secret"), 400,
            "BAD_REQUEST", "Wrong password!")
    err(anon.post("fetch_api_key", username=org.hamlet.email, password="wrong 4"), 401, "AUTHENTICATION_FAILED")
    err(hamlet.patch("settings", old_password=PASSWORD, new_password="a brand new secret"), 429, "RATE_LIMIT_HIT")
    err(anon.post("fetch_api_key", username=org.hamlet.email, password=PASSWORD), 429, "RATE_LIMIT_HIT")
    clock.advance(1800)
    ok(hamlet.patch("settings", old_password=PASSWORD, new_password="a brand new secret"))
