"""End to end: unmodified zulip-bots 0.9.1 bots (`zulip-run-bot`) against a real `serve`.

Each test creates a bot with POST /bots, writes its zuliprc, starts `zulip-run-bot` as a
subprocess, talks to it by direct message through the zulip library, and checks its answer
through the API."""

import pytest
import zulip

from ..support.clients import LineReader, script_path, wait_for, write_zuliprc
from ..support.serve_process import ServeProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One serve for the module: each test makes a bot of its own and reads only that bot's messages."""
    proc = ServeProcess(tmp_path_factory.mktemp("bots") / "instance")
    yield proc
    proc.stop()


@pytest.fixture(scope="module")
def owner(server):
    return zulip.Client(email=server.email, api_key=server.api_key, site=server.url)


@pytest.fixture
def run_bot(server, owner, tmp_path):
    """start(bot_name, bot_config=None) -> the bot's user dict, with `zulip-run-bot <bot_name>` running as it
    (with --bot-config-file holding bot_config, when given)."""
    started = []

    def start(bot_name, bot_config=None):
        created = owner.call_endpoint("bots", method="POST",
                                      request={"full_name": f"{bot_name} bot", "short_name": bot_name})
        assert created["result"] == "success", created
        bot = owner.get_user_by_id(created["user_id"])["user"]
        rc = write_zuliprc(tmp_path / f"{bot_name}.zuliprc", bot["email"], created["api_key"], server.url)
        args = [script_path("zulip-run-bot"), bot_name, "--config-file", str(rc)]
        if bot_config is not None:
            config_file = tmp_path / f"{bot_name}.conf"
            config_file.write_text(bot_config)
            args += ["--bot-config-file", str(config_file)]
        process = LineReader(args)
        started.append(process)
        process.next_line("Running ", timeout=60)
        return bot

    yield start
    for process in started:
        process.stop()


def direct_until_answered(owner, bot, content, answered, tries=10):
    """Send a direct message to the bot until `answered()` holds: the bot registers its queue
    only after it printed its banner, and a message sent before that never reaches it."""
    for _ in range(tries):
        sent = owner.send_message({"type": "private", "to": [bot["email"]], "content": content})
        assert sent["result"] == "success", sent
        try:
            return sent, wait_for(answered, timeout=5)
        except AssertionError:
            continue
    raise AssertionError(f"{bot['full_name']} never answered")


def bot_messages(owner, bot):
    """Messages the bot sent, oldest first, in Markdown."""
    found = owner.get_messages({"anchor": "newest", "num_before": 50, "num_after": 0, "apply_markdown": False,
                                "narrow": [{"operator": "sender", "operand": bot["user_id"]}]})
    assert found["result"] == "success", found
    return found["messages"]


def test_helloworld_answers_and_reacts(run_bot, owner):
    """Does the helloworld bot answer a direct message with "beep boop" in the same conversation
    and react to it with :wave: (a reaction by name only, the server resolving the code)?"""
    bot = run_bot("helloworld")
    sent, [reply, *_] = direct_until_answered(owner, bot, "hello bot", lambda: bot_messages(owner, bot))
    assert reply["content"] == "beep boop" and reply["type"] == "private"
    me = owner.get_profile()["user_id"]
    assert sorted(r["id"] for r in reply["display_recipient"]) == sorted([me, bot["user_id"]])

    def waved():
        reactions = owner.call_endpoint(f"messages/{sent['id']}", method="GET")["message"]["reactions"]
        return [r for r in reactions if r["user_id"] == bot["user_id"]]

    [reaction] = wait_for(waved, timeout=10)
    assert reaction["emoji_name"] == "wave" and reaction["emoji_code"] == "1f44b"
    assert reaction["reaction_type"] == "unicode_emoji"


def test_incrementor_keeps_state_and_edits_its_message(run_bot, owner):
    """Does the incrementor bot answer "1", then on the next message edit that same answer to
    "2" (PATCH /messages/{id}), keeping its count in bot storage?"""
    bot = run_bot("incrementor")
    _sent, [first] = direct_until_answered(owner, bot, "count", lambda: bot_messages(owner, bot))
    assert first["content"] == "1"
    assert owner.send_message({"type": "private", "to": [bot["email"]], "content": "again"})["result"] == "success"
    wait_for(lambda: [m["content"] for m in bot_messages(owner, bot)] == ["2"], timeout=10)
    assert [m["id"] for m in bot_messages(owner, bot)] == [first["id"]]
    bot_owner_view = owner.call_endpoint(f"messages/{first['id']}", method="GET")
    assert bot_owner_view["raw_content"] == "2"


def test_followup_answers_a_mention_in_a_channel(run_bot, owner, server):
    """Does the followup bot, mentioned as `@**Name**` at the start of a channel message, see the
    `mentioned` flag and post the note to its own channel under the sender's email as topic?"""
    assert owner.add_subscriptions([{"name": "followup"}])["result"] == "success"
    bot = run_bot("followup", bot_config="[followup]\nstream = followup\n")
    subscribed = owner.add_subscriptions([{"name": "general"}], principals=[bot["user_id"]])
    assert subscribed["result"] == "success", subscribed

    def noted():
        return [m for m in bot_messages(owner, bot) if m["display_recipient"] == "followup"]

    for _ in range(10):
        sent = owner.send_message({"type": "stream", "to": "general", "subject": "meeting",
                                   "content": f"@**{bot['full_name']}** call the plumber"})
        assert sent["result"] == "success", sent
        try:
            [note, *_] = wait_for(noted, timeout=5)
            break
        except AssertionError:
            continue
    else:
        raise AssertionError("the followup bot never posted")
    assert note["subject"] == server.email
    assert note["content"] == f"from {server.email}: call the plumber"
