"""TeamCity's integration: builds in tcWebHooks' legacy JSON format (tests/data/webhooks/teamcity/,
written from the plugin's documented payload) must give Zulip's topic and message exactly, a
personal build going to whoever ran it."""

import pytest

from chat_appliance.models import Message, database

from ..support.webhook_helpers import Case, check_case, check_ignored, incoming_bot, messages_from, post_fixture

URL = "https://teamcity.tidewater.example/viewLog.html?buildTypeId=Tides_Unit&buildId=8812"
LINKS = f"See [changes]({URL}&tab=buildChangesDiv) and [build log]({URL})."

CASES = [
    Case("success", "Tides :: Unit tests", f"Tides :: Unit tests build 214 was successful! :thumbs_up: {LINKS}"),
    Case("fixed", "Tides :: Unit tests (main)", f"Tides :: Unit tests build 214 has been fixed! :thumbs_up: {LINKS}"),
    Case("broken", "Tides :: Unit tests",
         f"Tides :: Unit tests build 214 is broken with status Tests failed: 3 (3 new)! :thumbs_down: {LINKS}"),
    Case("failure", "Tides :: Unit tests",
         f"Tides :: Unit tests build 214 is still broken with status Tests failed: 3! :thumbs_down: {LINKS}"),
    Case("start", "Tides :: Unit tests", f"Tides :: Unit tests build 214 has started. {LINKS}"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_teamcity_build(org, flask_client, case):
    """Does this TeamCity build post Zulip's topic and message?"""
    check_case(org, flask_client, "teamcity", case)


def test_teamcity_personal_build_goes_to_its_author(org, flask_client):
    """Is a personal build's result sent to the member who ran it, as a direct message?"""
    bot_id, key = incoming_bot(org)
    post_fixture(flask_client, "teamcity", key, "personal", stream="Denmark")
    [message] = messages_from(bot_id)
    assert message.stream_id is None
    assert message.content == ("Your personal build for Tides :: Unit tests build 214 is broken with status "
                               f"Tests failed: 1 (1 new)! :thumbs_down: {LINKS}")
    with database.connection_context():
        recipients = {um.user_profile_id for um in Message.get_by_id(message.id).usermessage_set}
    assert org.othello.id in recipients


@pytest.mark.parametrize("fixture", ["personal_unknown_user", "slack_format"])
def test_teamcity_posts_nothing(org, flask_client, fixture):
    """Are a personal build of someone unknown here and another plugin format answered with
    success and nothing posted?"""
    check_ignored(org, flask_client, "teamcity", fixture)
