"""Slow and greedy clients (a client that trickles in or opens connections by the thousand): a connection whose request
headers do not arrive within REQUEST_READ_TIMEOUT_SECONDS is closed, and one client address
holds at most MAX_CONNECTIONS_PER_CLIENT open connections (config.py). uvicorn itself times out
only idle keep-alive connections, so a client sending its headers a byte at a time kept a
connection forever; the request body's timeout is wsgi_bridge.read_request_body's.

Both live in a subclass of uvicorn's httptools protocol (one instance per connection, on the loop
thread only, so the per-address counts need no lock).
"""

from __future__ import annotations

from typing import Any, Iterable

import ipaddress
import json
import logging

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

log = logging.getLogger("chat_appliance")

TOO_MANY_BODY = json.dumps({"result": "error", "code": "RATE_LIMIT_HIT", "retry-after": 1,
                            "msg": "Too many open connections from your address."}).encode()
TOO_MANY_RESPONSE = (b"HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\nretry-after: 1\r\n"
                     b"connection: close\r\ncontent-length: " + str(len(TOO_MANY_BODY)).encode() + b"\r\n\r\n"
                     + TOO_MANY_BODY)


def protocol_class(*, header_timeout: float, max_per_client: int,
                   trusted_proxies: Iterable[str] | None = ()) -> type[HttpToolsProtocol]:
    """An HttpToolsProtocol class with these limits (uvicorn.Config's `http`)."""
    exempt = []
    for entry in trusted_proxies or ():
        try:
            exempt.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            continue
    open_by_address: dict[str, int] = {}

    class GuardedProtocol(HttpToolsProtocol):
        open_by_address: dict[str, int]  # the counts, set below (tests read them)

        def connection_made(self, transport):
            super().connection_made(transport)
            self._header_timer = None
            self._counted = None
            address = self.client[0] if self.client else None
            if max_per_client and address is not None and not _is_exempt(address, exempt):
                self._counted = address
                open_by_address[address] = open_by_address.get(address, 0) + 1
                if open_by_address[address] > max_per_client:
                    if open_by_address[address] == max_per_client + 1:
                        log.warning("%s holds more than %d open connections: refusing more", address, max_per_client)
                    transport.write(TOO_MANY_RESPONSE)
                    transport.close()
                    return
            self._arm_header_timer()

        def on_message_begin(self):
            super().on_message_begin()
            if self._header_timer is None:
                self._arm_header_timer()  # the next request on a kept-alive connection

        def on_headers_complete(self):
            self._cancel_header_timer()
            previous = self.cycle
            super().on_headers_complete()
            if self.cycle is not previous and type(self.cycle) is RequestResponseCycle:
                self.cycle.__class__ = OneWriteCycle

        def connection_lost(self, exc):
            self._cancel_header_timer()
            if self._counted is not None:
                remaining = open_by_address.get(self._counted, 1) - 1
                if remaining > 0:
                    open_by_address[self._counted] = remaining
                else:
                    open_by_address.pop(self._counted, None)
                self._counted = None
            super().connection_lost(exc)

        def _arm_header_timer(self):
            if header_timeout:
                self._header_timer = self.loop.call_later(header_timeout, self._headers_too_slow)

        def _cancel_header_timer(self):
            timer = getattr(self, "_header_timer", None)
            if timer is not None:
                timer.cancel()
                self._header_timer = None

        def _headers_too_slow(self):
            self._header_timer = None
            if not self.transport.is_closing():
                self.transport.close()

    GuardedProtocol.open_by_address = open_by_address
    return GuardedProtocol


class _Collect:
    """Stands in for the transport while uvicorn writes the head (and then the first body piece)
    of a response: the pieces are kept, and a close is remembered, for OneWriteCycle to do."""

    __slots__ = ("transport", "parts", "close_after")

    def __init__(self, transport, parts):
        self.transport = transport
        self.parts = parts
        self.close_after = False

    def write(self, data: bytes) -> None:
        self.parts.append(data)

    def close(self) -> None:
        self.close_after = True

    def __getattr__(self, name: str) -> Any:  # is_closing, get_extra_info ...: the real transport's
        return getattr(self.transport, name)


class OneWriteCycle(RequestResponseCycle):
    """uvicorn's request cycle, writing a response's head together with its first body piece.

    uvicorn writes the status line and headers as soon as the app starts the response, and the
    body when it comes: two send() calls and two TCP segments for every answer, although this
    server's app always sends both at once (wsgi_bridge, the long poll). A trivial request and
    every poll of a fan-out paid for the second system call and the client's second wake-up.
    Here the head waits for the first body message and both go out in one write."""

    _head: list[bytes] | None = None

    async def send(self, message: Any) -> None:
        kind = message["type"]
        if kind == "http.response.start" and not self.response_started:
            real, collect = self.transport, _Collect(self.transport, [])
            self.transport = collect  # type: ignore[assignment]  # a stand-in, for uvicorn's writes
            try:
                await super().send(message)
            finally:
                self.transport = real
            self._head = collect.parts
            if collect.close_after:
                self._flush(collect)
            return
        head, self._head = self._head, None
        if head is None or kind != "http.response.body":
            if head:
                self.transport.write(b"".join(head))
            await super().send(message)
            return
        real, collect = self.transport, _Collect(self.transport, head)
        self.transport = collect  # type: ignore[assignment]
        try:
            await super().send(message)
        finally:
            self.transport = real
            self._flush(collect)

    def _flush(self, collect: _Collect) -> None:
        if collect.parts and not self.transport.is_closing():
            self.transport.write(b"".join(collect.parts))
        collect.parts = []
        if collect.close_after:
            self.transport.close()


def _is_exempt(address, networks):
    """Loopback addresses (a reverse proxy on the same machine, which has limits of its own such as
    nginx's limit_conn) and the trusted proxies carry many clients each: never capped."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return ip.is_loopback or any(ip in network for network in networks)
