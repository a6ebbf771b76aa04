"""Slow and greedy clients against a real `serve`, as a fault-injection run sends them: request
headers and bodies that arrive too slowly are timed out (REQUEST_READ_TIMEOUT_SECONDS), and one
address holds at most MAX_CONNECTIONS_PER_CLIENT connections."""

import socket
import time

import pytest
import requests

from ..support.serve_process import ServeProcess

TIMEOUT = 2


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    import os

    saved = dict(os.environ)
    os.environ["CHAT_APPLIANCE_REQUEST_READ_TIMEOUT_SECONDS"] = str(TIMEOUT)
    os.environ["CHAT_APPLIANCE_MAX_CONNECTIONS_PER_CLIENT"] = "4"
    try:
        # On every address, so that the cap can be tried from one that is not loopback.
        proc = ServeProcess(tmp_path_factory.mktemp("slow") / "instance", "--host", "0.0.0.0")
    finally:
        os.environ.clear()
        os.environ.update(saved)
    yield proc
    proc.stop()


def read_all(sock, limit=30):
    """Everything the server sends until it closes the connection; raises TimeoutError if it is
    still open after `limit` seconds."""
    sock.settimeout(limit)
    data = b""
    while True:
        try:
            piece = sock.recv(65536)
        except ConnectionResetError:
            return data
        except TimeoutError:
            raise TimeoutError(f"the server kept the connection open for {limit} s") from None
        if not piece:
            return data
        data += piece


def test_headers_sent_a_byte_at_a_time_are_timed_out(server):
    """Is a connection whose request headers never complete closed after the read timeout?"""
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        started = time.monotonic()
        sock.sendall(b"GET /api/v1/server_settings HTTP/1.1\r\nHost: x\r\n")
        for _ in range(6 * TIMEOUT):
            try:
                sock.sendall(b"X")
            except OSError:
                break
            time.sleep(0.5)
            if time.monotonic() - started > 4 * TIMEOUT:
                break
        assert read_all(sock, limit=2 * TIMEOUT) == b""
        assert time.monotonic() - started < 5 * TIMEOUT


def test_a_body_trickling_in_is_answered_408(server):
    """Is a request body that arrives at a few bytes a second answered 408 REQUEST_TIMEOUT and its
    connection closed, instead of being waited for forever?"""
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        started = time.monotonic()
        sock.sendall(b"POST /api/v1/fetch_api_key HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded"
                     b"\r\nContent-Length: 1000\r\n\r\n")
        answer = b""
        for _ in range(40):
            try:
                sock.sendall(b"u")
            except OSError:
                break
            sock.settimeout(0.25)
            try:
                answer += sock.recv(65536)
            except TimeoutError:
                continue
            if answer:
                break
        answer += read_all(sock, limit=2)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b'"code": "REQUEST_TIMEOUT"' in answer and b"connection: close" in answer.lower()
    assert time.monotonic() - started < 4 * TIMEOUT


def test_a_steady_body_is_read(server):
    """Control: does an ordinary request with a body still get its answer?"""
    response = requests.post(server.url + "/api/v1/fetch_api_key", data={"username": "x@y.z", "password": "p"},
                             timeout=10)
    assert response.status_code in (401, 403)


def outward_address():
    """This machine's address on its network (not loopback, which is never capped), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks a source address
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def status_of(address, port):
    with socket.create_connection((address, port)) as sock:
        sock.sendall(b"GET /api/v1/server_settings HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        return read_all(sock, limit=5)[:12]


def test_connections_per_address_are_capped(server):
    """Is a fifth open connection from one (non-loopback) address answered 429 and closed, does a
    connection work again once one of the four has closed, and is loopback (a local reverse
    proxy) never capped?"""
    address = outward_address()
    if address is None:
        pytest.skip("no network address besides loopback")
    held = [socket.create_connection((address, server.port)) for _ in range(4)]
    try:
        time.sleep(0.2)
        with socket.create_connection((address, server.port)) as extra:
            extra.sendall(b"GET /api/v1/server_settings HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = read_all(extra, limit=5)
        assert answer.startswith(b"HTTP/1.1 429"), answer[:200]
        assert b"Too many open connections" in answer
        local = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(6)]
        assert status_of("127.0.0.1", server.port) == b"HTTP/1.1 200"
        for sock in local:
            sock.close()
        held.pop().close()
        time.sleep(0.3)
        assert status_of(address, server.port) == b"HTTP/1.1 200"
    finally:
        for sock in held:
            sock.close()
