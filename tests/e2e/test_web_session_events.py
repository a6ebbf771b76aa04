"""End to end: the web client's session on a real `serve`, whose event loop answers /json/events
natively (chat_appliance/server/asgi.py) with the session check of lib/sessions."""

import re

import pytest
import requests

from ..support.serve_process import ServeProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    proc = ServeProcess(tmp_path_factory.mktemp("websessions") / "instance")
    proc.password = re.search(r"password:\s+(\S+)", "".join(proc.output)).group(1)
    yield proc
    proc.stop()


def signed_in(server):
    session = requests.Session()
    body = session.post(f"{server.url}/accounts/login", data={"username": server.email, "password": server.password},
                        headers={"X-Requested-With": "XMLHttpRequest"}, timeout=30).json()
    assert body["result"] == "success", body
    return session, body["csrf_token"]


def test_json_events_on_the_event_loop(server):
    """Does the native /json/events long poll deliver a message to the signed-in browser session,
    refuse a poll without the CSRF token (403) or without the cookie (401, with no Basic challenge
    that would open the browser's password dialog), and delete the queue with the token?"""
    session, csrf = signed_in(server)
    headers = {"X-CSRFToken": csrf}
    queue = session.post(f"{server.url}/json/register", headers=headers, timeout=30,
                         data={"event_types": '["message"]', "apply_markdown": "true"}).json()
    requests.post(f"{server.url}/api/v1/messages", auth=(server.email, server.api_key), timeout=30,
                  data={"type": "stream", "to": "general", "topic": "loop", "content": "over the loop"})
    params = {"queue_id": queue["queue_id"], "last_event_id": "-1"}
    body = session.get(f"{server.url}/json/events", params=params, headers=headers, timeout=60).json()
    assert [e["message"]["content"] for e in body["events"] if e["type"] == "message"] == ["<p>over the loop</p>"]
    refused = session.get(f"{server.url}/json/events", params=params, timeout=30)
    assert refused.status_code == 403 and refused.json()["code"] == "CSRF_FAILED"
    anonymous = requests.get(f"{server.url}/json/events", params=params, headers=headers, timeout=30)
    assert anonymous.status_code == 401 and "WWW-Authenticate" not in anonymous.headers
    deleted = session.delete(f"{server.url}/json/events", data={"queue_id": queue["queue_id"]}, headers=headers,
                             timeout=30)
    assert deleted.json()["result"] == "success"
    gone = session.get(f"{server.url}/json/events", params=params, headers=headers, timeout=30)
    assert gone.status_code == 400 and gone.json()["code"] == "BAD_EVENT_QUEUE_ID"


def test_api_v1_events_ignore_the_session(server):
    """Does /api/v1/events on the event loop stay HTTP Basic only, refusing a session cookie?"""
    session, csrf = signed_in(server)
    response = session.get(f"{server.url}/api/v1/events", params={"queue_id": "x", "last_event_id": "-1"},
                           headers={"X-CSRFToken": csrf}, timeout=30)
    assert response.status_code == 401
