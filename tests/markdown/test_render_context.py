"""The render context (users, groups, channels, linkifiers) is loaded once per organization
and follows every change at once: mentions, channel links and linkifiers in messages sent
right after a change see it."""

import pytest

import chat_appliance.lib.rendering as rendering

from ..support.helpers import PASSWORD, ok


def send(client, content, stream="Denmark"):
    return ok(client.post("messages", type="stream", to=stream, topic="ctx", content=content))["id"]


def content_of(client, msg_id):
    return ok(client.get(f"messages/{msg_id}"))["message"]["content"]


def test_context_is_loaded_once_for_many_messages(org, monkeypatch):
    """Do several sends and previews in one organization load its render context only once?"""
    loads = []
    original = rendering._RealmRenderData.__init__

    def counting(self, realm):
        loads.append(realm.id)
        original(self, realm)

    monkeypatch.setattr(rendering._RealmRenderData, "__init__", counting)
    from chat_appliance.models import database

    with database.connection_context():
        rendering.invalidate_render_context()
    client = org.client(org.hamlet)
    for i in range(3):
        send(client, f"@**Othello, the Moor of Venice** number {i} in #**Verona**")
    ok(client.post("messages/render", content="@**King Hamlet** preview"))
    assert loads == [org.realm.id]


def test_new_user_is_mentionable_at_once(org):
    """After a user is created, does the next message's @**Name** mention them?"""
    client = org.client(org.hamlet)
    before = send(client, "@**Rosencrantz** are you here?")
    assert "user-mention" not in content_of(client, before)
    new_id = ok(org.client(org.admin).post("users", email="rosencrantz@zulip.example", password=PASSWORD,
                                           full_name="Rosencrantz"))["user_id"]
    after = send(client, "@**Rosencrantz** are you here?")
    assert f'data-user-id="{new_id}"' in content_of(client, after)


def test_renamed_user_is_mentioned_by_new_name(org):
    """After a rename, does @**New Name** mention the user and the old name nobody?"""
    client = org.client(org.hamlet)
    send(client, "@**Othello, the Moor of Venice** warm the cache")
    ok(org.client(org.admin).patch(f"users/{org.othello.id}", full_name="Othello"))
    new = content_of(client, send(client, "@**Othello** hi"))
    old = content_of(client, send(client, "@**Othello, the Moor of Venice** hi"))
    assert f'data-user-id="{org.othello.id}"' in new and "user-mention" not in old


def test_deactivated_user_is_not_mentioned(org):
    """After deactivation, does @**Name** stop rendering as a mention?"""
    client = org.client(org.hamlet)
    assert "user-mention" in content_of(client, send(client, "@**Cordelia, Lear's daughter** hi"))
    ok(org.client(org.admin).delete(f"users/{org.cordelia.id}"))
    assert "user-mention" not in content_of(client, send(client, "@**Cordelia, Lear's daughter** hi"))


def test_new_group_is_mentionable_at_once(org):
    """After a group is created, does the next message's @*group* mention it?"""
    client = org.client(org.hamlet)
    assert "user-group-mention" not in content_of(client, send(client, "@*players* ready?"))
    group_id = ok(org.client(org.admin).post("user_groups/create", name="players", description="On stage",
                                             members=[org.othello.id]))["group_id"]
    assert f'data-user-group-id="{group_id}"' in content_of(client, send(client, "@*players* ready?"))


def test_renamed_channel_links_by_new_name(org):
    """After a channel is renamed, does #**New name** link to it and the old name not?"""
    client = org.client(org.hamlet)
    assert 'class="stream"' in content_of(client, send(client, "see #**Verona**"))
    ok(org.client(org.admin).patch(f"streams/{org.verona.id}", new_name="Mantua"))
    assert f'data-stream-id="{org.verona.id}"' in content_of(client, send(client, "see #**Mantua**"))
    assert 'class="stream"' not in content_of(client, send(client, "see #**Verona**"))


def test_new_channel_and_linkifier_apply_at_once(org):
    """After a channel is created and a linkifier added, does the next message use both?"""
    client = org.client(org.hamlet)
    send(client, "warm the cache #42")
    ok(org.client(org.admin).post("users/me/subscriptions", subscriptions=[{"name": "Elsinore"}]))
    ok(org.client(org.admin).post("realm/filters", pattern=r"#(?P<id>[0-9]+)",
                                  url_template="https://tracker.example.com/{id}"))
    html = content_of(client, send(client, "see #**Elsinore** and #42"))
    assert 'class="stream"' in html and 'href="https://tracker.example.com/42"' in html


def test_invalidate_hook_drops_only_that_organization(org):
    """Does invalidate_render_context(realm_id) make the next render reload that organization?"""
    from chat_appliance.models import database

    client = org.client(org.hamlet)
    send(client, "warm the cache")
    with database.connection_context():
        cache = rendering._cache()
        assert org.realm.id in cache
        rendering.invalidate_render_context(org.realm.id)
        assert org.realm.id not in cache
    send(client, "reloads")
    with database.connection_context():
        assert org.realm.id in rendering._cache()


def test_channel_description_has_no_image_preview(org):
    """Is a channel description rendered without image previews (as Zulip renders descriptions)?"""
    client = org.client(org.admin)
    ok(client.post("users/me/subscriptions",
                   subscriptions=[{"name": "Gallery", "description": "Logo: https://img.example/logo.png"}]))
    streams = ok(client.get("streams"))["streams"]
    rendered = next(s["rendered_description"] for s in streams if s["name"] == "Gallery")
    assert 'href="https://img.example/logo.png"' in rendered and "message_inline_image" not in rendered


