"""URL helpers: bare-URL detection, link sanitising, RFC 6570 expansion and
Zulip's narrow-hash encoding."""

from __future__ import annotations

import functools
import html
import re
from typing import Iterator, Optional
from urllib.parse import quote, urlencode, urlsplit

# Top-level domains that make a scheme-less word like ``example.com`` a link.
# Deliberately a curated list: extensions that are also common file suffixes
# (.py, .md, .sh, .rs, .pl, .cc, .ai, .so, ...) are left out so that
# "readme.md" or "views.py" stay plain text.
COMMON_TLDS = sorted(
    """
    com net org edu gov mil int info biz name pro aero coop museum mobi jobs
    travel asia cat tel xxx xyz app dev io co us uk gd gl ly me tv fm to la
    de fr jp cn ru br au ca nl se no es it ch at be dk fi ie nz za mx ar kr tw
    hk sg eu is ee lt lv cz sk hu ro bg gr tr il ir pk bd th vn my ph id nu ws
    cl pe ve uy ua by kz su tk cx ac ag bz vc im je gg
    """.split(),
    key=len,
    reverse=True,
)

_BODY_CHAR = r"[^\s()<>\[\]\"\x02\x03]"
_END_CHAR = r"[^\s()<>\[\]\"\x02\x03.,;:!?']"


def _nested_parens(depth: int) -> str:
    inner = _BODY_CHAR
    group = rf"\((?:{inner})*\)"
    for _ in range(depth - 1):
        group = rf"\((?:{inner}|{group})*\)"
    return group


_PARENS = _nested_parens(6)
_BODY = rf"(?:(?:{_BODY_CHAR}|{_PARENS})*(?:{_END_CHAR}|{_PARENS}))"
_HOST = r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:%s)(?![\w-])" % "|".join(COMMON_TLDS)
_EMAIL = rf"[\w.+-]+@{_HOST}"

# Preceded by start of text, whitespace or a few punctuation characters;
# followed (after optional trailing punctuation) by whitespace or the end.
AUTOLINK_RE = re.compile(
    r"(?<![^\s'\"(,:<\x03])"
    r"(?P<url>"
    rf"(?P<scheme>(?:https?|ftp)://){_BODY}"
    rf"|(?P<email>{_EMAIL})"
    rf"|{_HOST}(?:[/:?#]{_BODY}|/)?"
    r")"
    r"(?=[.,;:!?'\")\]>]?(?:\s|$))",
    re.IGNORECASE | re.UNICODE,
)

_CONTROL_RE = re.compile(r"[\x00-\x20\x7f]")

ALLOWED_SCHEMES = {"http", "https", "ftp", "mailto", "tel", "sms", "news", "irc", "ircs", "xmpp"}


def autolink_href(match: "re.Match[str]") -> str:
    """Turn a bare URL match into the href Zulip would use."""
    url = match.group("url")
    if match.group("scheme"):
        return url
    if match.group("email"):
        return "mailto:" + url
    return "http://" + url


def find_bare_urls(text: str) -> Iterator["re.Match[str]"]:
    return AUTOLINK_RE.finditer(text)


@functools.lru_cache(maxsize=1024)
def sanitize_url(url: str) -> Optional[str]:
    """Return a safe href for a user-supplied link target, or None to refuse.

    Only an allow-list of schemes passes; scheme-less targets are treated as
    relative (if they look like paths or fragments) or as http URLs.
    """
    url = html.unescape(url).strip()
    if not url:
        return None
    # Browsers ignore control characters and whitespace inside schemes.
    compact = _CONTROL_RE.sub("", url)
    try:
        parts = urlsplit(compact)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme:
        if scheme not in ALLOWED_SCHEMES:
            return None
        if scheme in ("http", "https", "ftp") and not parts.netloc:
            return None
        if scheme in ("tel", "sms", "mailto") and not parts.path:
            return None
        return url
    if url.startswith(("/", "#", "?")):
        return url
    if ":" in url.split("/", 1)[0]:
        return None
    return "http://" + url


def thumbnail_url(url: str, size: str) -> str:
    """The /thumbnail URL through which browsers load an image from elsewhere (previews.py;
    actions/link_previews.py, which must not load the Markdown engine with the server)."""
    return "/thumbnail?" + urlencode({"url": url, "size": size})


def relative_to_realm(href: str, realm_url: str) -> str:
    """Links into our own realm's web app become relative, as Zulip does."""
    base = realm_url.rstrip("/")
    if base and href.startswith(base + "/"):
        rest = href[len(base) + 1 :]
        # Zulip's rule: narrows and uploads become relative ("user_uploads/..." without a slash).
        if rest.startswith(("#", "user_uploads/")):
            return rest
    return href


# --- RFC 6570 (levels 1-2) -------------------------------------------------

_UNRESERVED = "-._~"
_RESERVED = ":/?#[]@!$&'()*+,;="
_EXPR_RE = re.compile(r"\{([+#]?)([\w.,]+)\}")


def _quote(value: str, safe: str) -> str:
    # Letters and digits never need quoting: skip urllib's work for the usual issue number.
    return value if value.isascii() and value.isalnum() else quote(value, safe=safe)


@functools.lru_cache(maxsize=256)
def _template_parts(template: str) -> tuple:
    """The template split once into literal text and (prefix, safe characters, names) expressions:
    a message with thousands of linkifier matches expands the same template each time."""
    parts: list = []
    last = 0
    for m in _EXPR_RE.finditer(template):
        parts.append(template[last:m.start()])
        op = m.group(1)
        parts.append(("#" if op == "#" else "", _UNRESERVED + (_RESERVED if op else ""), tuple(m.group(2).split(","))))
        last = m.end()
    parts.append(template[last:])
    return tuple(parts)


def expand_template(template: str, variables: dict[str, str]) -> str:
    """Expand simple ``{var}``, reserved ``{+var}`` and fragment ``{#var}``
    expressions; undefined variables expand to nothing."""
    out = []
    for part in _template_parts(template):
        if isinstance(part, str):
            out.append(part)
            continue
        prefix, safe, names = part
        values = [_quote(str(variables[n]), safe) for n in names if variables.get(n) is not None]
        if values:
            out.append(prefix + ",".join(values))
    return "".join(out)


# --- narrow hashes ---------------------------------------------------------

_HASH_EXTRA = {"(": ".28", ")": ".29", ".": ".2E"}


def encode_hash_component(text: str) -> str:
    """Percent-encode, then use '.' instead of '%' (Zulip's narrow encoding)."""
    encoded = quote(text, safe="*").replace(".", "%2E").replace("(", "%28").replace(")", "%29")
    return encoded.replace("%", ".")


def channel_narrow(channel_id: int, name: str) -> str:
    return f"/#narrow/channel/{channel_id}-{encode_hash_component(name.replace(' ', '-'))}"


def topic_narrow(channel_id: int, name: str, topic: str) -> str:
    return f"{channel_narrow(channel_id, name)}/topic/{encode_hash_component(topic)}"
