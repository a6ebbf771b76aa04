"""End to end: `serve` with TLS on. Your own certificate (TLS_CERT_FILE and TLS_KEY_FILE) with
its SIGHUP reload, and a certificate from ACME (TLS_DOMAIN) on pebble, Let's Encrypt's test
server, which validates HTTP-01 for real against the server's HTTP port through
pebble-challtestsrv as its DNS.

The test process reaches https://chat.test:PORT as curl's --resolve does: it connects to
127.0.0.1, sends chat.test as SNI and checks the certificate for that name."""

import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tarfile
import threading
import time
from urllib.parse import urlsplit, urlunsplit

import pytest
import requests
from cryptography import x509
from requests.adapters import HTTPAdapter

import zulip

from ..support.pebble import AVAILABLE, MISSING, CertificateAuthority, ChallTestSrv, Pebble
from ..support.serve_process import ServeProcess, free_port

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
        [sys.executable, "-m", "chat_appliance", "serve", "--instance", str(tmp_path / "instance"), "--create",
         "--quiet",
         *listen], capture_output=True, text=True, timeout=60,
        env={**os.environ, **env})
    assert started.returncode != 0
    errors = [line for line in started.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and str(cert) in errors[0]
    assert "Traceback" not in started.stderr + started.stdout


def test_tls_domain_sets_the_address_of_an_organization_made_without_tls(tmp_path):
    """On an organization the plain quick start made, does a start with TLS_DOMAIN (and your own
    certificate, so no ACME server is contacted) make realm_url exactly https://TLS_DOMAIN, and
    redirect plain HTTP there?"""
    instance = tmp_path / "instance"
    ServeProcess(instance).stop()
    authority = CertificateAuthority()
    cafile, cert, key = tmp_path / "ca.pem", tmp_path / "own.crt", tmp_path / "own.key"
    cafile.write_bytes(authority.pem())
    authority.issue(cert, key, DOMAIN)
    http_port, https_port = free_port(), free_port()
    server = ServeProcess(instance, listen=["--http-port", str(http_port), "--https-port", str(https_port)],
                          ready=lambda: peer_certificate(https_port, cafile),
                          env={"CHAT_APPLIANCE_TLS_DOMAIN": DOMAIN, "CHAT_APPLIANCE_TLS_CERT_FILE": str(cert),
                               "CHAT_APPLIANCE_TLS_KEY_FILE": str(key),
                               "CHAT_APPLIANCE_ACME_DIRECTORY": "https://127.0.0.1:1/never-asked"})
    try:
        answer = https_session(cafile).get(f"https://{DOMAIN}:{https_port}/api/v1/server_settings", timeout=10)
        assert answer.json()["realm_url"] == f"https://{DOMAIN}"
        moved = requests.get(f"http://127.0.0.1:{http_port}/login/?next=x", allow_redirects=False, timeout=10)
        assert moved.headers["Location"] == f"https://{DOMAIN}/login/?next=x"
    finally:
        assert server.stop() == 0
    assert not lines_with(server, "ACME:")


def test_tls_settings_that_cannot_work_are_refused_in_one_line(tmp_path):
    """Are a comma in TLS_DOMAIN, --port with TLS on, and a certificate without its key each
    refused before serving, with one clear line?"""
    def serve(*args, **env):
        return subprocess.run([sys.executable, "-m", "chat_appliance", "serve", "--instance", str(tmp_path / "i"),
                               "--create", *args], capture_output=True, text=True, timeout=60,
                              env={**os.environ, **{f"CHAT_APPLIANCE_{k}": v for k, v in env.items()}})

    comma = serve(TLS_DOMAIN="chat.test,www.chat.test")
    port = serve("--port", "8443", TLS_DOMAIN="chat.test")
    alone = serve(TLS_CERT_FILE=str(tmp_path / "x.crt"))
    for result, said in ((comma, "TLS_DOMAIN takes one DNS name"), (port, "--port serves plain HTTP"),
                         (alone, "TLS_CERT_FILE and TLS_KEY_FILE go together")):
        assert result.returncode == 1
        assert result.stderr.strip().splitlines()[-1].startswith(f"error: {said}"), result.stderr


# --- ACME on pebble -------------------------------------------------------------------------------

needs_pebble = pytest.mark.skipif(not AVAILABLE, reason=MISSING)
# The servers on the module's pebble listen for HTTP-01 on this one port, which its configuration names.
HTTP_PORT = free_port()


@pytest.fixture(scope="module")
def dns():
    if not AVAILABLE:
        pytest.skip(MISSING)
    server = ChallTestSrv()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def pebble(dns, tmp_path_factory):
    server = Pebble(tmp_path_factory.mktemp("pebble"), dns, HTTP_PORT)
    yield server
    server.stop()


def acme_serve(instance, pebble_server, https_port, directory=None, http_port=HTTP_PORT, **env):
    """`serve` with TLS_DOMAIN on pebble; ready once its HTTPS port accepts connections (with or
    without a certificate yet)."""
    def listening():
        socket.create_connection(("127.0.0.1", https_port), timeout=1).close()

    variables = {"TLS_DOMAIN": DOMAIN, "ACME_DIRECTORY": directory or pebble_server.directory,
                 "ACME_CA_BUNDLE": str(pebble_server.ca_bundle), **env}
    return ServeProcess(instance, listen=["--http-port", str(http_port), "--https-port", str(https_port)],
                        ready=listening, env={f"CHAT_APPLIANCE_{k}": str(v) for k, v in variables.items()})


def served_serial(https_port, root):
    """The serial of the certificate a new handshake gets, or None while none verifies."""
    try:
        return peer_certificate(https_port, root).serial_number
    except (ssl.SSLError, OSError):
        return None


class AcmeSite:
    def __init__(self, folder, pebble_server):
        self.folder = folder
        self.instance = folder / "instance"
        self.https_port = free_port()
        self.base = f"https://{DOMAIN}:{self.https_port}"
        started = time.monotonic()
        self.server = acme_serve(self.instance, pebble_server, self.https_port)
        self.root = folder / "pebble-root.pem"
        self.root.write_bytes(pebble_server.issuing_root())
        self.serial = wait_for(lambda: served_serial(self.https_port, self.root), 60, "a certificate from pebble")
        self.seconds = time.monotonic() - started
        self.credentials = (self.server.email, self.server.api_key)

    def client(self):
        return zulip_client(self.base, self.root, self.credentials)


class LoopbackClient(zulip.Client):
    """The zulip library's client, unchanged but for its session reaching DOMAIN on 127.0.0.1
    (it asks /server_settings from its constructor on)."""

    def ensure_session(self):
        fresh = self.session is None
        super().ensure_session()
        if fresh:
            https_session(self.tls_verification, self.session)


def zulip_client(base, root, credentials):
    """The zulip library's client on `base`, trusting `root` alone as its CA bundle."""
    return LoopbackClient(email=credentials[0], api_key=credentials[1], site=base, cert_bundle=str(root))


@pytest.fixture(scope="module")
def site(pebble, tmp_path_factory):
    running = AcmeSite(tmp_path_factory.mktemp("acme"), pebble)
    yield running
    running.server.stop()


@needs_pebble
def test_certificate_from_acme_within_a_minute_with_the_api_and_realm_url_over_https(site):
    """With TLS_DOMAIN alone, does `serve` get a certificate from pebble (HTTP-01 validated for
    real) within 60 s, serve the API over HTTPS with HSTS, and give the organization the address
    https://TLS_DOMAIN exactly?"""
    assert site.seconds < 60
    assert DOMAIN in peer_certificate(site.https_port, site.root).extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName)
    answer = https_session(site.root).get(site.base + "/api/v1/server_settings", timeout=10)
    assert answer.status_code == 200 and answer.json()["realm_url"] == f"https://{DOMAIN}"
    assert int(answer.headers["Strict-Transport-Security"].split("max-age=")[1]) >= 86400
    obtained = lines_with(site.server, "ACME: obtained a certificate")
    assert len(obtained) == 1 and not lines_with(site.server, "Traceback")


