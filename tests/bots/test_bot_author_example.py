"""The way a bot author tests a bot with the `chat_server` fixture this package installs as a
pytest plugin: a real server, real zulip.Client objects, no mocks."""

import time

import pytest


def echo_bot(client):
    """The bot under test: answers each direct message it has not answered with the text upper-cased."""
    messages = client.get_messages({"anchor": "newest", "num_before": 20, "num_after": 0,
                                    "narrow": [{"operator": "is", "operand": "dm"}], "apply_markdown": False})
    for message in messages["messages"]:
        if message["sender_email"] != client.email:
            client.send_message({"type": "private", "to": [message["sender_email"]],
                                 "content": message["content"].upper()})


def test_echo_bot_answers_in_capitals(chat_server):
    """Does the bot answer a person's direct message with the same text in capitals?"""
    bot = chat_server.create_bot("Echo Bot")
    ana = chat_server.create_user("Ana")
    assert ana.send_message({"type": "private", "to": [bot.email], "content": "hello"})["result"] == "success"
    echo_bot(bot)
    replies = ana.get_messages({"anchor": "newest", "num_before": 1, "num_after": 0, "apply_markdown": False})
    assert replies["messages"][-1]["content"] == "HELLO"
    assert replies["messages"][-1]["sender_email"] == bot.email


def test_fixture_makes_users_and_bots_and_resets(chat_server):
    """Do create_user and create_bot give working clients (with roles), and does reset() give a
    fresh organization where earlier accounts no longer exist?"""
    admin = chat_server.create_user("Boss", role=200)
    assert admin.get_profile()["role"] == 200
    webhook_bot = chat_server.create_bot("Hook", bot_type=3, payload_url="http://127.0.0.1:9/")
    assert webhook_bot.get_profile()["is_bot"] is True
    chat_server.reset()
    assert chat_server.owner.get_profile()["result"] == "success"
    names = {member["full_name"] for member in chat_server.owner.get_members()["members"]}
    assert "Boss" not in names and "Hook" not in names


@pytest.mark.parametrize("bad_type", [7])
def test_fixture_reports_refusals(chat_server, bad_type):
    """Does create_bot say clearly when the server refuses the bot?"""
    with pytest.raises(RuntimeError, match="could not create bot"):
        chat_server.create_bot("Odd", bot_type=bad_type)


def test_a_chatty_server_keeps_answering(chat_server):
    """The fixture reads the server's output through a pipe. Once more has been printed than a
    pipe holds (64 KiB here: each password reset it cannot mail logs a warning with the address,
    a long one each time), does the server still answer, with those warnings kept in `log`?"""
    import requests

    addresses = [f"{i:03d}" + "x" * 236 + "@example.com" for i in range(300)]
    for address in addresses:
        response = requests.post(f"{chat_server.url}/accounts/password/reset", data={"email": address},
                                 headers={"X-Requested-With": "XMLHttpRequest"}, timeout=10)
        assert response.status_code == 200, response.text
    assert chat_server.owner.get_profile()["result"] == "success"
    # The fixture reads the output on a thread of its own: the last warnings may still be on their way.
    deadline = time.monotonic() + 10
    while sum(any(address in line for address in addresses) for line in chat_server.log) < 300:
        assert time.monotonic() < deadline, "the server's warnings did not all reach `log`"
        time.sleep(0.05)
    assert sum(any(address in line for address in addresses) for line in chat_server.log) == 300
