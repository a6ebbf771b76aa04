"""Linkifier patterns run in linear time: RE2, at save time and at render time."""

import time

from chat_appliance.markdown import RenderContext, render, topic_links
from chat_appliance.models import Linkifier, database

from ..support.helpers import content_of, err, ok, send


def timed(function, *args):
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def test_a_backtracking_pattern_renders_in_linear_time():
    """Does a nested-quantifier pattern (exponential for a backtracking engine: seconds at 26
    characters, doubling with each) render a message and a topic of 40 `a`s in milliseconds?"""
    text = "a" * 40
    for pattern in (r"(?P<id>(a+)+)c", r"(?P<id>(\w+\s?)+)c"):
        context = RenderContext(linkifiers=[(pattern, "https://tracker.example.com/{id}")])
        _, seconds = timed(render, text, context)
        assert seconds < 0.5, (pattern, seconds)
        _, seconds = timed(topic_links, text, context)
        assert seconds < 0.5, (pattern, seconds)
    context = RenderContext(linkifiers=[(r"(?P<id>(a+)+)c", "https://tracker.example.com/{id}")])
    assert 'href="https://tracker.example.com/aa"' in render("see aac here", context).html


def test_a_stored_backtracking_pattern_does_not_stall_a_send(org):
    """Is a message from a member fast, and its topic's links right, when the organization holds
    a pattern that backtracks exponentially under Python's re?"""
    with database.connection_context():
        Linkifier.create(realm=org.realm.id, pattern=r"(?P<id>(a+)+)c", url_template="https://t.example.com/{id}",
                         order=1)
    client = org.client(org.hamlet)
    send(client, "Denmark", "the first message loads the renderer", "warm")
    start = time.perf_counter()
    message_id = send(client, "Denmark", "a" * 40, "a" * 40)
    assert time.perf_counter() - start < 1.0
    ok(client.get(f"messages/{message_id}"))
    message_id = send(client, "Denmark", "see aac", "ticket aac and #1")
    assert 'href="https://t.example.com/aa"' in content_of(client, message_id)
    message = ok(client.get(f"messages/{message_id}"))["message"]
    assert message["topic_links"] == [{"text": "aac", "url": "https://t.example.com/aa"}]


def test_patterns_re2_refuses_are_refused_with_zulips_wording(org):
    """Are look-around and backreferences (which only a backtracking engine runs) refused when a
    linkifier is saved, in Zulip's words?"""
    admin = org.client(org.admin)
    err(admin.post("realm/filters", pattern=r"(?<!x)#(?P<id>\d+)", url_template="https://t/{id}"), 400,
        "BAD_REQUEST", "Bad regular expression: invalid perl operator: (?<!")
    err(admin.post("realm/filters", pattern=r"(?P<id>a)\1", url_template="https://t/{id}"), 400,
        "BAD_REQUEST", "Bad regular expression: invalid escape sequence: \\1")
    linkifier_id = ok(admin.post("realm/filters", pattern=r"#(?P<id>\d+)", url_template="https://t/{id}"))["id"]
    err(admin.patch(f"realm/filters/{linkifier_id}", pattern=r"#(?P<id>\d+)(?=x)", url_template="https://t/{id}"),
        400, "BAD_REQUEST", "Bad regular expression: invalid perl operator: (?=")


def test_matches_next_to_each_other_and_unicode_spaces():
    """Do matches separated by one delimiter each link (the delimiter after one match starts the
    next), in messages and topics, and does a Unicode space count as a space?"""
    context = RenderContext(linkifiers=[(r"#(?P<id>\d+)", "https://t.example.com/{id}")])
    html = render("#1 #2,#3\u00a0#4", context).html
    for n in (1, 2, 3, 4):
        assert f'href="https://t.example.com/{n}"' in html
    assert [link["text"] for link in topic_links("#1 #2,#3", context)] == ["#1", "#2", "#3"]
    assert "href" not in render("x#1 #1a", context).html
