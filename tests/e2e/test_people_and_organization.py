"""End to end: the zulip 0.9.1 Client's methods for people and the organization (alert words,
custom emoji), and the other such endpoints through Client.call_endpoint, against a real `serve`
process."""

import pytest
import requests
import zulip

from ..support.clients import check
from ..support.serve_process import ServeProcess

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    proc = ServeProcess(tmp_path_factory.mktemp("people") / "instance")
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def owner(server):
    return zulip.Client(email=server.email, api_key=server.api_key, site=server.url)


def test_alert_word_methods(owner):
    """Do add_alert_words, get_alert_words and remove_alert_words work?"""
    assert check(owner.add_alert_words(["castle", "ghost"]))["alert_words"] == ["castle", "ghost"]
    assert check(owner.remove_alert_words(["ghost"]))["alert_words"] == ["castle"]
    assert check(owner.get_alert_words())["alert_words"] == ["castle"]


def test_custom_emoji_methods(owner, server, tmp_path):
    """Do upload_custom_emoji, get_realm_emoji and delete_custom_emoji work, and is the image served?"""
    image = tmp_path / "green_tick.png"
    image.write_bytes(PNG)
    with image.open("rb") as fp:
        check(owner.upload_custom_emoji("green_tick", fp))
    [entry] = check(owner.get_realm_emoji())["emoji"].values()
    assert entry["name"] == "green_tick" and not entry["deactivated"]
    assert requests.get(server.url + entry["source_url"], timeout=10).content == PNG
    check(owner.delete_custom_emoji("green_tick"))
    [entry] = check(owner.get_realm_emoji())["emoji"].values()
    assert entry["deactivated"] is True


def test_status_mute_and_org_endpoints(owner):
    """Do the status, muted-user, playground, settings-default and group-member endpoints answer
    success through the library's call_endpoint, and the push and call endpoints Zulip's errors?"""
    me = check(owner.get_profile())["user_id"]
    check(owner.call_endpoint("users/me/status", method="POST", request={"status_text": "busy",
                                                                            "emoji_name": "car"}))
    assert check(owner.call_endpoint(f"users/{me}/status", method="GET"))["status"]["status_text"] == "busy"
    other = check(owner.create_user({"email": "ann@example.com", "password": "a-long-password",
                                     "full_name": "Ann"}))["user_id"]
    check(owner.call_endpoint(f"users/me/muted_users/{other}", method="POST"))
    check(owner.call_endpoint(f"users/me/muted_users/{other}", method="DELETE"))
    playground = check(owner.call_endpoint("realm/playgrounds", method="POST", request={
        "name": "Python", "pygments_language": "Python", "url_template": "https://py.example/?c={code}"}))["id"]
    check(owner.call_endpoint(f"realm/playgrounds/{playground}", method="DELETE"))
    check(owner.call_endpoint("realm/user_settings_defaults", method="PATCH",
                              request={"twenty_four_hour_time": True}))
    groups = check(owner.get_user_groups())["user_groups"]
    owners = next(g["id"] for g in groups if g["name"] == "role:owners")
    assert check(owner.call_endpoint(f"user_groups/{owners}/members/{me}", method="GET"))["is_user_group_member"]
    result = owner.call_endpoint("users/me/android_gcm_reg_id", method="POST", request={"token": "abc"})
    assert result["code"] == "PUSH_SERVICE_NOT_CONFIGURED", result
    result = owner.call_endpoint("calls/bigbluebutton/create", method="GET", request={"meeting_name": "m"})
    assert result["result"] == "error" and result["msg"] == "BigBlueButton is not configured.", result


def test_deactivate_own_account(owner, server):
    """Does DELETE /users/me deactivate the caller, through a client holding their own key?"""
    check(owner.create_user({"email": "leaver@example.com", "password": "a-long-password", "full_name": "Leaver"}))
    key = requests.post(server.url + "/api/v1/fetch_api_key", timeout=10,
                        data={"username": "leaver@example.com", "password": "a-long-password"}).json()["api_key"]
    leaver = zulip.Client(email="leaver@example.com", api_key=key, site=server.url)
    check(leaver.call_endpoint("users/me", method="DELETE"))
    assert leaver.get_profile()["code"] == "USER_DEACTIVATED"


def test_export_endpoints(owner, server):
    """Do POST /export/realm, GET /export/realm and GET /export/realm/consents work through the
    library, and does the listed URL download the archive from the real server?"""
    export_id = check(owner.call_endpoint("export/realm", method="POST", request={"export_type": 1}))["id"]
    [listed] = [e for e in check(owner.call_endpoint("export/realm", method="GET"))["exports"]
                if e["id"] == export_id]
    assert listed["pending"] is False and listed["export_url"]
    path = "/" + listed["export_url"].split("://", 1)[1].split("/", 1)[1]
    assert requests.get(server.url + path, timeout=10).content[:2] == b"\x1f\x8b"
    consents = check(owner.call_endpoint("export/realm/consents", method="GET"))["export_consents"]
    assert consents and all(set(c) == {"user_id", "consented"} for c in consents)
