"""End to end: `serve` with TLS on. Your own certificate (TLS_CERT_FILE and TLS_KEY_FILE) with
its SIGHUP reload, and a certificate from ACME (TLS_DOMAIN) on pebble, Let's Encrypt's test
server, which validates HTTP-01 for real against the server's HTTP port through
pebble-challtestsrv as its DNS.

The test process reaches https://chat.test:PORT as curl's --resolve does: it connects to
127.0.0.1, sends chat.test as SNI and checks the certificate for that name."""

import signal
import socket
import ssl
import subprocess
import sys
import time
from urllib.parse import urlsplit, urlunsplit

import pytest
import requests
from cryptography import x509
from requests.adapters import HTTPAdapter

from .pebble import AVAILABLE, MISSING, CertificateAuthority
from .serve_process import ServeProcess, free_port

pytestmark = pytest.mark.e2e

DOMAIN = "chat.test"


def peer_certificate(port, cafile, name=DOMAIN):
    """The certificate a new handshake on 127.0.0.1:port gets with `name` as SNI, verified."""
    context = ssl.create_default_context(cafile=str(cafile))
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        with context.wrap_socket(sock, server_hostname=name) as connection:
            return x509.load_der_x509_certificate(connection.getpeercert(binary_form=True))


class ResolveToLoopback(HTTPAdapter):
    """Sends https://DOMAIN:PORT requests to 127.0.0.1:PORT, with DOMAIN as SNI, as Host, and
    as the name the certificate must carry."""

    def __init__(self, domain):
        self.domain = domain
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        kwargs.update(server_hostname=self.domain, assert_hostname=self.domain)
        return super().init_poolmanager(*args, **kwargs)

    def send(self, request, **kwargs):
        parts = urlsplit(request.url)
        if parts.hostname == self.domain:
            request.headers["Host"] = parts.netloc
            request.url = urlunsplit(parts._replace(netloc=f"127.0.0.1:{parts.port or 443}"))
        return super().send(request, **kwargs)


def https_session(cafile, session=None):
    """A session (or the zulip library's) trusting `cafile` alone: requests would let
    REQUESTS_CA_BUNDLE or CURL_CA_BUNDLE, set on many machines, win over the session's own."""
    session = session or requests.Session()
    session.verify = str(cafile)
    session.trust_env = False
    session.mount("https://", ResolveToLoopback(DOMAIN))
    return session


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError(f"{what} did not happen within {timeout} s")


def lines_with(server, text):
    return [line for line in server.output if text in line]


def test_own_certificate_served_reloaded_on_sighup_and_a_broken_pair_refused(tmp_path):
    """With TLS_CERT_FILE and TLS_KEY_FILE: is the pair served over HTTPS with HSTS, does the HTTP
    port redirect to the request's host without its port, does SIGHUP give new handshakes a new
    pair within 5 s while an open connection goes on, does a broken pair on SIGHUP keep the old
    one serving with one line naming the file, and does a broken pair at start exit non-zero with
    one line naming it and no traceback?"""
    authority = CertificateAuthority()
    cafile, cert, key = tmp_path / "ca.pem", tmp_path / "own.crt", tmp_path / "own.key"
    cafile.write_bytes(authority.pem())
    first = authority.issue(cert, key, DOMAIN)
    http_port, https_port = free_port(), free_port()
    listen = ["--http-port", str(http_port), "--https-port", str(https_port)]
    env = {"CHAT_APPLIANCE_TLS_CERT_FILE": str(cert), "CHAT_APPLIANCE_TLS_KEY_FILE": str(key)}
    server = ServeProcess(tmp_path / "instance", listen=listen, env=env,
                          ready=lambda: peer_certificate(https_port, cafile))
    base = f"https://{DOMAIN}:{https_port}"
    try:
        session = https_session(cafile)
        answer = session.get(base + "/api/v1/server_settings", timeout=10)
        assert answer.status_code == 200
        assert answer.json()["realm_url"] == f"https://127.0.0.1:{https_port}"
        assert int(answer.headers["Strict-Transport-Security"].split("max-age=")[1]) >= 86400
        moved = requests.get(f"http://127.0.0.1:{http_port}/api/v1/server_settings?x=1",
                             headers={"Host": f"{DOMAIN}:{http_port}"}, allow_redirects=False, timeout=10)
        assert moved.status_code in (301, 308)
        assert moved.headers["Location"] == f"https://{DOMAIN}/api/v1/server_settings?x=1"
        assert "result" not in moved.text  # the app is not served over plain HTTP

        # A connection opened before the reload, kept alive across it.
        context = ssl.create_default_context(cafile=str(cafile))
        held = context.wrap_socket(socket.create_connection(("127.0.0.1", https_port), timeout=5),
                                   server_hostname=DOMAIN)
        request = f"GET /api/v1/server_settings HTTP/1.1\r\nHost: {DOMAIN}\r\n\r\n".encode()
        held.sendall(request)
        assert held.recv(65536).startswith(b"HTTP/1.1 200")

        second = authority.issue(cert, key, DOMAIN)
        assert second != first
        server.process.send_signal(signal.SIGHUP)
        wait_for(lambda: peer_certificate(https_port, cafile).serial_number == second, 5, "the new certificate")
        held.sendall(request)
        assert held.recv(65536).startswith(b"HTTP/1.1 200")
        assert x509.load_der_x509_certificate(held.getpeercert(binary_form=True)).serial_number == first
        held.close()

        cert.write_text("not a certificate\n")
        server.process.send_signal(signal.SIGHUP)
        kept = wait_for(lambda: lines_with(server, "SIGHUP: kept"), 5, "the refusal")
        assert len(kept) == 1 and str(cert) in kept[0]
        assert peer_certificate(https_port, cafile).serial_number == second
        assert session.get(base + "/api/v1/server_settings", timeout=10).status_code == 200
    finally:
        assert server.stop() == 0
    assert not lines_with(server, "Traceback")

    started = subprocess.run(
        [sys.executable, "-m", "chat_appliance", "serve", "--instance", str(tmp_path / "instance"), "--quiet",
         *listen], capture_output=True, text=True, timeout=60,
        env={**__import__("os").environ, **env})
    assert started.returncode != 0
    errors = [line for line in started.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and str(cert) in errors[0]
    assert "Traceback" not in started.stderr + started.stdout


def test_tls_settings_that_cannot_work_are_refused_in_one_line(tmp_path):
    """Are a comma in TLS_DOMAIN, --port with TLS on, and a certificate without its key each
    refused before serving, with one clear line?"""
    import os

    def serve(*args, **env):
        return subprocess.run([sys.executable, "-m", "chat_appliance", "serve", "--instance", str(tmp_path / "i"),
                               *args], capture_output=True, text=True, timeout=60,
                              env={**os.environ, **{f"CHAT_APPLIANCE_{k}": v for k, v in env.items()}})

    comma = serve(TLS_DOMAIN="chat.test,www.chat.test")
    port = serve("--port", "8443", TLS_DOMAIN="chat.test")
    alone = serve(TLS_CERT_FILE=str(tmp_path / "x.crt"))
    for result, said in ((comma, "TLS_DOMAIN takes one DNS name"), (port, "--port serves plain HTTP"),
                         (alone, "TLS_CERT_FILE and TLS_KEY_FILE go together")):
        assert result.returncode == 1
        assert result.stderr.strip().splitlines()[-1].startswith(f"error: {said}"), result.stderr
