"""The bridge between `serve`'s event loop and the Flask app (chat_appliance/server/wsgi_bridge.py),
through a real server: large answers stream intact, non-ASCII paths arrive as sent, and bodies
over the limit are refused with Zulip's 413 without being read."""

import base64
import socket
from http import HTTPStatus

import pytest
import requests
from werkzeug.wrappers import Request

from chat_appliance.server.wsgi_bridge import build_environ

from ..support.serve_process import ServeProcess

# The status line the server writes: the reason phrase is Python's own, which 3.13 renamed
# ("Request Entity Too Large" became "Content Too Large").
TOO_LARGE = f"HTTP/1.1 413 {HTTPStatus.REQUEST_ENTITY_TOO_LARGE.phrase}"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One serve for the module's tests, which each send requests of their own and change nothing
    another reads."""
    # A 2 MiB upload limit makes the request body limit 3 MiB (the app keeps 1 MiB of room).
    proc = ServeProcess(tmp_path_factory.mktemp("bridge") / "instance",
                        env={"CHAT_APPLIANCE_MAX_FILE_UPLOAD_SIZE_MIB": "2", "CHAT_APPLIANCE_MAX_CONTENT_LENGTH": "1000"})
    yield proc
    proc.stop()


def basic(server):
    token = base64.b64encode(f"{server.email}:{server.api_key}".encode()).decode()
    return f"Authorization: Basic {token}\r\n"


def raw_request(server, head, body_chunks=()):
    """Send a hand-made request; (status line, headers and body as text) of the answer."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(head.encode("latin-1"))
        try:
            for chunk in body_chunks:
                sock.sendall(chunk)
        except OSError:
            pass  # the server may answer and close before the body is all sent
        received = b""
        while True:
            try:
                data = sock.recv(65536)
            except ConnectionResetError:
                break
            if not data:
                break
            received += data
    text = received.decode("latin-1")
    return text.split("\r\n", 1)[0], text


def test_large_download_streams_intact_with_a_non_ascii_name(server):
    """Does a file larger than the bridge's one-piece limit (1 MiB) come back byte for byte,
    with its length, under a name with non-ASCII letters?"""
    auth = (server.email, server.api_key)
    content = bytes(range(256)) * (6144 + 17)  # about 1.5 MiB, not a round number
    uploaded = requests.post(server.url + "/api/v1/user_uploads", auth=auth, timeout=30,
                             files={"file": ("data.bin", content)}).json()
    assert uploaded["result"] == "success", uploaded
    got = requests.get(server.url + uploaded["url"], auth=auth, timeout=30)
    assert got.status_code == 200
    assert int(got.headers["content-length"]) == len(content) and got.content == content


def test_declared_body_over_the_limit_is_refused_unread(server):
    """Is a request declaring a body over the limit answered 413 in Zulip's envelope at once,
    without the server waiting for the body, and the connection closed?"""
    status, text = raw_request(server, (
        "POST /api/v1/user_uploads HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
        f"{basic(server)}Content-Length: 104857600\r\n\r\n"))
    assert status == TOO_LARGE
    assert '"result":"error"' in text.replace(" ", "") and "connection: close" in text.lower()


def test_chunked_body_over_the_limit_is_refused(server):
    """Is a chunked body that grows past the limit refused with 413 once it passes it?"""
    piece = b"x" * 65536
    chunks = [b"%x\r\n%s\r\n" % (len(piece), piece)] * 64 + [b"0\r\n\r\n"]  # 4 MiB
    status, text = raw_request(server, (
        "POST /api/v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        f"{basic(server)}Transfer-Encoding: chunked\r\n\r\n"), chunks)
    assert status == TOO_LARGE
    assert '"result":"error"' in text.replace(" ", "")


def test_small_chunked_body_is_read_whole(server):
    """Does a chunked request body under the limit reach the app whole (a send succeeds)?"""
    body = f"type=stream&to=general&topic=chunked&content={'y' * 5000}".encode()
    pieces = [body[i:i + 1000] for i in range(0, len(body), 1000)]
    chunks = [b"%x\r\n%s\r\n" % (len(p), p) for p in pieces] + [b"0\r\n\r\n"]
    status, text = raw_request(server, (
        "POST /api/v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        f"{basic(server)}Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n"), chunks)
    assert status == "HTTP/1.1 200 OK", text
    assert '"result":"success"' in text.replace(" ", "")


def test_environ_follows_pep_3333():
    """Does the environ carry a non-ASCII path as WSGI requires (UTF-8 bytes as latin-1, which
    werkzeug decodes back), the query string, the client's address, repeated headers joined,
    and the body with its length?"""
    scope = {"type": "http", "method": "POST", "path": "/r\u00e9sum\u00e9", "root_path": "",
             "query_string": b"a=1&b=%C3%A9", "http_version": "1.1", "scheme": "http",
             "server": ("127.0.0.1", 9991), "client": ("10.1.2.3", 5555),
             "headers": [(b"host", b"example.test"), (b"x-thing", b"one"), (b"x-thing", b"two"),
                         (b"content-type", b"text/plain"), (b"transfer-encoding", b"chunked")]}
    environ = build_environ(scope, b"hello", 5)
    assert environ["PATH_INFO"] == "/r\xc3\xa9sum\xc3\xa9"
    request = Request(environ)
    assert request.path == "/r\u00e9sum\u00e9" and request.args["b"] == "\u00e9"
    assert request.remote_addr == "10.1.2.3" and request.host == "example.test"
    assert environ["HTTP_X_THING"] == "one,two" and "HTTP_TRANSFER_ENCODING" not in environ
    assert request.content_length == 5 and request.get_data() == b"hello"
