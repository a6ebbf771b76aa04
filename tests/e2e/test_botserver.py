"""End to end: the unmodified zulip-botserver (0.9.1) running helloworld as an outgoing webhook
bot of a real `serve`: an @-mention in a channel and a direct message both get its answer."""

import json
import subprocess

import pytest
import zulip

from ..support.clients import script_path, wait_for
from ..support.serve_process import ServeProcess, free_port


@pytest.fixture
def server(tmp_path):
    instance = tmp_path / "instance"
    instance.mkdir()
    # The botserver listens on loopback, which serve refuses for webhooks unless told otherwise.
    (instance / "config.json").write_text(json.dumps({"OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES": True}))
    proc = ServeProcess(instance)
    yield proc
    proc.stop()


def test_zulip_botserver_helloworld_answers_mentions_and_direct_messages(server, tmp_path):
    """Does zulip-botserver's helloworld, called by our outgoing webhook, answer an @-mention in
    its topic and a direct message in the conversation?"""
    owner = zulip.Client(email=server.email, api_key=server.api_key, site=server.url)
    port = free_port()
    created = owner.call_endpoint("bots", method="POST", request={
        "full_name": "Helloworld", "short_name": "helloworld", "bot_type": 3,
        "payload_url": f"http://127.0.0.1:{port}/", "interface_type": 1})
    assert created["result"] == "success", created
    bots = owner.call_endpoint("register", method="POST", request={"fetch_event_types": '["realm_bot"]'})
    [bot] = [b for b in bots["realm_bots"] if b["user_id"] == created["user_id"]]
    rc = tmp_path / "botserverrc"
    rc.write_text(f"[helloworld]\nemail={bot['email']}\nkey={created['api_key']}\nsite={server.url}\n"
                  f"token={bot['services'][0]['token']}\n")
    botserver = subprocess.Popen([script_path("zulip-botserver"), "--config-file", str(rc), "--port", str(port),
                                  "--hostname", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: _answers(port), timeout=20)
        sent = owner.send_message({"type": "stream", "to": "general", "topic": "bots",
                                   "content": "@**Helloworld** hi there"})
        assert sent["result"] == "success", sent

        def reply_in_topic():
            found = owner.get_messages({"anchor": "newest", "num_before": 5, "num_after": 0, "apply_markdown": False,
                                        "narrow": [{"operator": "channel", "operand": "general"},
                                                   {"operator": "topic", "operand": "bots"}]})["messages"]
            return [m for m in found if m["sender_id"] == bot["user_id"]]

        [reply] = wait_for(reply_in_topic, timeout=20)
        assert "beep boop" in reply["content"]
        owner.send_message({"type": "private", "to": [bot["email"]], "content": "hello"})

        def direct_reply():
            found = owner.get_messages({"anchor": "newest", "num_before": 5, "num_after": 0, "apply_markdown": False,
                                        "narrow": [{"operator": "dm", "operand": [bot["email"]]}]})["messages"]
            return [m for m in found if m["sender_id"] == bot["user_id"]]

        [direct] = wait_for(direct_reply, timeout=20)
        assert "beep boop" in direct["content"]
    finally:
        botserver.terminate()
        botserver.wait(timeout=10)


def _answers(port):
    """Whether the botserver accepts connections yet."""
    import socket

    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0
