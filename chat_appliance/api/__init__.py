"""One blueprint per endpoint group, all mounted under /api/v1."""

from . import (
    bot_storage,
    channel_folders,
    channel_lifecycle,
    channels,
    dev,
    drafts,
    events,
    export,
    invites,
    linkifiers,
    message_activity,
    message_delete,
    message_edits,
    message_flags,
    message_reports,
    messages,
    navigation_views,
    org_settings,
    people,
    presence,
    profile_fields,
    push,
    push_legacy,
    reactions,
    realm,
    realm_emoji,
    saved_snippets,
    scheduled_messages,
    server,
    thumbnail,
    topics,
    typing,
    uploads,
    user_groups,
    user_topics,
    users,
    webhooks,
)

BLUEPRINTS = [
    server.bp, users.bp, channels.bp, realm.bp, messages.bp, events.bp, typing.bp, profile_fields.bp,
    channel_folders.bp, navigation_views.bp, linkifiers.bp, push.bp, user_groups.bp,
    drafts.bp, saved_snippets.bp, message_edits.bp, message_delete.bp, message_reports.bp, reactions.bp,
    topics.bp, uploads.bp, bot_storage.bp, presence.bp, webhooks.bp, dev.bp, message_flags.bp, user_topics.bp,
    people.bp, realm_emoji.bp, org_settings.bp, push_legacy.bp, export.bp,
    invites.bp, channel_lifecycle.bp, scheduled_messages.bp, message_activity.bp,
]

# Mounted at the site root: the URLs that messages link to.
ROOT_BLUEPRINTS = [uploads.downloads_bp, realm_emoji.images_bp, export.files_bp, thumbnail.bp]
