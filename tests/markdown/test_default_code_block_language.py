"""The organization setting default_code_block_language: PATCH /realm, /register, the realm
update event, and the renderer's use of it for code fences that name no language."""

from ..support.helpers import err, get_events, ok, register


def send(client, content):
    msg_id = ok(client.post("messages", type="stream", to="Denmark", topic="code", content=content))["id"]
    return ok(client.get(f"messages/{msg_id}"))["message"]["content"]


def test_setting_round_trip_event_and_rendering(org):
    """Does an administrator's PATCH /realm set it, /register report it, an event announce it, and
    a fence without a language then highlight in it, while a fence naming one keeps its own?"""
    admin, hamlet = org.client(org.admin), org.client(org.hamlet)
    assert register(hamlet)["realm_default_code_block_language"] == ""
    plain = send(hamlet, "```\nprint(1)\n```")
    assert "data-code-language" not in plain
    queue_id = register(hamlet, event_types='["realm"]')["queue_id"]
    ok(admin.patch("realm", default_code_block_language="python"))
    events = [e for e in get_events(hamlet, queue_id) if e["type"] == "realm"]
    assert {"type": "realm", "op": "update", "property": "default_code_block_language",
            "value": "python"}.items() <= events[0].items()
    assert register(hamlet)["realm_default_code_block_language"] == "python"
    highlighted = send(hamlet, "```\nprint(1)\n```")
    assert 'data-code-language="Python"' in highlighted and '<span class="nb">print</span>' in highlighted
    assert 'data-code-language="JavaScript"' in send(hamlet, "```js\nlet x = 1;\n```")
    # The preview endpoint agrees.
    assert 'data-code-language="Python"' in ok(hamlet.post("messages/render", content="```\nx = 1\n```"))["rendered"]
    # "math" as the default makes a bare fence TeX, as on Zulip.
    ok(admin.patch("realm", default_code_block_language="math"))
    assert 'class="katex-display"' in send(hamlet, "```\nx^2\n```")
    # Back to none.
    ok(admin.patch("realm", default_code_block_language=""))
    assert "data-code-language" not in send(hamlet, "```\nprint(1)\n```")


def test_bad_values_and_non_administrators_change_nothing(org):
    """Are a non-administrator, an over-long value and a value that is no language name refused?"""
    admin = org.client(org.admin)
    err(org.client(org.hamlet).patch("realm", default_code_block_language="python"), 400, "UNAUTHORIZED_PRINCIPAL")
    err(admin.patch("realm", default_code_block_language="x" * 101), 400, "BAD_REQUEST")
    err(admin.patch("realm", default_code_block_language="py thon<"), 400, "BAD_REQUEST")
    assert register(org.client(org.hamlet))["realm_default_code_block_language"] == ""