@needs_pebble
def test_the_http_port_answers_challenges_and_redirects_the_rest(site):
    """Does the HTTP port redirect every other request to https://TLS_DOMAIN with path and query
    and no port, whatever the Host, answer the challenge path (404 for an unknown token) for any
    Host, and never serve the app?"""
    for host in (f"{DOMAIN}:{HTTP_PORT}", "127.0.0.1", "elsewhere.example"):
        moved = requests.post(f"http://127.0.0.1:{HTTP_PORT}/api/v1/messages?a=1&b=%20", headers={"Host": host},
                              allow_redirects=False, timeout=10)
        assert moved.status_code in (301, 308)
        assert moved.headers["Location"] == f"https://{DOMAIN}/api/v1/messages?a=1&b=%20"
        unknown = requests.get(f"http://127.0.0.1:{HTTP_PORT}/.well-known/acme-challenge/nothing",
                               headers={"Host": host}, allow_redirects=False, timeout=10)
        assert unknown.status_code == 404


@needs_pebble
def test_keys_are_private_and_in_backups(site):
    """Are the ACME account key, the certificate's key and its chain stored under the instance
    folder with mode 0600, and does `chat-appliance backup` include them, restored as they were?"""
    folder = site.instance / "tls"
    names = {path.name for path in folder.iterdir()}
    assert {"acme-account.key", f"{DOMAIN}.key", f"{DOMAIN}.crt"} <= names
    for path in folder.iterdir():
        assert path.stat().st_mode & 0o777 == 0o600, path
    archive = site.folder / "backup.tar.gz"
    made = subprocess.run([sys.executable, "-m", "chat_appliance", "backup", str(archive), "--instance",
                           str(site.instance)], capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    with tarfile.open(archive) as opened:
        stored = {member.name: opened.extractfile(member).read() for member in opened.getmembers()
                  if member.name.startswith("tls/")}
    assert stored[f"tls/{DOMAIN}.key"] == (folder / f"{DOMAIN}.key").read_bytes()
    assert "tls/acme-account.key" in stored
    restored = site.folder / "restored"
    unpacked = subprocess.run([sys.executable, "-m", "chat_appliance", "restore", str(archive), "--instance",
                               str(restored)], capture_output=True, text=True, timeout=60)
    assert unpacked.returncode == 0, unpacked.stderr
    for name, data in stored.items():
        assert (restored / name).read_bytes() == data and (restored / name).stat().st_mode & 0o777 == 0o600


@needs_pebble
def test_a_long_poll_and_the_zulip_library_over_https(site):
    """Does the zulip library, trusting pebble's root alone, register, wait in a long poll and
    receive the message it sends, all over HTTPS?"""
    poller, sender = site.client(), site.client()
    queue = poller.register(event_types=["message"])
    assert queue["result"] == "success", queue
    received = {}
    waiting = threading.Thread(target=lambda: received.update(
        poller.get_events(queue_id=queue["queue_id"], last_event_id=queue["last_event_id"])))
    waiting.start()
    time.sleep(0.5)
    sent = sender.send_message({"type": "stream", "to": "general", "topic": "tls", "content": "over https"})
    assert sent["result"] == "success", sent
    waiting.join(timeout=20)
    assert [e["message"]["id"] for e in received["events"] if e["type"] == "message"] == [sent["id"]]
    fetched = sender.get_messages({"anchor": sent["id"], "num_before": 0, "num_after": 0})
    assert fetched["messages"][0]["content"] == "<p>over https</p>"


@needs_pebble
def test_a_restart_serves_the_stored_certificate_at_once(site, pebble):
    """After a restart with a stored certificate not yet due, is it served from the first
    handshake, with no new order and no new account, and does SIGHUP leave it serving?"""
    account = (site.instance / "tls" / "acme-account.json").read_bytes()
    site.server.stop()
    site.server = acme_serve(site.instance, pebble, site.https_port)
    assert served_serial(site.https_port, site.root) == site.serial
    assert lines_with(site.server, f"Serving the stored certificate for {DOMAIN}")
    site.server.process.send_signal(signal.SIGHUP)  # `systemctl reload`: it goes on serving
    wait_for(lambda: lines_with(site.server, "SIGHUP:"), 5, "SIGHUP's answer")
    assert site.server.process.poll() is None and served_serial(site.https_port, site.root) == site.serial
    assert not lines_with(site.server, "ACME:")
    assert (site.instance / "tls" / "acme-account.json").read_bytes() == account


@needs_pebble
def test_a_failed_validation_is_one_line_and_waits_at_least_a_minute(site, pebble, tmp_path):
    """When pebble cannot validate (it asks the module's HTTP port, where this server is not),
    does `serve` keep serving its HTTP port, print one line naming the directory and the reason,
    and wait at least a minute, longer after each further failure?"""
    from chat_appliance.server.acme_client import backoff_after_failures

    http_port, https_port = free_port(), free_port()
    server = acme_serve(tmp_path / "instance", pebble, https_port, http_port=http_port)
    try:
        failed = wait_for(lambda: lines_with(server, "ACME:"), 30, "the failed validation")
        assert pebble.directory in failed[0] and "trying again in 60 s" in failed[0]
        assert requests.get(f"http://127.0.0.1:{http_port}/", allow_redirects=False, timeout=5).status_code == 308
        time.sleep(2)
        assert len(lines_with(server, "ACME:")) == 1 and not lines_with(server, "Traceback")
    finally:
        assert server.stop() == 0
    delays = [backoff_after_failures(count) for count in range(1, 6)]
    assert delays[0] >= 60 and delays == sorted(set(delays))


@needs_pebble
def test_directory_down_at_start_then_back_then_renewed_while_a_long_poll_waits(dns, tmp_path):
    """With the ACME directory down at start, does `serve` keep running with its HTTP port
    answering, print one line per failed attempt naming the directory verbatim (no traceback),
    take the certificate once the directory answers, and renew a short-lived one while serving,
    with the same account, new handshakes getting the new certificate while a waiting long poll
    goes on undisturbed?"""
    port, http_port, https_port = free_port(), free_port(), free_port()
    directory = f"https://localhost:{port}/dir"
    # Configured (its listener's CA is ACME_CA_BUNDLE) but not started: its port refuses connections.
    # Certificates of 12 s: renewal is due after 8 s (a third of the lifetime left), time enough
    # for the clients below to register first and wait across it.
    later = Pebble(tmp_path / "pebble", dns, http_port, validity_seconds=12, port=port, start=False)
    server = None
    try:
        server = acme_serve(tmp_path / "instance", later, https_port, directory=directory, http_port=http_port)
        failed = wait_for(lambda: lines_with(server, "ACME:"), 20, "a failed attempt")
        assert directory in failed[0] and "did not answer" in failed[0]
        assert requests.get(f"http://127.0.0.1:{http_port}/", allow_redirects=False, timeout=5).status_code == 308
        assert server.process.poll() is None
        later.start()
        root = tmp_path / "root.pem"
        root.write_bytes(later.issuing_root())
        first = wait_for(lambda: served_serial(https_port, root), 40, "a certificate once the directory is back")
        assert not lines_with(server, "Traceback")
        account = (tmp_path / "instance" / "tls" / "acme-account.json").read_bytes()

        base, credentials = f"https://{DOMAIN}:{https_port}", (server.email, server.api_key)
        poller, sender = zulip_client(base, root, credentials), zulip_client(base, root, credentials)
        queue = poller.register(event_types=["message"])
        received = {}
        waiting = threading.Thread(target=lambda: received.update(
            poller.get_events(queue_id=queue["queue_id"], last_event_id=queue["last_event_id"])))
        waiting.start()
        renewed = wait_for(lambda: (served_serial(https_port, root) or first) != first and
                           served_serial(https_port, root), 40, "the renewal")
        assert renewed != first and waiting.is_alive()
        sent = sender.send_message({"type": "stream", "to": "general", "topic": "tls", "content": "renewed"})
        waiting.join(timeout=20)
        assert [e["message"]["id"] for e in received["events"] if e["type"] == "message"] == [sent["id"]]
        assert (tmp_path / "instance" / "tls" / "acme-account.json").read_bytes() == account
        assert len(lines_with(server, "ACME: obtained a certificate")) >= 2
    finally:
        if server is not None:
            assert server.stop() == 0
        later.stop()


def free_privileged_port():
    for port in range(900, 1000):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    pytest.skip("no free port below 1024")


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("capsh"), reason="needs root and capsh to drop the privilege")
def test_a_port_below_1024_without_the_privilege_says_what_to_do(tmp_path):
    """Without CAP_NET_BIND_SERVICE, does `serve` with TLS on a port below 1024 exit with one line
    saying how to grant it (the systemd unit's capability, setcap, or higher ports)?"""
    authority = CertificateAuthority()
    cert, key = tmp_path / "own.crt", tmp_path / "own.key"
    authority.issue(cert, key, DOMAIN)
    port = free_privileged_port()
    command = " ".join([sys.executable, "-m", "chat_appliance", "serve", "--instance", str(tmp_path / "i"), "--create",
                        "--quiet", "--http-port", str(port), "--https-port", str(free_port())])
    result = subprocess.run(["capsh", "--drop=cap_net_bind_service", "--", "-c", command], capture_output=True,
                            text=True, timeout=60, env={**os.environ, "CHAT_APPLIANCE_TLS_CERT_FILE": str(cert),
                                                        "CHAT_APPLIANCE_TLS_KEY_FILE": str(key)})
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and f"port {port}" in errors[0] and "CAP_NET_BIND_SERVICE" in errors[0]
    assert "Traceback" not in result.stderr
