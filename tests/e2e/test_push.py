"""End to end: a real `serve` registered with the push notification service stand-in by the
command line while it runs, notifying a phone's registered token of a direct message."""

import os
import time

import pytest

from ..support import pg
from ..support.browser import Site
from ..support.helpers import run
from ..support.push_service_standin import PushServiceStandIn


@pytest.fixture
def service():
    standin = PushServiceStandIn().start()
    yield standin
    standin.stop()


def test_registered_server_pushes_a_direct_message(tmp_path, service, monkeypatch):
    """Does a running server pick up register-push-service's credentials without a restart,
    forward the app's FCM token, and notify the stand-in of a DM to its owner, who is away?"""
    monkeypatch.setenv("CHAT_APPLIANCE_ZULIP_SERVICES_URL", service.url)
    monkeypatch.setenv("CHAT_APPLIANCE_PUSH_NOTIFICATION_RETRY_SECONDS", "0.1")
    instance = tmp_path / "instance"
    site = Site(instance)
    try:
        assert site.api("GET", "server_settings")["push_notifications_enabled"] is False
        env = dict(os.environ)
        if pg.ENABLED:  # the command works on the database serve was given (serve_process.py)
            env["CHAT_APPLIANCE_DATABASE_URL"] = pg.database_for_instance(instance)
        registered = run("register-push-service", "--instance", str(instance), "--agree-to-terms-of-service",
                         "--contact-email", "admin@chat.example.org", "--hostname", "chat.example.org", env=env)
        assert registered.returncode == 0, registered.stderr
        assert site.api("GET", "server_settings")["push_notifications_enabled"] is True

        _email, phone_user, phone_user_id = site.person("ana@chat.example.org", "Ana")
        site.api("POST", "users/me/android_gcm_reg_id", auth=phone_user, token="ana-phone")
        assert [d["token"] for d in service.devices] == ["ana-phone"]
        sent = site.api("POST", "messages", type="private", to=[phone_user_id], content="Are you there?")

        deadline = time.monotonic() + 20
        while not service.notifications and time.monotonic() < deadline:
            time.sleep(0.05)
        (body,) = service.notifications
        assert body["user_id"] == phone_user_id and body["android_devices"] == ["ana-phone"]
        assert (body["gcm_payload"]["event"], body["gcm_payload"]["zulip_message_id"],
                body["gcm_payload"]["content"]) == ("message", sent["id"], "Are you there?")
        assert service.problems == []
    finally:
        site.stop()
