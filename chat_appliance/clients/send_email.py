"""Outgoing email: one message shape, and a mailer that sends off the request path.

Settings carry Zulip's names (EMAIL_HOST, EMAIL_PORT, EMAIL_HOST_USER, EMAIL_HOST_PASSWORD,
EMAIL_USE_TLS for STARTTLS, EMAIL_USE_SSL, NOREPLY_EMAIL_ADDRESS), so an administrator can copy a
provider's Zulip instructions. The password may instead come from EMAIL_HOST_PASSWORD_FILE, read
at each send, so that it stays out of config.json and a rotated password needs no restart.

An action never talks SMTP: it hands a built message to `Mailer.send`, which returns at once. One
background thread delivers the queue with a timeout per connection and a bounded number of
attempts, and logs one line per failure, so an SMTP server that hangs or refuses costs a request
nothing. Without EMAIL_HOST, `chat-appliance dev` keeps every message in memory (`outbox`, shown at
/emails) and a production server sends nothing (`configured` is false; callers say so).
"""

from __future__ import annotations

import html
import logging
import queue
import re
import ssl
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

# smtplib and the email package's header classes (250 KB of bytecode) load with the first
# message built or sent, not with the server (start-up time and idle memory).
if TYPE_CHECKING:
    import smtplib
    from email.headerregistry import Address
    from email.message import EmailMessage

log = logging.getLogger(__name__)

# Header values are one line: a newline in a name or subject must never start a header of its own.
_LINE_BREAKS = re.compile(r"[\r\n\x00\u2028\u2029\x85]+")
# How many delivered messages the development outbox keeps (the newest).
OUTBOX_LIMIT = 200


class EmailNotConfiguredError(RuntimeError):
    """Sending was asked of a server without EMAIL_HOST (and not in development mode)."""


@dataclass(frozen=True)
class EmailSettings:
    """How to reach the SMTP server, from the configuration's EMAIL_* keys."""

    host: Optional[str]
    port: int
    user: Optional[str]
    password: Optional[str]
    use_tls: bool
    use_ssl: bool
    noreply: str
    timeout: float
    attempts: int
    retry_seconds: float

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "EmailSettings":
        """The settings of a configuration mapping; the password file, when set, wins over the
        password (read now, so a rotated password is used from the next message on)."""
        password = config.get("EMAIL_HOST_PASSWORD")
        password_file = config.get("EMAIL_HOST_PASSWORD_FILE")
        if password_file:
            password = Path(password_file).read_text().strip()
        use_ssl = bool(config.get("EMAIL_USE_SSL"))
        port = config.get("EMAIL_PORT") or (465 if use_ssl else 25)
        return cls(host=config.get("EMAIL_HOST") or None, port=int(port), user=config.get("EMAIL_HOST_USER") or None,
                   password=password or None, use_tls=bool(config.get("EMAIL_USE_TLS")), use_ssl=use_ssl,
                   noreply=config.get("NOREPLY_EMAIL_ADDRESS") or "noreply@localhost",
                   timeout=float(config.get("EMAIL_TIMEOUT_SECONDS", 10)),
                   attempts=max(1, int(config.get("EMAIL_SEND_ATTEMPTS", 3))),
                   retry_seconds=float(config.get("EMAIL_RETRY_SECONDS", 30)))


def one_line(value: str) -> str:
    """A header value with every line break (and NUL) turned into one space."""
    return _LINE_BREAKS.sub(" ", value).strip()


def address(display_name: str, email: str) -> Address:
    """`display_name <email>`, the name quoted or encoded as needed and never more than one line.
    Raises ValueError for an address with a line break (it would be a new header)."""
    if _LINE_BREAKS.search(email):
        raise ValueError("an email address cannot contain a line break")
    from email.headerregistry import Address

    username, _, domain = email.rpartition("@")
    return Address(display_name=one_line(display_name), username=username, domain=domain)


def build_message(*, sender_name: str, noreply: str, to_name: str, to_email: str, subject: str,
                  text: str, html_body: str) -> EmailMessage:
    """A message with a plain-text part and an HTML part, and its Date and Message-ID."""
    from email.message import EmailMessage
    from email.utils import formatdate, make_msgid

    message = EmailMessage()
    message["Subject"] = one_line(subject)
    message["From"] = address(sender_name, noreply)
    message["To"] = address(to_name, to_email)
    message["Date"] = formatdate(usegmt=True)
    message["Message-ID"] = make_msgid(domain=noreply.rpartition("@")[2] or "localhost")
    message["Auto-Submitted"] = "auto-generated"  # RFC 3834: out-of-office robots do not answer it
    message.set_content(text)
    message.add_alternative(html_body, subtype="html")
    return message


def html_paragraphs(paragraphs: list, link: Optional[tuple] = None, footer: str = "") -> str:
    """A small HTML body: each paragraph escaped, then an optional (label, url) button-like link."""
    parts = [f"<p>{html.escape(p)}</p>" for p in paragraphs]
    if link is not None:
        label, url = link
        parts.append(f'<p><a href="{html.escape(url, quote=True)}">{html.escape(label)}</a></p>')
    if footer:
        parts.append(f'<p style="color:#666;font-size:small">{html.escape(footer)}</p>')
    return "<!doctype html>\n<html><body>\n" + "\n".join(parts) + "\n</body></html>\n"


