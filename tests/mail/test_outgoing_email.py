"""Outgoing email against a real SMTP server on loopback (aiosmtpd): the mailer, send-test-email,
and password reset through HTTP."""

import logging
import re
import socket
import threading
import time

import pytest

from chat_appliance.clients.send_email import Mailer, standard_email

from ..support.helpers import PASSWORD, run
from ..support.smtp_sink import SmtpSink, body, free_port
from ..support.webclient import SessionClient, sign_in

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
    """When the SMTP server is down for the first attempt, does `send` leave the attempt to the
    mailer's own threads (the caller never waits on the server), the failure get one log line
    saying it will retry, and the mail arrive on the next attempt?"""
    port = free_port()
    late = SmtpSink(port)
    caplog.set_level(logging.WARNING, logger="chat_appliance.clients.send_email")
    mailer = Mailer({**late.config(), "EMAIL_RETRY_SECONDS": 0.3})
    started = False
    try:
        mailer.send(sample())
        deadline = time.monotonic() + 5
        while not caplog.records:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        late.controller.start()
        started = True
        [message] = late.wait()
    finally:
        mailer.close()
        if started:
            late.controller.stop()
    assert message["Subject"] == "Hello"
    # Which thread made the refused attempt, not how long send() took: the time depends on the
    # machine's load, and the thread is what "the caller never waits" means.
    assert caplog.records[0].thread != threading.get_ident()
    [line] = [r.getMessage() for r in caplog.records]
    assert "attempt 1 of 20; will retry" in line and HAMLET in line and "ConnectionRefusedError" in line


def test_password_file_wins_over_the_inline_password(smtp, tmp_path):
    """Does EMAIL_HOST_PASSWORD_FILE's content (without its newline) win over EMAIL_HOST_PASSWORD?"""
    from chat_appliance.clients.send_email import EmailSettings

    secret = tmp_path / "smtp-password"
    secret.write_text("from-the-file\n")
    settings = EmailSettings.from_config({**smtp.config(), "EMAIL_HOST_PASSWORD": "inline",
                                          "EMAIL_HOST_PASSWORD_FILE": str(secret)})
    assert settings.password == "from-the-file"


def test_a_refusing_server_is_retried_and_logged_without_slowing_the_request(org, app, caplog):
    """With the SMTP port refusing connections, does the reset form still answer at once, and is
    each failed attempt logged, the last one giving up?"""
    app.config.update(EMAIL_HOST="127.0.0.1", EMAIL_PORT=free_port(), EMAIL_SEND_ATTEMPTS=3, EMAIL_RETRY_SECONDS=0.05)
    caplog.set_level(logging.WARNING, logger="chat_appliance.clients.send_email")
    started = time.monotonic()
    response = app.test_client().post("/accounts/password/reset", data={"email": HAMLET}, headers=XHR)
    assert response.status_code == 200 and time.monotonic() - started < 1
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any("giving up" in r.getMessage() for r in caplog.records):
        time.sleep(0.05)
    lines = [r.getMessage() for r in caplog.records if r.name == "chat_appliance.clients.send_email"]
    assert len(lines) == 3, lines
    assert "attempt 1 of 3; will retry" in lines[0] and "attempt 3 of 3; giving up" in lines[2]
    assert all(HAMLET in line and "ConnectionRefusedError" in line for line in lines)


def test_a_hanging_server_never_slows_a_request(org, app, caplog):
    """With an SMTP server that accepts the connection and never answers, does the request answer
    at once, and is the timeout logged?"""
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(5)
    try:
        app.config.update(EMAIL_HOST="127.0.0.1", EMAIL_PORT=silent.getsockname()[1], EMAIL_SEND_ATTEMPTS=1,
                          EMAIL_TIMEOUT_SECONDS=4)
        caplog.set_level(logging.WARNING, logger="chat_appliance.clients.send_email")
        started = time.monotonic()
        response = app.test_client().post("/accounts/password/reset", data={"email": HAMLET}, headers=XHR)
        # Well under the server's 4 s of silence, however busy the machine: the request never waits on it.
        assert response.status_code == 200 and time.monotonic() - started < 3
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not caplog.records:
            time.sleep(0.05)
        assert "giving up" in caplog.records[0].getMessage() and "timed out" in caplog.records[0].getMessage()
    finally:
        silent.close()


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


