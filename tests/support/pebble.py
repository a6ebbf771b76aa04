"""Let's Encrypt's test ACME server, pebble (Debian's package), with pebble-challtestsrv as its
DNS, for the automatic HTTPS tests. Every name resolves to 127.0.0.1, and pebble validates
HTTP-01 for real against `http_port` (the `serve --http-port` under test)."""

import datetime
import json
import shutil
import subprocess
import time

import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from .serve_process import free_port

AVAILABLE = shutil.which("pebble") is not None and shutil.which("pebble-challtestsrv") is not None
MISSING = "pebble is not installed (apt-get install pebble; .ci/run installs it)"


def write_key(path, key):
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)


class CertificateAuthority:
    """A throwaway CA that signs server certificates (pebble's listener, and "your own
    certificate" in the tests)."""

    def __init__(self, name="chat-appliance test CA"):
        self.key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = datetime.datetime.now(datetime.timezone.utc)
        self.certificate = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
                            .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
                            .not_valid_before(now - datetime.timedelta(minutes=5))
                            .not_valid_after(now + datetime.timedelta(days=1))
                            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                            .sign(self.key, hashes.SHA256()))

    def pem(self):
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    def issue(self, cert_path, key_path, *names, ip=None):
        """A certificate for `names` (and `ip`), written as PEM files; returns its serial."""
        import ipaddress

        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        alternatives = [x509.DNSName(name) for name in names]
        if ip:
            alternatives.append(x509.IPAddress(ipaddress.ip_address(ip)))
        certificate = (x509.CertificateBuilder()
                       .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
                       .issuer_name(self.certificate.subject).public_key(key.public_key())
                       .serial_number(x509.random_serial_number())
                       .not_valid_before(now - datetime.timedelta(minutes=5))
                       .not_valid_after(now + datetime.timedelta(days=1))
                       .add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
                       .sign(self.key, hashes.SHA256()))
        cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
        write_key(key_path, key)
        return certificate.serial_number


class ChallTestSrv:
    """pebble-challtestsrv as a DNS server answering 127.0.0.1 for every name (and no IPv6, so
    that pebble validates against the IPv4 loopback the server listens on)."""

    def __init__(self):
        self.dns_port = free_port()
        self.process = subprocess.Popen(
            ["pebble-challtestsrv", "-defaultIPv4", "127.0.0.1", "-defaultIPv6", "",
             "-dns01", f"127.0.0.1:{self.dns_port}", "-http01", "", "-https01", "", "-tlsalpn01", "",
             "-management", f"127.0.0.1:{free_port()}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


class Pebble:
    """One pebble process: its directory URL, the CA bundle for its own HTTPS listener
    (ACME_CA_BUNDLE), and the root that signs what it issues (`issuing_root`)."""

    def __init__(self, folder, dns, http_port, validity_seconds=None, port=None, start=True):
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.port = port or free_port()
        self.management_port = free_port()
        listener = CertificateAuthority("pebble listener CA")
        self.ca_bundle = folder / "pebble-listener-ca.pem"
        self.ca_bundle.write_bytes(listener.pem())
        listener.issue(folder / "listener.pem", folder / "listener.key", "localhost", ip="127.0.0.1")
        settings = {"listenAddress": f"127.0.0.1:{self.port}",
                    "managementListenAddress": f"127.0.0.1:{self.management_port}",
                    "certificate": str(folder / "listener.pem"), "privateKey": str(folder / "listener.key"),
                    "httpPort": http_port, "tlsPort": free_port(), "ocspResponderURL": "",
                    "externalAccountBindingRequired": False}
        if validity_seconds is not None:
            settings["certificateValidityPeriod"] = validity_seconds
        (folder / "pebble-config.json").write_text(json.dumps({"pebble": settings}))
        self.directory = f"https://localhost:{self.port}/dir"
        self.dns = dns
        self.process = None
        self.log = None
        if start:
            self.start()

    def start(self):
        # No random sleep before validating, and no nonce refused on purpose: fast and
        # deterministic. Validation itself is real (no PEBBLE_VA_ALWAYS_VALID).
        env = {"PATH": "/usr/bin:/bin", "PEBBLE_VA_NOSLEEP": "1", "PEBBLE_WFE_NONCEREJECT": "0"}
        self.log = open(self.folder / "pebble.log", "ab")
        self.process = subprocess.Popen(
            ["pebble", "-config", str(self.folder / "pebble-config.json"), "-dnsserver",
             f"127.0.0.1:{self.dns.dns_port}", "-strict=false"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=self.folder)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                requests.get(self.directory, verify=str(self.ca_bundle), timeout=1)
                return
            except requests.ConnectionError:
                time.sleep(0.1)
        raise RuntimeError("pebble did not start:\n" + (self.folder / "pebble.log").read_text())

    def issuing_root(self):
        """The root of the certificates this pebble issues (it makes a new one at each start)."""
        answer = requests.get(f"https://localhost:{self.management_port}/roots/0", verify=str(self.ca_bundle),
                              timeout=5)
        answer.raise_for_status()
        return answer.content

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        if self.log is not None:
            self.log.close()
