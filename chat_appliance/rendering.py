"""The server's one entry point to Markdown rendering.

Messages are rendered once, at send and edit time, and the HTML is stored. Until the
Zulip-flavoured renderer lands, content renders as escaped paragraphs.
"""

import html


def render_plain(content):
    """Escaped paragraphs; single newlines become <br>."""
    paragraphs = [p for p in content.strip().split("\n\n") if p.strip()]
    return "\n".join("<p>" + html.escape(p).replace("\n", "<br>\n") + "</p>" for p in paragraphs)
