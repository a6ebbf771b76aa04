"""Outgoing email: one message shape, and a mailer that sends off the request path.

Settings carry Zulip's names (EMAIL_HOST, EMAIL_PORT, EMAIL_HOST_USER, EMAIL_HOST_PASSWORD,
EMAIL_USE_TLS for STARTTLS, EMAIL_USE_SSL, NOREPLY_EMAIL_ADDRESS), so an administrator can copy a
provider's Zulip instructions. The password may instead come from EMAIL_HOST_PASSWORD_FILE, read
at each send, so that it stays out of config.json and a rotated password needs no restart.

An action never talks SMTP: it hands a built message to `Mailer.send`, which stores it and
returns at once. A few background threads deliver the queue, each mail on its own, waiting for
the server as long as RFC 5321 allows; a mail leaves the queue only once the server confirms it
(or refuses it for good, or its retries, spread over hours, run out), so that an SMTP server
that is down, slow or refusing costs a request nothing and loses no mail. A mail keeps the
Message-ID it was built with through every attempt: if the server got an attempt whose
confirmation never came, the receiver sees the retry as the same mail. Without EMAIL_HOST, `chat-appliance dev` keeps every message in memory (`outbox`, shown at
/emails) and a production server sends nothing (`configured` is false; callers say so).
"""

from __future__ import annotations

import contextvars
import html
import logging
import re
import ssl
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional

from chat_appliance import models
from chat_appliance.db.connection import backend, on_commit, write_transaction
from chat_appliance.lib.database_outage import note_unavailable
from chat_appliance.models import database

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
# A connection to the SMTP server must open within this long (EMAIL_TIMEOUT_SECONDS, minutes, is
# for the server's answers once connected).
CONNECT_TIMEOUT_SECONDS = 30
# The longest wait between two attempts at one mail.
MAX_RETRY_SECONDS = 3600
# Mails sent at once (EMAIL_SENDERS' default).
DEFAULT_SENDERS = 4
# An idle sender looks at the queue at least this often (another process of the instance may
# have queued mail).
IDLE_POLL_SECONDS = 30.0


def lease_seconds(settings: "EmailSettings") -> float:
    """How long an attempt may last at most (connect, then a few answers of up to
    EMAIL_TIMEOUT_SECONDS each) before another sender may take the mail up again."""
    return CONNECT_TIMEOUT_SECONDS + 6 * settings.timeout


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
                   timeout=float(config.get("EMAIL_TIMEOUT_SECONDS", 600)),
                   attempts=max(1, int(config.get("EMAIL_SEND_ATTEMPTS", 20))),
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
    """Deliver one message now (the mailer's threads, and `send-test-email`). The connection
    must be made within CONNECT_TIMEOUT_SECONDS; then each answer of the server may take up to
    EMAIL_TIMEOUT_SECONDS (RFC 5321 section 4.5.3.2 gives the end of DATA 10 minutes: a server
    that checks a mail before confirming it is slow, not gone, and an attempt abandoned early may
    well have been delivered)."""
    import smtplib

    host = settings.host or "localhost"
    connect_timeout = min(settings.timeout, CONNECT_TIMEOUT_SECONDS)
    smtp: smtplib.SMTP
    if settings.use_ssl:
        smtp = smtplib.SMTP_SSL(host, settings.port, timeout=connect_timeout, context=ssl.create_default_context())
    else:
        smtp = smtplib.SMTP(host, settings.port, timeout=connect_timeout)
    with smtp:
        if smtp.sock is not None:
            smtp.sock.settimeout(settings.timeout)
        smtp.timeout = settings.timeout
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


def retry_delay(settings: EmailSettings, attempt: int) -> float:
    """How long after failed attempt number `attempt` (from 1) the next one comes: doubling from
    EMAIL_RETRY_SECONDS up to MAX_RETRY_SECONDS, so that the default 20 attempts span about
    sixteen hours (an SMTP server down overnight loses nothing) without hammering it."""
    return min(settings.retry_seconds * 2 ** (attempt - 1), MAX_RETRY_SECONDS)


@dataclass
class Queued:
    """A mail taken from the queue for one attempt."""

    id: int
    message: EmailMessage
    recipient: str
    subject: str
    attempts: int  # this attempt's number, from 1


