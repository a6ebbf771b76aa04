"""The outgoing mail queue against a real SMTP server on loopback (aiosmtpd): mail survives an
SMTP server that is down for longer than a few attempts, a slow server gets each mail once while
other mail goes out meanwhile, a stopped server's queued mail goes out after its restart, and the
Welcome Bot's greeting mails nobody."""

import logging
import time

import requests

from ..support.helpers import PASSWORD, ok
from ..support.serve_process import ServeProcess
from ..support.smtp_sink import SmtpSink, free_port

XHR = {"X-Requested-With": "XMLHttpRequest"}
HAMLET = "hamlet@zulip.example"
OTHELLO = "othello@zulip.example"


def request_reset(client, email):
    response = client.post("/accounts/password/reset", data={"email": email}, headers=XHR)
    assert response.status_code == 200, response.get_json()


def failures(caplog):
    return [r.getMessage() for r in caplog.records if r.name == "chat_appliance.clients.send_email"]


def test_mail_waits_out_an_smtp_server_that_is_down_for_many_attempts(org, app, caplog):
    """With the SMTP server down for more attempts than a few quick retries, is the mail kept and
    delivered, once, when the server comes up?"""
    port = free_port()
    app.config.update(EMAIL_HOST="127.0.0.1", EMAIL_PORT=port, EMAIL_RETRY_SECONDS=0.05,
                      NOREPLY_EMAIL_ADDRESS="noreply@chat.example.com")
    caplog.set_level(logging.WARNING, logger="chat_appliance.clients.send_email")
    request_reset(app.test_client(), HAMLET)
    deadline = time.monotonic() + 10
    while len(failures(caplog)) < 4:
        assert time.monotonic() < deadline, failures(caplog)
        time.sleep(0.02)
    assert not any("giving up" in line for line in failures(caplog))
    sink = SmtpSink(port)
    sink.controller.start()
    try:
        [message] = sink.wait(timeout=15)
        assert message["To"].addresses[0].addr_spec == HAMLET
        assert len(sink.settle(0.5)) == 1
    finally:
        sink.controller.stop()


def test_a_slow_server_gets_each_mail_once_and_holds_no_other_mail_back(org, app, caplog):
    """With an SMTP server that takes 12 s to confirm one mail (longer than a short client
    timeout, well within RFC 5321's ten minutes), is that mail delivered exactly once, with no
    failure logged, while another address's mail arrives meanwhile?"""
    sink = SmtpSink(delay=lambda envelope: 12 if HAMLET in envelope.rcpt_tos else 0)
    sink.controller.start()
    try:
        app.config.update(sink.config(), EMAIL_RETRY_SECONDS=0.2)
        caplog.set_level(logging.WARNING, logger="chat_appliance.clients.send_email")
        client = app.test_client()
        request_reset(client, HAMLET)
        [first] = sink.wait()
        started = time.monotonic()
        request_reset(client, OTHELLO)
        second = sink.wait(2)[1]
        assert second["To"].addresses[0].addr_spec == OTHELLO
        assert time.monotonic() - started < 5, "the second mail waited for the slow one"
        time.sleep(13)
        received = sink.settle(0.5)
        assert [m["To"].addresses[0].addr_spec for m in received] == [HAMLET, OTHELLO]
        assert failures(caplog) == []
    finally:
        sink.controller.stop()


def test_a_retry_after_an_unconfirmed_attempt_is_the_same_mail(org, app, caplog):
    """When the server keeps a mail but its confirmation comes after the client's timeout, is the
    retry the same mail (one Message-ID, set once), so that the receiver can drop the copy?"""
    slow_once = {"left": 1}

    def delay(envelope):
        if slow_once["left"]:
            slow_once["left"] -= 1
            return 2
        return 0

    sink = SmtpSink(delay=delay)
    sink.controller.start()
    try:
        app.config.update(sink.config(), EMAIL_RETRY_SECONDS=0.05, EMAIL_TIMEOUT_SECONDS=0.5)
        request_reset(app.test_client(), HAMLET)
        copies = sink.wait(2)
        assert copies[0]["Message-ID"] and copies[0]["Message-ID"] == copies[1]["Message-ID"]
        assert copies[0].as_bytes() == copies[1].as_bytes()
    finally:
        sink.controller.stop()


def test_mail_queued_at_sigterm_goes_out_after_the_restart(tmp_path):
    """With the SMTP server down, does a mail queued before serve stops on SIGTERM stay queued and
    go out, once, after serve starts again with the server up?"""
    port = free_port()
    env = {"CHAT_APPLIANCE_EMAIL_HOST": "127.0.0.1", "CHAT_APPLIANCE_EMAIL_PORT": str(port),
           "CHAT_APPLIANCE_NOREPLY_EMAIL_ADDRESS": "noreply@chat.example.com",
           "CHAT_APPLIANCE_EMAIL_RETRY_SECONDS": "0.2"}
    instance = tmp_path / "instance"
    server = ServeProcess(instance, env=env)
    owner = server.email
    try:
        answer = requests.post(server.url + "/accounts/password/reset", data={"email": owner}, headers=XHR,
                               timeout=10)
        assert answer.status_code == 200, answer.text
        deadline = time.monotonic() + 10
        while "failed, attempt 1" not in "".join(server.output):
            assert time.monotonic() < deadline, "".join(server.output)
            time.sleep(0.05)
    finally:
        assert server.stop() == 0
    sink = SmtpSink(port)
    sink.controller.start()
    try:
        again = ServeProcess(instance, env=env)
        try:
            [message] = sink.wait(timeout=15)
            assert message["To"].addresses[0].addr_spec == owner
            assert message["Subject"].startswith("Reset your password")
            assert len(sink.settle(1)) == 1
        finally:
            again.stop()
    finally:
        sink.controller.stop()


def test_the_welcome_bot_greeting_mails_nobody(org, app, mail):
    """Does a new account that never signs in get no missed-message mail for the Welcome Bot's
    greeting (sent, as in Zulip, without notifications outside the app)?"""
    app.config["MISSED_MESSAGE_EMAIL_DELAY_SECONDS"] = 0.3
    ok(org.client(org.admin).post("users", email="newcomer@zulip.example", password=PASSWORD,
                                  full_name="New Comer"))
    assert mail.settle(1.5) == []
    # Control: a direct message from a person to the same new account is mailed.
    from chat_appliance.models import UserProfile, database

    with database.connection_context():
        newcomer = UserProfile.get(UserProfile.delivery_email == "newcomer@zulip.example")
    ok(org.client(org.hamlet).post("messages", type="direct", to=[newcomer.id], content="hello"))
    [message] = mail.wait()
    assert message["To"].addresses[0].addr_spec == "newcomer@zulip.example"
