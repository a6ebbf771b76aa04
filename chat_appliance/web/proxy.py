"""Requests through a reverse proxy: X-Forwarded-* believed only from TRUSTED_PROXIES.

Behind nginx or Caddy every request comes from the proxy's address, so the client's address (rate
limits by address, the request log) and scheme (https, for cookies marked Secure) come from the
X-Forwarded-For and X-Forwarded-Proto headers the proxy sets. Anyone can send those headers, so
they count only when the peer is a configured proxy; from any other peer they are ignored.
"""


class TrustedProxyMiddleware:
    """WSGI middleware: rewrite REMOTE_ADDR and wsgi.url_scheme from a trusted proxy's headers.
    `config` is the app's config, read per request so that a change takes effect at once."""

    def __init__(self, wsgi_app, config):
        self.wsgi_app = wsgi_app
        self.config = config

    def __call__(self, environ, start_response):
        trusted = set(self.config.get("TRUSTED_PROXIES") or ())
        peer = environ.get("REMOTE_ADDR", "")
        if peer in trusted:
            environ["REMOTE_ADDR"] = client_address(peer, environ.get("HTTP_X_FORWARDED_FOR", ""), trusted)
            proto = environ.get("HTTP_X_FORWARDED_PROTO", "").split(",")[-1].strip().lower()
            if proto in ("http", "https"):
                environ["wsgi.url_scheme"] = proto
        return self.wsgi_app(environ, start_response)


def client_address(peer, forwarded_for, trusted):
    """The client's address, given the connection's peer, its X-Forwarded-For header and the
    trusted proxies (for handlers outside WSGI too, such as the event loop's /events)."""
    if peer not in trusted:
        return peer
    forwarded = [part.strip() for part in (forwarded_for or "").split(",") if part.strip()]
    # The rightmost address a trusted proxy did not add itself is the client's; addresses
    # further left were sent by the client and prove nothing.
    for address in reversed(forwarded):
        if address not in trusted:
            return address
    return peer