# --- password reset -----------------------------------------------------------------------------


def reset_link(message):
    return LINK_RE.search(body(message, "plain")).group(0)


def request_reset(client, email):
    return client.post("/accounts/password/reset", data={"email": email}, headers=XHR)


def test_reset_answers_the_same_for_known_and_unknown_addresses(org, app, mail):
    """Does the form answer identically for an address with an account and one without, the first
    getting a link and the second a note that there is no account?"""
    client = app.test_client()
    known, unknown = request_reset(client, HAMLET), request_reset(client, "nobody@zulip.example")
    assert known.status_code == unknown.status_code == 200
    assert known.get_json() == unknown.get_json()
    assert known.get_json()["result"] == "success"
    messages = mail.wait(2)
    by_address = {m["To"].addresses[0].addr_spec: m for m in messages}
    assert LINK_RE.search(body(by_address[HAMLET], "plain"))
    assert by_address[HAMLET]["Subject"] == "Reset your password for " + org.realm.name
    assert "There is no account" in body(by_address["nobody@zulip.example"], "plain")
    assert not LINK_RE.search(body(by_address["nobody@zulip.example"], "plain"))


def test_reset_link_sets_the_password_once_and_ends_other_sessions(org, app, mail):
    """Does the mailed link, built from the realm URL, set a new password with which one signs in
    (the old one failing), end the account's other browser sessions, and then refuse a second use?"""
    other_browser = app.test_client()
    session = SessionClient.signed_in(other_browser, HAMLET, PASSWORD)
    assert session.get("users/me").status_code == 200
    client = app.test_client()
    request_reset(client, HAMLET)
    link = reset_link(mail.wait()[0])
    realm_url = org.realm.url.rstrip("/")
    assert link.startswith(realm_url + "/accounts/password/reset/")
    path = link[len(realm_url):]
    assert client.get(path).status_code == 200  # the page
    assert client.get(path + "/check").get_json()["email"] == HAMLET
    answer = client.post(path, data={"new_password": "a-new-secret"}, headers=XHR)
    assert answer.status_code == 200, answer.get_json()
    assert sign_in(client, HAMLET, "a-new-secret").status_code == 200
    assert sign_in(app.test_client(), HAMLET, PASSWORD).status_code != 200
    assert session.get("users/me").status_code == 401
    again = client.post(path, data={"new_password": "another-one"}, headers=XHR)
    assert again.status_code == 400
    assert again.get_json()["msg"] == "The password reset link has expired or has already been used."


def test_reset_link_expires_after_a_day(org, app, mail, monkeypatch):
    """Is a link refused once 24 hours have passed since it was mailed?"""
    client = app.test_client()
    request_reset(client, HAMLET)
    path = "/accounts/password/reset/" + reset_link(mail.wait()[0]).rsplit("/", 1)[1]
    later = time.time() + 24 * 3600 + 5
    monkeypatch.setattr(time, "time", lambda: later)
    answer = client.post(path, data={"new_password": "a-new-secret"}, headers=XHR)
    assert answer.status_code == 400
    assert sign_in(client, HAMLET, PASSWORD).status_code == 200


def test_a_forged_or_altered_token_is_refused(org, app, mail):
    """Is a token whose signature was altered, or made up, refused?"""
    client = app.test_client()
    request_reset(client, HAMLET)
    token = reset_link(mail.wait()[0]).rsplit("/", 1)[1]
    altered = token[:-1] + ("0" if token[-1] != "0" else "1")
    for bad in (altered, "1-0-00", "nonsense"):
        answer = client.post(f"/accounts/password/reset/{bad}", data={"new_password": "a-new-secret"}, headers=XHR)
        assert answer.status_code == 400, bad
    assert sign_in(client, HAMLET, PASSWORD).status_code == 200


