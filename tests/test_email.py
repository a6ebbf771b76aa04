"""Outgoing email against a real SMTP server on loopback (aiosmtpd): the mailer, send-test-email,
and the send-test-email command."""

import logging
import re
import time

import pytest

from chat_appliance.lib.send_email import Mailer, standard_email

from .helpers import run
from .smtp_sink import SmtpSink, body, free_port

XHR = {"X-Requested-With": "XMLHttpRequest"}
HAMLET = "hamlet@zulip.example"
LINK_RE = re.compile(r"https?://\S+/accounts/password/reset/[0-9a-f]+-[0-9a-f]+-[0-9a-f]+")


def sample(to_name="King Hamlet", to_email=HAMLET, subject="Hello", sender_name="Zulip Dev"):
    return standard_email(noreply="noreply@chat.example.com", sender_name=sender_name, to_name=to_name,
                          to_email=to_email, subject=subject, paragraphs=["First <b>line</b>.", "Second."],
                          link=("Open", "https://chat.example.com/x?a=1&b=2"), footer="Sent by a test.")


def test_mailer_delivers_both_parts_with_the_headers(smtp):
    """Does a queued mail reach the SMTP server with Date, Message-ID, From, To, Subject, and a
    plain-text and an HTML part saying the same, the HTML escaped?"""
    mailer = Mailer(smtp.config())
    try:
        mailer.send(sample())
        [message] = smtp.wait()
    finally:
        mailer.close()
    assert message["From"] == "Zulip Dev <noreply@chat.example.com>"
    assert message["To"] == "King Hamlet <hamlet@zulip.example>"
    assert message["Subject"] == "Hello"
    assert message["Date"] and re.fullmatch(r"<[^<>@]+@chat\.example\.com>", message["Message-ID"])
    assert smtp.envelopes == [("noreply@chat.example.com", [HAMLET])]
    text, html = body(message, "plain"), body(message, "html")
    assert "First <b>line</b>." in text and "https://chat.example.com/x?a=1&b=2" in text
    assert "First &lt;b&gt;line&lt;/b&gt;." in html and 'href="https://chat.example.com/x?a=1&amp;b=2"' in html


@pytest.mark.parametrize("field", ["to_name", "subject", "sender_name"])
def test_header_injection_in_names_and_subjects_stays_in_one_header(smtp, field):
    """Does a name or subject carrying CR/LF and a header of its own stay one header line, adding
    no Bcc and no recipient?"""
    hostile = "Eve\r\nBcc: victim@evil.example\r\n\r\nInjected body"
    mailer = Mailer(smtp.config())
    try:
        mailer.send(sample(**{field: hostile}))
        [message] = smtp.wait()
    finally:
        mailer.close()
    assert message["Bcc"] is None
    assert smtp.envelopes[0][1] == [HAMLET]
    header = {"to_name": "To", "subject": "Subject", "sender_name": "From"}[field]
    assert "Bcc: victim@evil.example" in message[header] and "\n" not in message[header]


def test_an_address_with_a_line_break_is_refused_before_sending():
    """Is a recipient address with a line break refused when the mail is built?"""
    with pytest.raises(ValueError):
        sample(to_email="hamlet@zulip.example\r\nBcc: victim@evil.example")


def test_mailer_retries_a_refused_connection_then_delivers(caplog):
    """When the SMTP server is down for the first attempt, does `send` return at once, the failure
    get one log line saying it will retry, and the mail arrive on the next attempt?"""
    port = free_port()
    late = SmtpSink(port)
    waits = []

    def start_server_while_waiting(seconds):
        waits.append(seconds)
        late.controller.start()

    caplog.set_level(logging.WARNING, logger="chat_appliance.lib.send_email")
    mailer = Mailer({**late.config(), "EMAIL_RETRY_SECONDS": 0.01}, sleep=start_server_while_waiting)
    try:
        started = time.monotonic()
        mailer.send(sample())
        assert time.monotonic() - started < 0.1
        [message] = late.wait()
    finally:
        mailer.close()
        late.controller.stop()
    assert message["Subject"] == "Hello" and waits == [0.01]
    [line] = [r.getMessage() for r in caplog.records]
    assert "attempt 1 of 3; will retry" in line and HAMLET in line and "ConnectionRefusedError" in line


def test_password_file_wins_over_the_inline_password(smtp, tmp_path):
    """Does EMAIL_HOST_PASSWORD_FILE's content (without its newline) win over EMAIL_HOST_PASSWORD?"""
    from chat_appliance.lib.send_email import EmailSettings

    secret = tmp_path / "smtp-password"
    secret.write_text("from-the-file\n")
    settings = EmailSettings.from_config({**smtp.config(), "EMAIL_HOST_PASSWORD": "inline",
                                          "EMAIL_HOST_PASSWORD_FILE": str(secret)})
    assert settings.password == "from-the-file"


def test_send_test_email_command_sends_through_the_configured_server(smtp, instance):
    """Does `chat-appliance send-test-email ADDRESS` deliver a mail now, and say where it went?"""
    import json

    config = instance / "config.json"
    current = json.loads(config.read_text()) if config.exists() else {}
    config.write_text(json.dumps({**current, **smtp.config()}))
    result = run("send-test-email", "--instance", str(instance), "someone@example.org")
    assert result.returncode == 0, result.stderr
    assert f"127.0.0.1:{smtp.port}" in result.stdout
    [message] = smtp.wait()
    assert message["To"] == "someone@example.org" and message["Subject"] == "chat-appliance test email"
