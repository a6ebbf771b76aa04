"""Custom emoji lookups shared by the renderer, reactions and user statuses."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.models import RealmEmoji
from chat_appliance.models.base import raw_select

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict

EMOJI_URL_PREFIX = "/user_avatars/"


def emoji_source_url(emoji: RealmEmoji) -> str:
    """Where the image is served (Zulip's path for locally stored emoji)."""
    return f"{EMOJI_URL_PREFIX}{emoji.realm_id}/emoji/images/{emoji.file_name}"


def realm_emoji_dict(emoji: RealmEmoji) -> JSONDict:
    """Zulip's RealmEmoji object. No still image is made of animated emoji, so still_url is null."""
    return {"id": str(emoji.id), "name": emoji.name, "source_url": emoji_source_url(emoji), "still_url": None,
            "deactivated": emoji.deactivated, "author_id": emoji.author_id}


def realm_emoji_state(realm_id: int) -> JSONDict:
    """{id: RealmEmoji} of every custom emoji, deactivated ones included, as clients need both."""
    rows = raw_select(RealmEmoji, '"realm_id" = {p} ORDER BY "id"', realm_id)
    return {str(e.id): realm_emoji_dict(e) for e in rows}


def active_realm_emoji(realm_id: int | None, name: str) -> RealmEmoji | None:
    """The active custom emoji with this name, or None."""
    return RealmEmoji.get_or_none((RealmEmoji.realm == realm_id) & (RealmEmoji.name == name)
                                  & ~RealmEmoji.deactivated)


def realm_emoji_by_code(realm_id: int | None, emoji_code: str) -> RealmEmoji | None:
    """The custom emoji (active or not) an emoji_code names, or None for a code that is no id of ours."""
    if not emoji_code.isdigit() or len(emoji_code) > 18:
        return None
    return RealmEmoji.get_or_none((RealmEmoji.realm == realm_id) & (RealmEmoji.id == int(emoji_code)))


def realm_emoji_for_render(realm_id: int) -> JSONDict:
    """{name: (id, url)} of the active custom emoji: what `:name:` renders to."""
    rows = RealmEmoji.select().where((RealmEmoji.realm == realm_id) & ~RealmEmoji.deactivated)
    return {e.name: (str(e.id), emoji_source_url(e)) for e in rows}
