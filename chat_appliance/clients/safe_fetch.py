"""Every request this server makes to a URL: one guard against server-side request forgery.

Outgoing webhooks, calls to the push notification service and anything added later fetch through
`fetch` (never through urllib or http.client directly; tests/security/test_outgoing_requests.py greps for
it). The guard:

- only http and https;
- the host name is resolved once, every address it resolves to must be public, and the
  connection goes to that checked address (the Host header and the TLS name stay the name), so
  a second, different DNS answer (rebinding) is never used;
- "public" is checked on the IPv4 address inside an IPv6 one too: mapped (::ffff:a.b.c.d),
  compatible (::a.b.c.d), 6to4 (2002::/16), NAT64 (64:ff9b::/96, 64:ff9b:1::/48) and Teredo;
  decimal, octal and hex IPv4 forms (2130706433, 0177.1, 0x7f000001) arrive here already
  resolved by getaddrinfo, and `localhost`, `localhost.` and `*.localhost` are refused by name;
- redirects are never followed: a 3xx is handed back to the caller like any other status, so a
  public URL cannot send the request on to a private one.

`allow_private=True` (the OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES setting, off by default;
`chat-appliance dev` and the test suite turn it on, because their webhook receivers run on
loopback) lifts the address check only: resolving once and not following redirects stay.
No Flask here: callers turn UnsafeURLError into their own errors.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

# Where an IPv6 address carries an IPv4 one in its last 32 bits (NAT64 prefixes, and the
# deprecated IPv4-compatible form ::a.b.c.d).
_V4_IN_LAST_32_BITS = tuple(ipaddress.ip_network(net) for net in ("64:ff9b::/96", "64:ff9b:1::/48", "::/96"))


class UnsafeURLError(ValueError):
    """A URL this server will not fetch; the message says why, for the person who gave it."""


@dataclass
class FetchResponse:
    """What came back: status, headers (lower-case names), and the body (at most max_bytes)."""

    status: int
    headers: dict
    body: bytes


def embedded_ipv4(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for, or None."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if any(ip in network for network in _V4_IN_LAST_32_BITS) and int(ip) > 1:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def is_private_address(address: str) -> bool:
    """True for anything that is not a plain public unicast address: loopback, private,
    link-local, shared (100.64/10), reserved, multicast, unspecified, or an IPv6 address whose
    embedded IPv4 address is one of those."""
    ip = ipaddress.ip_address(address.split("%")[0])
    inner = embedded_ipv4(ip)
    if inner is not None and is_private_address(str(inner)):
        return True
    return not ip.is_global or ip.is_multicast or ip.is_reserved or ip.is_unspecified


def _is_local_name(host):
    name = host.rstrip(".").lower()
    return name == "localhost" or name.endswith(".localhost")


def check_unambiguous(url: str) -> None:
    """Refuse a URL that a browser's (WHATWG) parser and Python's would read differently:
    `http://127.0.0.1\\@1.1.1.1/` is 1.1.1.1 to urlsplit and loopback to a browser, which treats
    a backslash as a slash. So no backslash, no control character or whitespace (a browser drops
    some of them), and no user information before the host (nothing this server sends needs it)."""
    if "\\" in url or any(ord(c) < 0x21 or ord(c) == 0x7F for c in url):
        raise UnsafeURLError("it holds a backslash, a space or a control character")
    if "@" in urlsplit(url).netloc:
        raise UnsafeURLError("it holds user information (user@) before the host")


def resolve(url: str, *, allow_private: bool) -> tuple[str, str, int, str]:
    """(scheme, host, port, address to connect to) for a URL this server may fetch; raises
    UnsafeURLError. The address is the one checked: connect to it, never resolve again."""
    check_unambiguous(url)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise UnsafeURLError("it is not a valid URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UnsafeURLError("it must be an http:// or https:// URL")
    host = parts.hostname
    port = port or (443 if parts.scheme == "https" else 80)
    if not allow_private and _is_local_name(host):
        raise UnsafeURLError("it names this server (localhost)")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, OSError):
        raise UnsafeURLError(f"cannot resolve {host}") from None
    # getaddrinfo gives IP addresses as str (an int only for other socket families).
    addresses = [str(info[4][0]) for info in infos]
    if not addresses:
        raise UnsafeURLError(f"cannot resolve {host}")
    # Every address must be public: a name with one public and one private address would let
    # the connection land on either.
    if not allow_private and any(is_private_address(address) for address in addresses):
        raise UnsafeURLError("it is a private or loopback address")
    return parts.scheme, host, port, addresses[0]


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to the checked address; the Host header stays the name."""

    def __init__(self, host, port, address, timeout):
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self):
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """As above, with TLS verified against the name, not the address."""

    def __init__(self, host, port, address, timeout):
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self):
        sock = socket.create_connection((self._address, self.port), self.timeout)
        # HTTPSConnection keeps its SSLContext in _context, which typeshed does not declare.
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


def fetch(url: str, *, method: str = "GET", data: bytes | None = None, headers: dict[str, str] | None = None,
          timeout: float = 10, allow_private: bool = False, max_bytes: int = 1024 * 1024) -> FetchResponse:
    """One request, no redirects followed; returns a FetchResponse whatever its status. Raises
    UnsafeURLError for a URL the guard refuses, OSError (timeouts included) when the request
    could not be completed."""
    scheme, host, port, address = resolve(url, allow_private=allow_private)
    parts = urlsplit(url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    connection_class = _PinnedHTTPSConnection if scheme == "https" else _PinnedHTTPConnection
    connection = connection_class(host, port, address, timeout)
    try:
        connection.request(method, target, body=data, headers=dict(headers or {}))
        response = connection.getresponse()
        body = response.read(max_bytes)
        return FetchResponse(response.status, {k.lower(): v for k, v in response.getheaders()}, body)
    except http.client.HTTPException as error:
        raise OSError(f"{type(error).__name__}: {error}") from None
    finally:
        connection.close()
