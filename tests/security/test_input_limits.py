"""Input is bounded before it costs: free texts, list parameters, alert words, JSON depth and every
stored text have limits, a request past one is refused storing nothing, and a list of ids costs
the same number of queries as one id. (The slow-request defence, every operation sent its largest
inputs, is tests/security/test_request_budget.py.)"""

import json
import threading
import time

import pytest

from ..support.helpers import err, ok


def send(client, stream, topic, content):
    return ok(client.post("messages", type="stream", to=stream, topic=topic, content=content))["id"]


def test_free_text_is_bounded(org):
    """Are a user group's description and the organization's description bounded?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post("user_groups/create", name="big", description="x" * 1025, members=[org.hamlet.id]), 400,
        "BAD_REQUEST", "description is too long (limit: 1024 characters)")
    ok(hamlet.post("user_groups/create", name="fine", description="x" * 1024, members=[org.hamlet.id]))
    err(org.client(org.owner).patch("realm", description="x" * 1001), 400, "BAD_REQUEST")
    err(hamlet.post("saved_snippets", title="t" * 61, content="c"), 400, "BAD_REQUEST")


def queries(app, monkeypatch, call):
    """How many SQL statements the app ran during `call()`, whose response must be a success.
    The account is read every time: kept between requests (lib/snapshots.py), it would be read
    or not depending on whether the request before wrote anything."""
    count = 0
    active = app.extensions["chat_appliance"].runtime
    db = active.database
    real, thread = db.execute_sql, threading.get_ident()
    monkeypatch.setattr(active.snapshots, "max_entries", 0)
    active.snapshots.clear()

    def counting(*args, **kwargs):
        nonlocal count
        count += threading.get_ident() == thread  # not the service bots' worker threads
        return real(*args, **kwargs)

    monkeypatch.setattr(db, "execute_sql", counting)
    try:
        ok(call())
    finally:
        monkeypatch.undo()
    return count


def test_list_parameters_are_bounded(org):
    """Is a list parameter longer than its documented limit (1000) refused at once, on /typing,
    a direct message's `to`, `principals`, `subscriptions` and `subscription_data`, even when it
    holds nothing but repeats of one valid item?"""
    hamlet = org.client(org.hamlet)
    too_many = [org.othello.id] * 1001
    started = time.monotonic()
    for response in (
        hamlet.post("typing", op="start", to=[org.othello.id] * 50000),
        hamlet.post("typing", op="start", to=too_many),
        hamlet.post("messages", type="direct", to=too_many, content="hi"),
        hamlet.post("users/me/subscriptions", subscriptions=[{"name": "Denmark"}] * 1001),
        hamlet.post("users/me/subscriptions", subscriptions=[{"name": "Denmark"}], principals=too_many),
        hamlet.delete("users/me/subscriptions", subscriptions=["Denmark"] * 1001),
        hamlet.post("users/me/subscriptions/properties", subscription_data=[
            {"stream_id": org.denmark.id, "property": "pin_to_top", "value": True}] * 1001),
    ):
        body = err(response, 400, "BAD_REQUEST")
        assert "too many items (limit: 1000)" in body["msg"]
    assert time.monotonic() - started < 5


def test_ids_are_resolved_in_one_query(app, org, monkeypatch):
    """Does resolving a list of users or channels cost the same number of queries for one item
    as for all of them (typing, direct message recipients by id and by address, principals,
    channel names, subscription properties)?"""
    hamlet = org.client(org.hamlet)
    people = [org.othello, org.cordelia, org.admin, org.owner, org.moderator, org.bot]
    ids, emails = [u.id for u in people], [u.email for u in people]
    channels = ["Denmark", "Verona", "secret"]
    pin = [{"stream_id": s.id, "property": "pin_to_top", "value": True} for s in (org.denmark, org.verona, org.secret)]
    cases = {
        "typing": lambda to: hamlet.post("typing", op="start", to=to),
        "dm by id": lambda to: hamlet.post("messages", type="direct", to=to, content="hi"),
        "dm by email": lambda to: hamlet.post("messages", type="direct", to=[emails[ids.index(i)] for i in to],
                                              content="hi"),
        "principals": lambda to: org.client(org.admin).post("users/me/subscriptions", subscriptions=[{"name": "Verona"}],
                                                             principals=to),
    }
    for name, call in cases.items():
        ok(call(ids[:2])), ok(call(ids))  # conversations and subscriptions exist from here on
        one, many = queries(app, monkeypatch, lambda: call(ids[:2])), queries(app, monkeypatch, lambda: call(ids))
        assert one == many, f"{name}: {one} queries for two, {many} for {len(ids)}"
    subscribe = lambda names: hamlet.post("users/me/subscriptions", subscriptions=[{"name": n} for n in names])  # noqa: E731
    one, many = queries(app, monkeypatch, lambda: subscribe(channels[:1])), queries(app, monkeypatch, lambda: subscribe(channels))
    assert one == many, (one, many)  # Hamlet is in all three already
    one = queries(app, monkeypatch, lambda: hamlet.post("users/me/subscriptions/properties", subscription_data=pin[:1]))
    many = queries(app, monkeypatch, lambda: hamlet.post("users/me/subscriptions/properties", subscription_data=pin))
    assert many - one == len(pin) - 1, (one, many)  # one UPDATE per change; the lookups do not grow


def flags_of(client, message_id):
    return ok(client.get(f"messages/{message_id}"))["message"]["flags"]


def test_alert_words_are_bounded(org):
    """Can a user hold at most 1000 alert words of at most 100 characters, a request that would
    pass the limit adding none of its words?"""
    othello = org.client(org.othello)
    ok(othello.post("users/me/alert_words", alert_words=[f"word{i}" for i in range(600)]))
    body = err(othello.post("users/me/alert_words", alert_words=[f"more{i}" for i in range(401)]), 400, "BAD_REQUEST")
    assert "at most 1000 alert words" in body["msg"]
    assert len(ok(othello.get("users/me/alert_words"))["alert_words"]) == 600
    ok(othello.post("users/me/alert_words", alert_words=[f"more{i}" for i in range(400)] + ["WORD1"]))
    assert len(ok(othello.get("users/me/alert_words"))["alert_words"]) == 1000
    err(othello.post("users/me/alert_words", alert_words=["x" * 101]), 400, "BAD_REQUEST")
    err(othello.post("users/me/alert_words", alert_words=[f"w{i}" for i in range(1001)]), 400, "BAD_REQUEST")


def test_alert_word_matching_does_not_slow_with_the_number_of_words(app, org, monkeypatch):
    """With 1000 long alert words, does a long message still take about as long to send as with
    one word, is the flag right (whole words only, any case), are the words read from the
    database once rather than at every send, and does a change take effect at once?"""
    othello, hamlet = org.client(org.othello), org.client(org.hamlet)
    content = ("the quick brown fox jumps over the lazy dog; " * 200)[:9000] + " Needle."

    def send_timed():
        started = time.perf_counter()
        message_id = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content=content))["id"]
        return time.perf_counter() - started, message_id

    ok(othello.post("users/me/alert_words", alert_words=["zebra"]))
    send_timed()  # warm
    one_word = min(send_timed()[0] for _ in range(3))
    ok(othello.post("users/me/alert_words", alert_words=[f"{'abcdefghij' * 9}{i:04d}" for i in range(998)] + ["needle"]))
    send_timed()
    many_words, message_id = min(send_timed() for _ in range(3))
    assert "has_alert_word" in flags_of(othello, message_id)
    assert many_words < one_word * 3 + 0.05, (one_word, many_words)
    # Read once: a send reads no alert word until Othello's words change.
    reads = []
    db = app.extensions["chat_appliance"].runtime.database
    real = db.execute_sql
    monkeypatch.setattr(db, "execute_sql", lambda sql, *a, **k: (reads.append(sql), real(sql, *a, **k))[1])
    ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content="needles are not needle"))
    assert not [sql for sql in reads if "alert_word" in sql]
    monkeypatch.undo()
    ok(othello.delete("users/me/alert_words", alert_words=["needle"]))
    missed = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content="a needle"))["id"]
    assert "has_alert_word" not in flags_of(othello, missed)
    ok(othello.post("users/me/alert_words", alert_words=["Hay Stack"]))
    hit = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content="in the (hay stack)!"))["id"]
    assert "has_alert_word" in flags_of(othello, hit)
    inside = ok(hamlet.post("messages", type="stream", to="Denmark", topic="t", content="haystack hay stacks"))["id"]
    assert "has_alert_word" not in flags_of(othello, inside)


def test_deep_json_is_refused_everywhere(org, flask_client):
    """Does every incoming webhook answer 400 (never 500) to a body or a `payload` field nested
    990 deep, and does a parameter nested 33 deep get a 400 too?"""
    from chat_appliance.integrations import registry

    deep = "[" * 990 + "]" * 990
    for integration in sorted(registry()):
        path = f"/api/v1/external/{integration}"
        query = {"api_key": org.bot.api_key, "stream": "Denmark"}
        for response in (flask_client.post(path, query_string=query, data=deep, content_type="application/json"),
                         flask_client.post(path, query_string=query, data={"payload": deep})):
            assert response.status_code == 400, (integration, response.status_code)
            body = response.get_json()  # slack_incoming answers errors as Slack does: {"ok": false, "error": ...}
            assert "nested too deeply" in body.get("msg", body.get("error", "")), (integration, body)
    nested = "[" * 33 + "]" * 33
    err(org.client(org.hamlet).post("users/me/subscriptions", subscriptions=nested), 400, "BAD_REQUEST")


def all_models():
    """The live models (not the frozen ones the migrations define for themselves)."""
    import importlib
    import pkgutil

    import chat_appliance.models
    from chat_appliance.models.base import BaseModel

    for module in pkgutil.iter_modules(chat_appliance.models.__path__):
        importlib.import_module(f"chat_appliance.models.{module.name}")

    found, pending = [], [BaseModel]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub.__module__.startswith("chat_appliance.models"):
                found.append(sub)
            pending.append(sub)
    return found


def test_every_text_column_has_a_limit_that_writes_obey():
    """Does every text column of every model (CharField, TextField, JSON) have a limit in the one
    table (models/limits.py), and is a value one character past it refused by insert, update and
    save alike?"""
    from peewee import CharField, TextField

    from chat_appliance.models.limits import TextTooLongError, check_text_lengths, text_limit

    walked = 0
    for model in all_models():
        for field in model._meta.sorted_fields:
            if not isinstance(field, (CharField, TextField)):
                continue
            limit = text_limit(field)
            assert limit is not None, f"{model._meta.table_name}.{field.column_name} has no limit"
            check_text_lengths(model, {field: "x" * limit})
            with pytest.raises(TextTooLongError):
                check_text_lengths(model, {field.name: "x" * (limit + 1)})
            walked += 1
    assert walked > 80


def test_oversized_urls_and_choices_are_refused(org, app):
    """Are a bot's 2 MiB payload_url, a playground's 2 MiB url_template and 1 MB of profile
    field choices refused (413 past the form parser's per-field limit, 400 from the views' own
    bounds below it), storing nothing?"""
    app.config["OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES"] = True
    hamlet, admin = org.client(org.hamlet), org.client(org.admin)
    huge = "x" * (2 * 1024 * 1024)
    # Past the form parser's per-field limit (Werkzeug's 500 kB) it is a 413, before any view.
    err(hamlet.post("bots", full_name="Hook Bot", short_name="hook", bot_type=3,
                    payload_url=f"http://127.0.0.1:9/{huge}"), 413, "BAD_REQUEST", "A parameter is too long.")
    err(admin.post("realm/playgrounds", name="Big", pygments_language="Python",
                   url_template=f"https://play.example/{huge}?code={{code}}"), 413, "BAD_REQUEST")
    err(admin.post("realm/profile_fields", name="Team", hint="", field_type=3,
                   field_data=json.dumps({"a": {"text": "x" * 1_000_000, "order": "1"}})), 413, "BAD_REQUEST")
    big = "x" * 400_000
    err(hamlet.post("bots", full_name="Hook Bot", short_name="hook", bot_type=3,
                    payload_url=f"http://127.0.0.1:9/{big}"), 400, "BAD_REQUEST")
    err(admin.post("realm/profile_fields", name="Team", hint="", field_type=3,
                   field_data=json.dumps({"a": {"text": big, "order": "1"}})), 400, "BAD_REQUEST")
    state = ok(admin.post("register", fetch_event_types=["realm_bots", "realm_playgrounds", "custom_profile_fields"]))
    assert len(json.dumps(state)) < 100_000