def smtp_send(settings: EmailSettings, message: EmailMessage) -> None:
    """Deliver one message now (the mailer's thread, and `send-test-email`)."""
    import smtplib

    host = settings.host or "localhost"
    smtp: smtplib.SMTP
    if settings.use_ssl:
        smtp = smtplib.SMTP_SSL(host, settings.port, timeout=settings.timeout, context=ssl.create_default_context())
    else:
        smtp = smtplib.SMTP(host, settings.port, timeout=settings.timeout)
    with smtp:
        if settings.use_tls and not settings.use_ssl:
            smtp.starttls(context=ssl.create_default_context())
        if settings.user:
            smtp.login(settings.user, settings.password or "")
        smtp.send_message(message)


def is_permanent(error: Exception) -> bool:
    """A 5xx answer (unknown recipient, refused sender, bad credentials): trying again will not help."""
    import smtplib

    if isinstance(error, smtplib.SMTPRecipientsRefused):
        return all(code >= 500 for code, _ in error.recipients.values())
    return isinstance(error, smtplib.SMTPResponseException) and error.smtp_code >= 500


class Mailer:
    """The app's outgoing mail: `send` queues a message for the background thread and returns.

    `config` is the app's configuration mapping, read at each message (so a test, or an operator
    with a new password file, changes it without a new mailer). With `keep=True` (development
    mode), messages are kept in `outbox` when no EMAIL_HOST is set."""

    def __init__(self, config: Mapping[str, Any], *, keep: bool = False,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.config = config
        self.keep = keep
        self.outbox: list = []
        self._sleep = sleep
        self._queue: "queue.Queue[Optional[EmailMessage]]" = queue.Queue()
        self._thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()
        self._closed = False

    @property
    def configured(self) -> bool:
        """Whether a message given to `send` goes anywhere (an SMTP server, or the dev outbox)."""
        return bool(self.config.get("EMAIL_HOST")) or self.keep

    def settings(self) -> EmailSettings:
        return EmailSettings.from_config(self.config)

    def noreply(self) -> str:
        return self.config.get("NOREPLY_EMAIL_ADDRESS") or "noreply@localhost"

    def send(self, message: EmailMessage) -> None:
        """Queue `message`; never blocks on the network. Raises EmailNotConfiguredError when the
        server has nowhere to send it."""
        if not self.config.get("EMAIL_HOST"):
            if not self.keep:
                raise EmailNotConfiguredError("EMAIL_HOST is not set")
            with self._lock:
                self.outbox.append(message)
                del self.outbox[:-OUTBOX_LIMIT]
            return
        with self._lock:
            if self._closed:
                log.warning("email to %s dropped: the server is stopping", message["To"])
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="mailer", daemon=True)
                self._thread.start()
        self._queue.put(message)

    def _work(self) -> None:
        while True:
            message = self._queue.get()
            if message is None:
                return
            self._deliver(message)

    def _deliver(self, message: EmailMessage) -> None:
        """Try a message up to EMAIL_SEND_ATTEMPTS times, EMAIL_RETRY_SECONDS apart; one log line
        per failure, naming the recipient, the attempt and the reason."""
        import smtplib

        try:
            settings = self.settings()
        except OSError as error:  # the password file cannot be read
            log.error("email to %s not sent: cannot read EMAIL_HOST_PASSWORD_FILE: %s", message["To"], error)
            return
        for attempt in range(1, settings.attempts + 1):
            try:
                smtp_send(settings, message)
                return
            except (OSError, smtplib.SMTPException) as error:
                permanent = is_permanent(error)
                last = attempt == settings.attempts or permanent
                log.warning("email to %s (%s) failed, attempt %d of %d%s: %s", message["To"], message["Subject"],
                            attempt, settings.attempts, "; giving up" if last else "; will retry",
                            f"{type(error).__name__}: {error}")
                if last:
                    return
                if self._closed:
                    return
                self._sleep(settings.retry_seconds)

    def close(self, timeout: float = 5.0) -> None:
        """Stop the thread after what is queued (waiting at most `timeout` seconds)."""
        with self._lock:
            self._closed = True
            thread = self._thread
        if thread is not None:
            self._queue.put(None)
            thread.join(timeout)


def standard_email(*, noreply: str, sender_name: str, to_name: str, to_email: str, subject: str,
                   paragraphs: list, link: Optional[tuple] = None, footer: str = "") -> EmailMessage:
    """The shape of every mail this server sends: paragraphs, then one link, then a footer; the
    plain-text part says the same as the HTML part."""
    text = "\n\n".join(paragraphs)
    if link is not None:
        text += f"\n\n{link[0]}:\n{link[1]}"
    if footer:
        text += f"\n\n--\n{footer}"
    return build_message(sender_name=sender_name, noreply=noreply, to_name=to_name, to_email=to_email,
                         subject=subject, text=text + "\n", html_body=html_paragraphs(paragraphs, link, footer))
