"""The server's one entry point to Markdown rendering: builds the renderer's context from
the database (users, groups, channels, linkifiers, the sender's settings).

Messages are rendered once, at send and edit time, and the HTML is stored.

The organization's part of the context is loaded once and cached (per app, in its
runtime.render_contexts, per organization); `invalidate_render_context(realm_id)` drops it.
Actions need not call it themselves for the usual changes: every change that publishes a
`realm_user`, `user_group`, `stream`, `realm_linkifiers`, `realm_emoji` or `realm` event (all
of them do, after commit) empties the cache through `invalidate_on_event` (lib/cache_events.py),
which create_app registers on the app's event bus. An action that changes what mentions,
channel links or linkifiers resolve to without publishing such an event must call
`invalidate_render_context` after its commit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chat_appliance.db import runtime
from chat_appliance.lib.custom_emoji import realm_emoji_for_render
from chat_appliance.lib.linkifiers import linkifiers_for_realm
from chat_appliance.lib.user_settings import user_setting
# The engine (Python-Markdown, Pygments, nh3, the emoji table) is imported by the functions that
# render, at the first render, not at start-up (start-up time and idle memory).
from chat_appliance.lib.thumbnails import default_thumbnail, transcoded_image
from chat_appliance.markdown.context import MentionTarget, RenderContext, UploadImage
from chat_appliance.markdown.upload_previews import pending_upload_previews, rewrite_upload_preview
from chat_appliance.models import Attachment, Message, Stream, Subscription, UserGroup, UserMessage, UserProfile

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.markdown.context import RenderResult
    from chat_appliance.models import Realm


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
        # Every channel; which of them a sender's links resolve to is decided per sender
        # (ChannelLinks below).
        streams = (Stream.select(Stream.id, Stream.name, Stream.name_key, Stream.invite_only)
                   .where(Stream.realm == realm.id).tuples())
        self.channels_by_key = {key: (MentionTarget(stream_id, name), invite_only)
                                for stream_id, name, key, invite_only in streams}
        self.realm_emoji = realm_emoji_for_render(realm.id)
        self.default_code_block_language = default_code_block_language(realm)

    def find_user(self, name, user_id):
        if user_id is not None:
            return self.users_by_id.get(user_id)
        matches = self.users_by_name.get(name.lower(), [])
        # An ambiguous name mentions nobody: the sender must use @**Name|id**.
        return matches[0] if len(matches) == 1 else None

    def find_group(self, name):
        return self.groups_by_name.get(name)



class ChannelLinks:
    """find_channel for one sender, as Zulip decides it: a channel link (topic and message links
    too) resolves to a channel whose content the sender may access -- a public channel for a
    member who is not a guest, otherwise a channel they are subscribed to. Without a sender
    (content rendered on nobody's behalf) every channel resolves, as on Zulip. The sender's
    subscriptions are read once, on the first link that needs them."""

    def __init__(self, data: _RealmRenderData, sender: UserProfile | None) -> None:
        self.data = data
        self.sender = sender
        self.subscribed: set[int] | None = None

    def __call__(self, name: str) -> MentionTarget | None:
        found = self.data.channels_by_key.get(name.lower())
        if found is None:
            return None
        target, invite_only = found
        sender = self.sender
        if sender is None or (not invite_only and not sender.is_guest):
            return target
        if self.subscribed is None:
            self.subscribed = set(Subscription.select(Subscription.stream)
                                  .where((Subscription.user_profile == sender.id) & Subscription.active)
                                  .scalars())
        return target if target.id in self.subscribed else None


class TopicLinks:
    """find_topic_message for one sender, as Zulip fills a topic link's "with" operand: the
    topic's first message (topics match without regard to case) -- in a channel whose history
    is public to subscribers the first one sent there, otherwise the first one the sender
    received; without a sender, none. Only asked for channels find_channel resolved, and each
    topic once per render."""

    def __init__(self, sender: UserProfile | None) -> None:
        self.sender = sender
        self.found: dict[tuple[int, str], int | None] = {}

    def __call__(self, channel_id: int, topic: str) -> int | None:
        key = (channel_id, topic.casefold())
        if key not in self.found:
            self.found[key] = self._first_message(*key)
        return self.found[key]

    def _first_message(self, channel_id: int, topic_key: str) -> int | None:
        stream = (Stream.select(Stream.recipient, Stream.history_public_to_subscribers)
                  .where(Stream.id == channel_id).first())
        if stream is None:
            return None
        in_topic = (Message.recipient == stream.recipient_id) & (Message.topic_key == topic_key)
        if stream.history_public_to_subscribers:
            query = Message.select(Message.id).where(in_topic)
        elif self.sender is not None:
            query = (Message.select(Message.id).join(UserMessage, on=(UserMessage.message == Message.id))
                     .where(in_topic & (UserMessage.user_profile == self.sender.id)))
        else:
            return None
        row = query.order_by(Message.id).limit(1).first()
        return row.id if row is not None else None


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
        find_channel=ChannelLinks(data, sender),
        find_topic_message=TopicLinks(sender),
        find_upload_image=lambda path_id: upload_image(realm.id, path_id),
        realm_emoji=data.realm_emoji,
        default_code_block_language=data.default_code_block_language,
        tex_owner=None if sender is None else sender.id,
    )


def upload_image(realm_id: int, path_id: str) -> UploadImage | None:
    """An uploaded image of this organization with its thumbnail, for the inline-image markup;
    None for a file that is not a thumbnailable image (or does not exist). Who may see it is the
    download's business: the markup only points at URLs that check access themselves."""
    row = (Attachment.select(Attachment.content_type, Attachment.image_width, Attachment.image_height,
                             Attachment.image_frames, Attachment.thumbnail_formats)
           .where((Attachment.realm == realm_id) & (Attachment.path_id == path_id)).first())
    if row is None or row.image_width is None:
        return None
    frames = row.image_frames or 1
    made = default_thumbnail(frames, row.thumbnail_formats)
    return UploadImage(width=row.image_width, height=row.image_height, content_type=row.content_type,
                       animated=made is not None and made.endswith("-anim.webp"),
                       thumbnail_url=None if made is None else f"/user_uploads/thumbnail/{path_id}/{made}",
                       transcoded_image=transcoded_image(row.thumbnail_formats))


def settle_upload_previews(realm_id: int, rendered: str) -> str:
    """A message's HTML about to be stored (in the write transaction of its send or edit), with
    the placeholders of images whose thumbnail was finished, or given up, since it was rendered:
    the worker rewrites the messages linking the image when it finishes, and a message rendered
    before that but committed after would otherwise keep its placeholder. Unchanged when it
    shows none (nearly always)."""
    for path_id in sorted(pending_upload_previews(rendered)):
        image = upload_image(realm_id, path_id)
        if image is None or image.thumbnail_url is not None:
            rendered = rewrite_upload_preview(rendered, path_id, image)
    return rendered


def default_code_block_language(realm: Realm) -> str:
    """The organization's default_code_block_language ("" for none), kept in realm.settings."""
    return str((realm.settings or {}).get("default_code_block_language") or "")


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
