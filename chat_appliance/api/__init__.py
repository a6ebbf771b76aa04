"""One blueprint per endpoint group, all mounted under /api/v1."""

from . import (
    channel_folders,
    channels,
    drafts,
    events,
    linkifiers,
    messages,
    navigation_views,
    profile_fields,
    push,
    realm,
    saved_snippets,
    server,
    typing,
    user_groups,
    users,
)

BLUEPRINTS = [
    server.bp, users.bp, channels.bp, realm.bp, messages.bp, events.bp, typing.bp, profile_fields.bp,
    channel_folders.bp, navigation_views.bp, linkifiers.bp, push.bp, user_groups.bp,
    drafts.bp, saved_snippets.bp,
]
