"""Linkifiers: GET /realm/linkifiers, POST/PATCH/DELETE /realm/filters, PATCH /realm/linkifiers."""

import pytest

from chat_appliance.lib.linkifiers import linkifiers_for_realm
from chat_appliance.lib.uri_template import InvalidTemplate, template_variables
from chat_appliance.models import database

from ..support.helpers import active_ids, err, ok

PATTERN = r"#(?P<id>[0-9]+)"
TEMPLATE = "https://github.com/zulip/zulip/issues/{id}"


def add(org, pattern=PATTERN, template=TEMPLATE):
    return ok(org.client(org.admin).post("realm/filters", pattern=pattern, url_template=template))["id"]


def test_add_and_list(org, events):
    """Does an administrator add a linkifier everyone lists, with realm_linkifiers to everyone?"""
    linkifier_id = add(org)
    assert ok(org.client(org.hamlet).get("realm/linkifiers"))["linkifiers"] == [
        {"id": linkifier_id, "pattern": PATTERN, "url_template": TEMPLATE}]
    event, ids = events.one("realm_linkifiers")
    assert event["realm_linkifiers"][0]["id"] == linkifier_id and ids == active_ids(org)


def test_member_cannot_add(org):
    """Is adding a linkifier refused to a member?"""
    err(org.client(org.hamlet).post("realm/filters", pattern=PATTERN, url_template=TEMPLATE), 400,
        "UNAUTHORIZED_PRINCIPAL", "Must be an organization administrator")


def test_validation(org):
    """Are a bad regex, a non-RFC-6570 template and mismatched group names refused?"""
    client = org.client(org.admin)
    err(client.post("realm/filters", pattern="#(?P<id>[0-9]+", url_template=TEMPLATE), 400, "BAD_REQUEST")
    err(client.post("realm/filters", pattern=PATTERN, url_template="https://x/{id"), 400, "BAD_REQUEST",
        "Invalid URL template.")
    err(client.post("realm/filters", pattern=PATTERN, url_template="https://x/{other}"), 400, "BAD_REQUEST")
    err(client.post("realm/filters", pattern=r"#(?P<id>\d+)-(?P<n>\d+)", url_template=TEMPLATE), 400,
        "BAD_REQUEST")


def test_uri_template_validator():
    """Does the RFC 6570 validator accept level 1-4 expressions and refuse broken ones?"""
    assert template_variables("https://x/{id}{?q,page}{#frag}{/a*}{.b:3}") == ["id", "q", "page", "frag", "a", "b"]
    for bad in ("https://x/{", "https://x/}", "https://x/{a b}", "https://x/{=a}", "a b/{x}", "x%zz{y}",
                "x/{a:0}"):
        with pytest.raises(InvalidTemplate):
            template_variables(bad)


def test_update_requires_both(org, events):
    """Does PATCH replace pattern and template, and require both?"""
    linkifier_id = add(org)
    client = org.client(org.admin)
    err(client.patch(f"realm/filters/{linkifier_id}", pattern=PATTERN), 400, "REQUEST_VARIABLE_MISSING")
    ok(client.patch(f"realm/filters/{linkifier_id}", pattern=r"T(?P<id>\d+)", url_template="https://t/{id}"))
    assert ok(client.get("realm/linkifiers"))["linkifiers"][0]["url_template"] == "https://t/{id}"
    assert len(events.of("realm_linkifiers")) == 2
    err(client.patch("realm/filters/999", pattern=PATTERN, url_template=TEMPLATE), 400, "BAD_REQUEST")


def test_remove(org):
    """Does DELETE remove a linkifier?"""
    linkifier_id = add(org)
    ok(org.client(org.admin).delete(f"realm/filters/{linkifier_id}"))
    assert ok(org.client(org.admin).get("realm/linkifiers"))["linkifiers"] == []


def test_reorder_and_renderer_order(org):
    """Does PATCH /realm/linkifiers set the order linkifiers_for_realm returns, refusing a wrong id set?"""
    first = add(org)
    second = add(org, r"T(?P<id>\d+)", "https://t/{id}")
    client = org.client(org.admin)
    ok(client.patch("realm/linkifiers", ordered_linkifier_ids=[second, first]))
    assert [l["id"] for l in ok(client.get("realm/linkifiers"))["linkifiers"]] == [second, first]
    with database.connection_context():
        assert linkifiers_for_realm(org.realm.id) == [(r"T(?P<id>\d+)", "https://t/{id}"), (PATTERN, TEMPLATE)]
    err(client.patch("realm/linkifiers", ordered_linkifier_ids=[first]), 400, "BAD_REQUEST")
