"""NUL bytes (0x00), which PostgreSQL refuses in text, are a clear 4xx wherever they arrive:
parameters, values inside JSON parameters, credentials, URL paths and uploaded file names."""

import base64
import io
import json

import pytest

from ..support.helpers import ok, send


def assert_client_error(response):
    body = response.get_json()
    assert 400 <= response.status_code < 500, (response.status_code, body)
    assert body["result"] == "error"


@pytest.mark.parametrize("params", [
    {"type": "stream", "to": "Denmark", "topic": "a\x00b", "content": "x"},
    {"type": "stream", "to": "Denmark", "topic": "t", "content": "nul\x00here"},
    {"type": "stream", "to": json.dumps(["Den\u0000mark"]), "topic": "t", "content": "x"},
    {"type": "direct", "to": json.dumps(["hamlet@zulip.example\u0000"]), "content": "x"},
])
def test_send_with_nul_is_refused(org, params):
    """Is a message whose fields carry a NUL, directly or inside JSON, refused with a 4xx?"""
    assert_client_error(org.client(org.hamlet).post("messages", **params))


@pytest.mark.parametrize("narrow", [
    [["search", "a\u0000b"]], [["channel", "Den\u0000mark"]], [["topic", "x\u0000"]], [["sender", "a\u0000@b"]],
    [{"operator": "dm", "operand": ["hamlet@zulip.example\u0000"]}],
])
def test_narrow_with_nul_is_an_answer_not_a_crash(org, narrow):
    """Does a narrow with a NUL inside its JSON give an answer or a 4xx, never a 500?"""
    send(org.client(org.hamlet), content="hello")
    response = org.client(org.hamlet).get("messages", anchor="newest", num_before=5, num_after=0,
                                          narrow=json.dumps(narrow))
    assert response.status_code < 500, response.get_json()


def test_nul_in_credentials_path_and_file_name(org):
    """Are NULs in the HTTP Basic user name, in a URL path and in an uploaded file's name a 4xx?"""
    token = base64.b64encode(f"hamlet@zulip.example\x00:{org.hamlet.api_key}".encode()).decode()
    response = org.flask_client.get("/api/v1/users/me", headers={"Authorization": f"Basic {token}"})
    assert_client_error(response)
    hamlet = org.client(org.hamlet)
    assert_client_error(hamlet.get("users/a%00b@zulip.example"))
    assert_client_error(hamlet.get("get_stream_id", stream="Den\x00mark"))
    response = org.flask_client.post("/api/v1/user_uploads", headers=hamlet.headers,
                                     data={"file": (io.BytesIO(b"data"), "a\x00b.txt")})
    assert response.status_code < 500, response.get_json()
    ok(hamlet.get("users/me"))
