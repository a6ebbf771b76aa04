"""The server's one entry point to Markdown rendering: builds the renderer's context from
the database (users, groups, channels, linkifiers, the sender's settings).

Messages are rendered once, at send and edit time, and the HTML is stored.
"""

from peewee import fn

from .actions.linkifiers import linkifiers_for_realm
from .lib.custom_emoji import realm_emoji_for_render
from .lib.user_settings import user_setting
from .markdown import MentionTarget, RenderContext, render, topic_links
from .models import Stream, UserGroup, UserProfile


def realm_linkifiers(realm_id):
    """The organization's linkifiers in priority order, as (pattern, url_template) pairs."""
    return linkifiers_for_realm(realm_id)


def render_context(realm, sender=None):
    """A RenderContext whose lookups read this organization's users, groups and channels."""

    def find_user(name, user_id):
        query = UserProfile.select().where((UserProfile.realm == realm.id) & UserProfile.is_active)
        if user_id is not None:
            user = query.where(UserProfile.id == user_id).first()
            return MentionTarget(user.id, user.full_name) if user else None
        matches = list(query.where(fn.LOWER(UserProfile.full_name) == name.lower()).limit(2))
        # An ambiguous name mentions nobody: the sender must use @**Name|id**.
        return MentionTarget(matches[0].id, matches[0].full_name) if len(matches) == 1 else None

    def find_group(name):
        group = UserGroup.get_or_none((UserGroup.realm == realm.id) & (UserGroup.name == name)
                                      & ~UserGroup.deactivated)
        return MentionTarget(group.id, group.name) if group else None

    def find_channel(name):
        stream = Stream.get_or_none((Stream.realm == realm.id) & (Stream.name_key == name.lower()))
        # Channel links to private channels render only for... nobody may learn of them here.
        if stream is None or stream.invite_only:
            return None
        return MentionTarget(stream.id, stream.name)

    return RenderContext(
        realm_url=realm.url,
        translate_emoticons=bool(sender is not None and user_setting(sender, "translate_emoticons")),
        linkifiers=tuple(realm_linkifiers(realm.id)),
        find_user=find_user,
        find_group=find_group,
        find_channel=find_channel,
        realm_emoji=realm_emoji_for_render(realm.id),
    )


def render_message(content, *, realm, sender):
    """Render a message's Markdown: HTML plus mentions and link facts (RenderResult)."""
    return render(content, render_context(realm, sender))


def render_topic_links(topic, realm):
    """The topic_links of one topic (for many, build topic_links_context once)."""
    return topic_links(topic, topic_links_context(realm))


def topic_links_context(realm):
    """The context `topic_links` needs: the organization's URL and linkifiers (one query)."""
    return RenderContext(realm_url=realm.url, linkifiers=tuple(realm_linkifiers(realm.id)))


def render_plain(content):
    """Markdown without an organization's context (channel descriptions at creation)."""
    return render(content).html