class MemoryQueue:
    """The queue of a mailer without a database (tests of the mailer alone): the same retries,
    kept in memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: dict[int, list] = {}  # id -> [raw, recipient, subject, due_at, attempts]
        self._next = 1

    def add(self, raw: bytes, recipient: str, subject: str, due_at: float) -> None:
        with self._lock:
            self._rows[self._next] = [raw, recipient, subject, due_at, 0]
            self._next += 1

    def claim(self, now: float, lease: float) -> Optional[tuple]:
        with self._lock:
            due = [(row[3], key) for key, row in self._rows.items() if row[3] <= now]
            if not due:
                return None
            key = min(due)[1]
            row = self._rows[key]
            row[3], row[4] = now + lease, row[4] + 1
            return key, row[0], row[1], row[2], row[4]

    def done(self, key: int) -> None:
        with self._lock:
            self._rows.pop(key, None)

    def later(self, key: int, due_at: float, error: str) -> None:
        with self._lock:
            if key in self._rows:
                self._rows[key][3] = due_at

    def after_commit(self, callback: Callable[[], Any]) -> None:
        callback()

    def next_due(self) -> Optional[float]:
        with self._lock:
            return min((row[3] for row in self._rows.values()), default=None)


class DatabaseQueue:
    """The queue in the outgoing_email table: mail survives a restart, and any process of the
    instance may send it (claiming a row is one conditional UPDATE)."""

    def add(self, raw: bytes, recipient: str, subject: str, due_at: float) -> None:

        with write_transaction():
            models.OutgoingEmail.create(recipient=recipient[:320], subject=subject, message=raw, queued_at=time.time(),
                                 due_at=due_at, attempts=0)

    def claim(self, now: float, lease: float) -> Optional[tuple]:

        with database.connection_context():
            while True:
                row = (models.OutgoingEmail.select(models.OutgoingEmail.id, models.OutgoingEmail.attempts)
                       .where(models.OutgoingEmail.due_at <= now).order_by(models.OutgoingEmail.due_at).first())
                if row is None:
                    return None
                with write_transaction():
                    taken = (models.OutgoingEmail.update(due_at=now + lease, attempts=models.OutgoingEmail.attempts + 1)
                             .where((models.OutgoingEmail.id == row.id) & (models.OutgoingEmail.due_at <= now)).execute())
                if taken:
                    mail = models.OutgoingEmail.get_by_id(row.id)
                    return mail.id, bytes(mail.message), mail.recipient, mail.subject, mail.attempts

    def done(self, key: int) -> None:

        with database.connection_context(), write_transaction():
            models.OutgoingEmail.delete().where(models.OutgoingEmail.id == key).execute()

    def later(self, key: int, due_at: float, error: str) -> None:

        with database.connection_context(), write_transaction():
            models.OutgoingEmail.update(due_at=due_at, last_error=error[:1000]).where(models.OutgoingEmail.id == key).execute()

    def after_commit(self, callback: Callable[[], Any]) -> None:

        on_commit(callback)

    def next_due(self) -> Optional[float]:
        from peewee import fn


        with database.connection_context():
            return models.OutgoingEmail.select(fn.MIN(models.OutgoingEmail.due_at)).scalar()


class Mailer:
    """The app's outgoing mail: `send` queues a message and returns; a few background threads
    deliver the queue.

    `config` is the app's configuration mapping, read at each message (so a test, or an operator
    with a new password file, changes it without a new mailer). With `keep=True` (development
    mode), messages are kept in `outbox` when no EMAIL_HOST is set. With `durable=True` (the
    app's mailer) the queue is the database's outgoing_email table: a mail stays there until the
    SMTP server confirms it, across restarts. EMAIL_SENDERS threads send independent mails at
    once, so that one slow or failing mail holds no other back."""

    def __init__(self, config: Mapping[str, Any], *, keep: bool = False, durable: bool = False,
                 clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self.keep = keep
        self.outbox: list = []
        self._clock = clock
        self._queue: Any = DatabaseQueue() if durable else MemoryQueue()
        self._threads: list = []
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._closed = False
        self._in_flight: dict[int, int] = {}  # thread id -> the queue id it is sending

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
            closed = self._closed
        if closed and isinstance(self._queue, MemoryQueue):
            log.warning("email to %s not queued: the server is stopping", message["To"])
            return
        # Stored even while stopping: the next start sends it.
        self._queue.add(message.as_bytes(), str(message["To"]), str(message["Subject"]), self._clock())
        self.start()
        self._queue.after_commit(self._notify)  # a sender woken before the COMMIT would not see it

    def start(self) -> None:
        """Start the sending threads (at once in `serve`, so that mail queued before a restart
        goes out without waiting for a new one)."""
        with self._lock:
            if self._closed or self._threads:
                return
            count = max(1, int(self.config.get("EMAIL_SENDERS", DEFAULT_SENDERS)))
            for number in range(count):
                # Each sender in a copy of this context: the database of the app that started it.
                thread = threading.Thread(target=contextvars.copy_context().run, args=(self._work,),
                                          name=f"mailer-{number + 1}", daemon=True)
                self._threads.append(thread)
                thread.start()

    def _notify(self) -> None:
        with self._wake:
            self._wake.notify_all()

    def _work(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
            try:
                settings = self.settings()
                taken = self._queue.claim(self._clock(), lease_seconds(settings))
            except OSError as error:  # the password file cannot be read
                log.error("email not sent: cannot read EMAIL_HOST_PASSWORD_FILE: %s", error)
                taken = None
            except Exception as error:  # the database: try again in a while
                if backend().unavailable(error):  # an outage: logged once, by whoever meets it first
                    note_unavailable(error)
                else:
                    log.exception("the mail queue could not be read")
                taken = None
            if taken is None:
                self._idle()
                continue
            key, raw, recipient, subject, attempt = taken
            with self._lock:
                self._in_flight[threading.get_ident()] = key
            try:
                self._attempt(settings, key, raw, recipient, subject, attempt)
            finally:
                with self._lock:
                    self._in_flight.pop(threading.get_ident(), None)

    def _idle(self) -> None:
        """Wait for a new mail, the next retry, or IDLE_POLL_SECONDS (another process may queue)."""
        try:
            due = self._queue.next_due()
        except Exception:  # noqa: BLE001 - the claim just failed or found nothing: poll
            due = None
        wait = IDLE_POLL_SECONDS if due is None else min(IDLE_POLL_SECONDS, max(0.01, due - self._clock()))
        with self._wake:
            if not self._closed:
                self._wake.wait(wait)

    def _attempt(self, settings: EmailSettings, key: int, raw: bytes, recipient: str, subject: str,
                 attempt: int) -> None:
        """One attempt: the mail leaves the queue once the server confirms it or refuses it for
        good, or after its last attempt; otherwise it is due again after retry_delay. One log
        line per failure, naming the recipient, the attempt and the reason."""
        import email
        import email.policy
        import smtplib

        message = email.message_from_bytes(raw, policy=email.policy.SMTP)
        try:
            smtp_send(settings, message)  # type: ignore[arg-type]
        except (OSError, smtplib.SMTPException) as error:
            permanent = is_permanent(error)
            last = attempt >= settings.attempts or permanent
            reason = f"{type(error).__name__}: {error}"
            log.warning("email to %s (%s) failed, attempt %d of %d%s: %s", recipient, subject, attempt,
                        settings.attempts, "; giving up" if last else "; will retry", reason)
            if last:
                self._queue.done(key)
            else:
                self._queue.later(key, self._clock() + retry_delay(settings, attempt), reason)
            return
        self._queue.done(key)

    def close(self, timeout: float = 5.0) -> None:
        """Stop the threads. Queued mail stays queued (in the database: the next start sends
        it); a mail being sent now is put back as due, to be sent again, with the same
        Message-ID, by the next start if this attempt does not finish within `timeout`."""
        with self._lock:
            self._closed = True
            threads = list(self._threads)
            self._wake.notify_all()
        deadline = time.monotonic() + timeout
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        with self._lock:
            unfinished = list(self._in_flight.values())
        for key in unfinished:
            try:
                self._queue.later(key, self._clock(), "the server stopped during the attempt")
            except Exception:  # noqa: BLE001 - the lease brings it back later anyway
                log.exception("could not put an unfinished mail back in the queue")


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
