"""GET /users/me of a bot carries neither bot_type, bot_owner_id nor profile_data."""

from ..support.helpers import ok


def test_own_profile_of_a_bot(org):
    """Does GET /users/me for a bot leave out bot_type, bot_owner_id and profile_data, while a human's
    has profile_data?"""
    me = ok(org.client(org.bot).get("users/me"))
    assert me["is_bot"] is True
    assert not {"bot_type", "bot_owner_id", "profile_data"} & set(me)
    assert "profile_data" in ok(org.client(org.hamlet).get("users/me"))
