"""What every integration shares."""


class UnsupportedEvent(Exception):
    """The service sent an event this integration does not turn into a message."""

    def __init__(self, integration, event):
        super().__init__(f"The '{event}' event isn't currently supported by the {integration} webhook")
        self.event = event


def link(text, url):
    """A Markdown link, or the bare text when there is no URL."""
    return f"[{text}]({url})" if url else text


def shorten(text, limit=80):
    """One line of at most `limit` characters."""
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"