def test_reset_mails_to_one_address_are_rate_limited_quietly(org, app, mail):
    """With rate limits on, is a third request for one address within the hour answered the same
    but not mailed?"""
    app.config["RATE_LIMITING"] = True
    client = app.test_client()
    answers = [request_reset(client, HAMLET).get_json() for _ in range(3)]
    assert answers[0] == answers[1] == answers[2]
    assert len(mail.wait(2)) == 2
    assert len(mail.settle()) == 2


@pytest.mark.parametrize("email", [
    '"Click https://evil.example/verify now" <hamlet@zulip.example>',
    "Click https://evil.example/verify now <x>@zulip.example",
    "King Hamlet <hamlet@zulip.example>",
    "hamlet@zulip.example, othello@zulip.example",
    "not an address",
])
def test_reset_form_refuses_anything_but_a_plain_address(org, app, mail, email):
    """Is an address with a display name, several addresses, or free text refused with a 400,
    and nothing mailed (the text would otherwise be repeated in a mail to someone else)?"""
    response = request_reset(app.test_client(), email)
    assert response.status_code == 400
    assert response.get_json()["msg"] == "Enter a valid email address."
    assert mail.settle(0.3) == []


def test_reset_rate_limit_counts_one_mailbox_whatever_its_tag_or_case(org, app, mail):
    """With rate limits on, do hamlet@, Hamlet+1@ and hamlet+2@ share one allowance (the third
    is answered the same but not mailed), since they all reach one mailbox?"""
    app.config["RATE_LIMITING"] = True
    client = app.test_client()
    answers = [request_reset(client, email).get_json()
               for email in (HAMLET, "Hamlet+1@zulip.example", "hamlet+2@zulip.example")]
    assert answers[0] == answers[1] == answers[2]
    assert len(mail.wait(2)) == 2
    assert len(mail.settle()) == 2


def test_reset_form_needs_the_same_origin_header(org, app, mail):
    """Is a reset request without X-Requested-With (a cross-site form) refused, and nothing mailed?"""
    response = app.test_client().post("/accounts/password/reset", data={"email": HAMLET})
    assert response.status_code == 403
    assert mail.settle(0.3) == []


# --- email address change ----------------------------------------------------------------------

CONFIRM_RE = re.compile(r"https?://\S+(/accounts/confirm_new_email/\S+)")


def delivery_email(org, user):
    from chat_appliance.models import UserProfile, database

    with database.connection_context():
        return UserProfile.get_by_id(user.id).delivery_email


def test_email_change_takes_effect_when_the_mailed_link_is_used(org, app, mail):
    """Does PATCH /settings with `email` mail a confirmation link to the new address and change
    nothing until the link is used, then change the address (once: the link is then spent)?"""
    hamlet = org.client(org.hamlet)
    answer = hamlet.patch("settings", email="prince@zulip.example")
    assert answer.status_code == 200, answer.get_json()
    assert answer.get_json()["account_email"] == "Check your email for a confirmation link."
    [message] = mail.wait()
    assert message["To"].addresses[0].addr_spec == "prince@zulip.example"
    assert delivery_email(org, org.hamlet) == HAMLET
    path = CONFIRM_RE.search(body(message, "plain")).group(1)
    client = app.test_client()
    assert client.get(path).status_code == 200  # the page; a GET changes nothing
    assert delivery_email(org, org.hamlet) == HAMLET
    done = client.post(path, headers=XHR)
    assert done.status_code == 200 and done.get_json()["email"] == "prince@zulip.example"
    assert delivery_email(org, org.hamlet) == "prince@zulip.example"
    again = client.post(path, headers=XHR)
    assert again.status_code == 400
    assert again.get_json()["msg"] == "The confirmation link has expired or has already been used."


def test_email_change_refusals_send_nothing(org, app, mail):
    """Is an address already in use refused, mailing nothing? (A server without email makes the
    change at once: tests/users/test_email_change.py.)"""
    hamlet = org.client(org.hamlet)
    taken = hamlet.patch("settings", email="othello@zulip.example")
    assert taken.status_code == 400 and taken.get_json()["msg"] == "Email is already in use."
    assert mail.settle(0.3) == []
    assert delivery_email(org, org.hamlet) == HAMLET
