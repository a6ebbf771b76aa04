"""The server's one entry point to Markdown rendering: builds the renderer's context from
the database (users, groups, channels, linkifiers, the sender's settings).

Messages are rendered once, at send and edit time, and the HTML is stored.

The organization's part of the context is loaded once and cached (per app, in its
runtime.render_contexts, per organization); `invalidate_render_context(realm_id)` drops
it. Actions need not call it themselves for the usual changes: every change that publishes a `realm_user`,
`user_group`, `stream`, `realm_linkifiers`, `realm_emoji` or `realm` event (all of them do,
after commit) invalidates the cache through `invalidate_on_event`, which create_app registers
on the app's event bus. An action that changes what
mentions, channel links or linkifiers resolve to without publishing such an event must
call `invalidate_render_context` after its commit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chat_appliance.db import runtime
from chat_appliance.lib.custom_emoji import realm_emoji_for_render
from chat_appliance.lib.linkifiers import linkifiers_for_realm
from chat_appliance.lib.user_settings import user_setting
# The engine (Python-Markdown, Pygments, nh3, the emoji table) is imported by the functions that
# render, at the first render, not at start-up (issue 32).
from chat_appliance.markdown.context import MentionTarget, RenderContext
from chat_appliance.models import Stream, UserGroup, UserProfile

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.markdown.context import RenderResult
    from chat_appliance.models import Realm

# Event types after which mentions, channel links or linkifiers may resolve differently.
INVALIDATING_EVENTS = frozenset({"realm_user", "user_group", "stream", "realm_linkifiers", "realm_emoji", "realm"})


class _RealmRenderData:
    """What rendering needs to know about one organization, as plain lookups."""

    def __init__(self, realm):
        self.realm_url = realm.url
        self.linkifiers = tuple(linkifiers_for_realm(realm.id))
        users = (UserProfile.select(UserProfile.id, UserProfile.full_name)
                 .where((UserProfile.realm == realm.id) & UserProfile.is_active).tuples())
        self.users_by_id = {}
        self.users_by_name: dict[str, Any] = {}
        for user_id, full_name in users:
            target = MentionTarget(user_id, full_name)
            self.users_by_id[user_id] = target
            self.users_by_name.setdefault(full_name.lower(), []).append(target)
        groups = (UserGroup.select(UserGroup.id, UserGroup.name)
                  .where((UserGroup.realm == realm.id) & ~UserGroup.deactivated).tuples())
        self.groups_by_name = {name: MentionTarget(group_id, name) for group_id, name in groups}
        # Channel links render only for public channels: nobody may learn of a private one here.
        streams = (Stream.select(Stream.id, Stream.name, Stream.name_key)
                   .where((Stream.realm == realm.id) & ~Stream.invite_only).tuples())
        self.channels_by_key = {key: MentionTarget(stream_id, name) for stream_id, name, key in streams}
        self.realm_emoji = realm_emoji_for_render(realm.id)

    def find_user(self, name, user_id):
        if user_id is not None:
            return self.users_by_id.get(user_id)
        matches = self.users_by_name.get(name.lower(), [])
        # An ambiguous name mentions nobody: the sender must use @**Name|id**.
        return matches[0] if len(matches) == 1 else None

    def find_group(self, name):
        return self.groups_by_name.get(name)

    def find_channel(self, name):
        return self.channels_by_key.get(name.lower())


def _cache():
    """The render contexts of the app in use (db.runtime.GenerationCache: realm id -> data)."""
    return runtime.current().render_contexts


def _realm_data(realm):
    cache = _cache()
    data = cache.get(realm.id)
    if data is not None:
        return data
    generation = cache.generation
    data = _RealmRenderData(realm)
    # A change committed while we were reading would be missing from `data`: the cache keeps
    # it only if no invalidation happened in between.
    cache.put_many([(realm.id, data)], generation)
    return data


def invalidate_render_context(realm_id: int | None = None) -> None:
    """Forget the cached render context of one organization (all of them with None).
    Call after the commit of a change to users, groups, channels, linkifiers or emoji."""
    if realm_id is None:
        _cache().clear()
    else:
        _cache().discard(realm_id)


def invalidate_on_event(event: JSONDict, _user_ids: list[int]) -> None:
    """Event listener: drop the cached contexts after a change they may depend on."""
    if event.get("type") in INVALIDATING_EVENTS:
        invalidate_render_context()


def realm_linkifiers(realm_id: int | None) -> Any:
    """The organization's linkifiers in priority order, as (pattern, url_template) pairs."""
    return linkifiers_for_realm(realm_id)


def render_context(realm: Realm, sender: UserProfile | None = None) -> RenderContext:
    """A RenderContext whose lookups read this organization's cached users, groups,
    channels and linkifiers."""
    data = _realm_data(realm)
    return RenderContext(
        realm_url=data.realm_url,
        inline_image_preview=_image_previews(),
        translate_emoticons=bool(sender is not None and user_setting(sender, "translate_emoticons")),
        linkifiers=data.linkifiers,
        find_user=data.find_user,
        find_group=data.find_group,
        find_channel=data.find_channel,
        realm_emoji=data.realm_emoji,
    )


def _image_previews():
    """INLINE_IMAGE_PREVIEW of the app in use (given to its runtime when create_app made it)."""
    return runtime.current().inline_image_preview


def render_message(content: str, *, realm: Realm, sender: UserProfile) -> RenderResult:
    """Render a message's Markdown: HTML plus mentions and link facts (RenderResult)."""
    from chat_appliance.markdown.engine import render

    return render(content, render_context(realm, sender))


def render_topic_links(topic: str, realm: Any) -> list[JSONDict]:
    """The topic_links of one topic (for many, build topic_links_context once)."""
    from chat_appliance.markdown.engine import topic_links

    return topic_links(topic, topic_links_context(realm))


def topic_links_context(realm: Realm) -> RenderContext:
    """The context `topic_links` needs: the organization's URL and linkifiers."""
    data = _realm_data(realm)
    return RenderContext(realm_url=data.realm_url, linkifiers=data.linkifiers)


def render_plain(content: str) -> str:
    """Markdown without an organization's context (channel descriptions, profile fields):
    no image previews there, as on Zulip."""
    from chat_appliance.markdown.engine import render

    return render(content, RenderContext(inline_image_preview=False)).html
