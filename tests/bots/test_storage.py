"""PUT/GET/DELETE /bot_storage, as the zulip_bots StateHandler uses them."""

from ..support.helpers import err, ok


def test_put_get_delete(org):
    """Are stored string values returned by key, all at once without keys, overwritten by a
    second PUT, and kept apart per account?"""
    bot = org.client(org.bot)
    ok(bot.put("bot_storage", storage={"number": "0", "message_id": "null"}))
    ok(bot.put("bot_storage", storage={"number": "1"}))
    assert ok(bot.get("bot_storage", keys=["number"]))["storage"] == {"number": "1"}
    assert ok(bot.get("bot_storage"))["storage"] == {"number": "1", "message_id": "null"}
    assert ok(org.client(org.hamlet).get("bot_storage"))["storage"] == {}
    ok(bot.delete("bot_storage", keys=["message_id"]))
    assert ok(bot.get("bot_storage"))["storage"] == {"number": "1"}
    ok(bot.delete("bot_storage"))
    assert ok(bot.get("bot_storage"))["storage"] == {}


def test_errors(org):
    """Is a missing key an error (the StateHandler relies on it), and are non-string values and a
    missing storage parameter refused?"""
    bot = org.client(org.bot)
    ok(bot.put("bot_storage", storage={"a": "1"}))
    err(bot.get("bot_storage", keys=["a", "nope"]), 400, "BAD_REQUEST", "Key does not exist: nope")
    err(bot.delete("bot_storage", keys=["nope"]), 400, "BAD_REQUEST", "Key does not exist: nope")
    assert ok(bot.get("bot_storage"))["storage"] == {"a": "1"}
    err(bot.put("bot_storage", storage={"a": 1}), 400, "BAD_REQUEST", "Value type is int, but should be str.")
    err(bot.put("bot_storage", storage=["a"]), 400, "BAD_REQUEST", "storage is not a dict")
    err(bot.put("bot_storage"), 400, "REQUEST_VARIABLE_MISSING", "Missing 'storage' argument")


def test_zulip_bots_state_handler(org, flask_client):
    """Does the zulip_bots StateHandler (put/get/contains) work through the real zulip Client?"""
    from zulip_bots.lib import StateHandler

    class FakeClient:
        """The two Client methods StateHandler calls, over the Flask test client."""

        def update_storage(self, request):
            return org.client(org.bot).put("bot_storage", **request).get_json()

        def get_storage(self, request):
            return org.client(org.bot).get("bot_storage", **request).get_json()

    state = StateHandler(FakeClient())
    state.put("number", 41)
    assert StateHandler(FakeClient()).get("number") == 41
