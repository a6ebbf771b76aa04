"""The two calls of zulip-js (the npm client) that Zulip itself no longer answers."""

from ..support.helpers import err


def test_typing_with_emails_says_emails_are_refused(org):
    """Does typing.send with emails (removed at Zulip feature level 11) say that emails are no
    longer accepted, rather than that the value is not JSON?"""
    client = org.client(org.hamlet)
    for to in ('["othello@zulip.example"]', "othello@zulip.example"):
        body = err(client.post("typing", op="start", to=to), 400, "BAD_REQUEST")
        assert "emails are no longer accepted" in body["msg"]


def test_get_realm_filters_is_method_not_allowed(org):
    """Does GET /realm/filters answer as Zulip does since it removed it: 405 Method Not Allowed,
    with the methods the path still answers in Allow?"""
    response = org.client(org.hamlet).get("realm/filters")
    assert response.status_code == 405
    body = response.get_json()
    assert (body["result"], body["msg"]) == ("error", "Method Not Allowed")
    assert "POST" in response.headers["Allow"] and "GET" not in response.headers["Allow"]
