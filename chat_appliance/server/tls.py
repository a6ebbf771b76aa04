"""HTTPS for `serve`: the certificate new handshakes get, and the plain HTTP port beside it.

The certificate is swapped without a restart. uvicorn listens with one ssl.SSLContext that holds
no certificate of its own: its sni_callback, which runs for every handshake (with or without
SNI), points the connection at the context currently served (`ServedCertificate.current`). A
renewal or a SIGHUP builds a fresh context from the new files and replaces that reference, so
the next handshake gets the new certificate, while connections already open (a waiting long
poll among them) keep the session they negotiated. Before any certificate exists, handshakes
fail (no certificate to present) while the HTTP port already answers ACME's challenges.

The plain HTTP port (`PlainPort`, an ASGI app on a second uvicorn server in the same loop)
answers `/.well-known/acme-challenge/TOKEN` for any Host, and redirects everything else to
https:// with no port: the app itself is never served over plain HTTP while TLS is on.
"""

from __future__ import annotations

from typing import Any

import os
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path

from chat_appliance.ops.instance_files import FILE_MODE

CHALLENGE_PREFIX = "/.well-known/acme-challenge/"
# Strict-Transport-Security on every HTTPS response: a year, as Caddy and Let's Encrypt's
# guidance suggest; browsers then never try plain HTTP for the name again.
HSTS_HEADER = ("strict-transport-security", "max-age=31536000")
# What to do when a port below 1024 may not be opened (one line, shown as the error).
PRIVILEGED_PORT_HINT = (
    "ports below 1024 need a privilege: in the systemd unit give AmbientCapabilities=CAP_NET_BIND_SERVICE "
    "(docs/deploy.md), or run `setcap cap_net_bind_service=+ep` on the Python interpreter, or start as root "
    "under a service manager that drops privileges, or choose --http-port and --https-port above 1023 behind "
    "a port forward")


class CertificateError(Exception):
    """A certificate or key that cannot be served; the message names the file."""


def load_pair(cert_file: str | os.PathLike[str], key_file: str | os.PathLike[str]) -> ssl.SSLContext:
    """A server context presenting the chain in `cert_file` with the key in `key_file`.
    CertificateError names the file at fault (OpenSSL's own error names neither)."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        certificates = x509.load_pem_x509_certificates(Path(cert_file).read_bytes())
    except (OSError, ValueError) as error:
        raise CertificateError(f"{cert_file}: not a readable PEM certificate chain ({_reason(error)})") from None
    try:
        key = load_pem_private_key(Path(key_file).read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as error:
        raise CertificateError(f"{key_file}: not a readable PEM private key without a passphrase "
                               f"({_reason(error)})") from None
    if key.public_key() != certificates[0].public_key():
        raise CertificateError(f"{key_file}: this key does not belong to the certificate in {cert_file}")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert_file, key_file)
    except (OSError, ssl.SSLError) as error:
        raise CertificateError(f"{cert_file}: {_reason(error)}") from None
    return context


def _reason(error: BaseException) -> str:
    return (getattr(error, "strerror", None) or str(error) or type(error).__name__).strip().splitlines()[0]


class ServedCertificate:
    """The certificate new handshakes get; `use` replaces it for the next handshake."""

    def __init__(self) -> None:
        self.current: ssl.SSLContext | None = None
        self.listener = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.listener.minimum_version = ssl.TLSVersion.TLSv1_2
        self.listener.sni_callback = self._select

    def use(self, context: ssl.SSLContext) -> None:
        self.current = context

    def _select(self, connection: Any, server_name: str | None, listener: ssl.SSLContext) -> None:
        current = self.current
        if current is not None:
            connection.context = current


def write_private(path: Path, data: bytes) -> None:
    """Write `data` to `path` with mode 0600 from the first byte, replacing it in one step."""
    partial = path.with_name(path.name + ".partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(descriptor, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.chmod(partial, FILE_MODE)
    os.replace(partial, path)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (both IPv4 and IPv6 for `::`). PermissionError for a port
    below 1024 without the privilege."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    dualstack = family == socket.AF_INET6 and host in ("::", "") and socket.has_dualstack_ipv6()
    return socket.create_server((host.strip("[]"), port), family=family, backlog=4096, dualstack_ipv6=dualstack)


class PlainPort:
    """The ASGI app of the HTTP port while TLS is on: ACME challenges, and redirects to HTTPS.

    `challenges` maps a token to its key authorization (the ACME client fills it). `domain` is
    TLS_DOMAIN; None (your own certificate) redirects to the request's Host without its port."""

    def __init__(self, challenges: dict[str, str], domain: str | None) -> None:
        self.challenges = challenges
        self.domain = domain

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1000})
            return
        path = scope["path"]
        if path.startswith(CHALLENGE_PREFIX):
            answer = self.challenges.get(path[len(CHALLENGE_PREFIX):])
            if answer is None:
                return await self.respond(send, 404, b"No such challenge.\n")
            return await self.respond(send, 200, answer.encode("ascii"))
        host = self.domain or self.request_host(scope)
        if host is None:
            return await self.respond(send, 400, b"This server answers HTTPS only; the request named no host.\n")
        target = (scope.get("raw_path") or path.encode()).decode("latin-1")
        query = scope.get("query_string") or b""
        location = f"https://{host}{target}" + (f"?{query.decode('latin-1')}" if query else "")
        # 308 keeps the method and body (a client POSTing here repeats the POST over HTTPS).
        await self.respond(send, 308, b"Moved to HTTPS.\n", [(b"location", location.encode("latin-1"))])

    @staticmethod
    def request_host(scope: Any) -> str | None:
        """The Host header's name without its port, or None when missing or malformed."""
        value = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "").strip()
        if value.startswith("["):
            end = value.find("]")
            name = value[:end + 1] if end > 0 else ""
        else:
            name = value.rsplit(":", 1)[0] if value.count(":") == 1 else value
        allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-[]:")
        if not name or not set(name) <= allowed:
            return None
        return name

    @staticmethod
    async def respond(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
            *(headers or [])]})
        await send({"type": "http.response.body", "body": body})


@dataclass
class TlsListeners:
    """What asgi.run needs to serve HTTPS: the certificate served, the two listening sockets,
    and the HTTP port's app."""

    served: ServedCertificate
    https_socket: socket.socket
    http_socket: socket.socket
    plain_app: PlainPort