def test_image_previews_by_default(org):
    """Does a link to an image get Zulip's preview with the default configuration?"""
    client = org.client(org.hamlet)
    assert 'class="message_inline_image"' in content_of(client, send(client, "look https://img.example/cat.png"))


@pytest.mark.config(INLINE_IMAGE_PREVIEW=False)
def test_image_previews_off_by_configuration(org):
    """With INLINE_IMAGE_PREVIEW off, is an image link left a plain link?"""
    client = org.client(org.hamlet)
    html = content_of(client, send(client, "look https://img.example/cat.png"))
    assert "message_inline_image" not in html and 'href="https://img.example/cat.png"' in html


def test_private_channel_links_render_for_senders_who_may_read_it(org):
    """Does #**secret** (and its topic link) resolve for a subscriber of the private channel, and
    stay plain text for a member who is not subscribed, even an administrator who is not?"""
    hamlet = org.client(org.hamlet)  # subscribed to secret
    html = content_of(hamlet, send(hamlet, "see #**secret** and #**secret>plans**"))
    assert f'<a class="stream" data-stream-id="{org.secret.id}"' in html
    assert 'class="stream-topic"' in html
    for user in (org.othello, org.owner):  # not subscribed (the owner is an administrator)
        client = org.client(user)
        html = content_of(client, send(client, "see #**secret** and #**secret>plans**"))
        assert "<a" not in html and "#<strong>secret</strong>" in html  # as Zulip: bold text
    # The preview endpoint decides the same way.
    assert "<a" not in ok(org.client(org.othello).post("messages/render", content="#**secret**"))["rendered"]


def test_guest_links_only_channels_they_are_subscribed_to(org):
    """Does a guest's #**Denmark** (public, not subscribed) stay text while #**Verona** (subscribed) links?"""
    guest = org.client(org.guest)
    html = content_of(guest, send(guest, "#**Denmark** and #**Verona**", stream="Verona"))
    assert f'data-stream-id="{org.verona.id}"' in html and f'data-stream-id="{org.denmark.id}"' not in html


def test_message_link(org):
    """Does #**channel>topic@id** render Zulip's message link, and an empty topic its display name?"""
    client = org.client(org.hamlet)
    target = send(client, "the original", stream="Verona")
    html = content_of(client, send(client, f"see #**Verona>castle@{target}** and #**Verona>@{target}**"))
    slug = f"{org.verona.id}-Verona"
    assert (f'<a class="message-link" href="/#narrow/channel/{slug}/topic/castle/near/{target}">'
            f"#Verona &gt; castle @ \U0001f4ac</a>") in html
    assert (f'<a class="message-link" href="/#narrow/channel/{slug}/topic//near/{target}">'
            f"#Verona &gt; <em>general chat</em> @ \U0001f4ac</a>") in html
    # A topic containing @ that is not followed by digits is an ordinary topic link.
    assert 'class="stream-topic"' in content_of(client, send(client, "#**Verona>a@b**"))
    # Message links are navigation: they do not make the message has:link.
    assert ok(client.get("messages", narrow='[{"operator":"has","operand":"link"}]', anchor="newest",
                         num_before=5, num_after=0))["messages"] == []


def test_topic_link_names_the_topics_first_message(org):
    """Does #**channel>topic** carry Zulip's /with/{id} suffix naming the topic's first message
    (topic matched without regard to case), and none while the topic has no message?"""
    client = org.client(org.hamlet)
    slug = f"{org.verona.id}-Verona"
    html = content_of(client, send(client, "#**Verona>castle**"))
    assert f'<a class="stream-topic" data-stream-id="{org.verona.id}" href="/#narrow/channel/{slug}/topic/castle">' in html
    first = ok(client.post("messages", type="stream", to="Verona", topic="castle", content="one"))["id"]
    ok(client.post("messages", type="stream", to="Verona", topic="Castle", content="two"))
    html = content_of(client, send(client, "#**Verona>CASTLE** and #**Verona>castle**"))
    assert f'href="/#narrow/channel/{slug}/topic/CASTLE/with/{first}">#Verona &gt; CASTLE</a>' in html
    assert f'href="/#narrow/channel/{slug}/topic/castle/with/{first}">#Verona &gt; castle</a>' in html
    # The preview endpoint renders the same link; a message link keeps its /near/ form.
    assert f"/topic/castle/with/{first}" in ok(client.post("messages/render", content="#**Verona>castle**"))["rendered"]
    assert "/with/" not in content_of(client, send(client, f"#**Verona>castle@{first}**"))


def test_topic_link_in_channel_with_private_history_names_senders_first_message(org):
    """In a channel whose history is not public to subscribers, does the suffix name the first
    message of the topic that the sender received, and none when they received none?"""
    admin, hamlet = org.client(org.admin), org.client(org.hamlet)
    early = ok(admin.post("messages", type="stream", to="secret", topic="plans", content="early"))["id"]
    ok(admin.post("users/me/subscriptions", subscriptions='[{"name": "secret"}]',
                  principals=f"[{org.cordelia.id}]"))
    cordelia = org.client(org.cordelia)
    html = content_of(cordelia, send(cordelia, "#**secret>plans**", stream="secret"))
    assert 'class="stream-topic"' in html and "/with/" not in html
    late = ok(admin.post("messages", type="stream", to="secret", topic="plans", content="late"))["id"]
    assert f"/topic/plans/with/{late}" in content_of(cordelia, send(cordelia, "#**secret>plans**", stream="secret"))
    assert f"/topic/plans/with/{early}" in content_of(hamlet, send(hamlet, "#**secret>plans**", stream="secret"))
