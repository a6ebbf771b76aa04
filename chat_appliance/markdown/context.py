"""Inputs and outputs of the Markdown renderer.

The server builds a :class:`RenderContext` per message (or per realm) and
gets a :class:`RenderResult` back.  Everything here is plain data so the
renderer itself stays free of database access: lookups happen through the
callables the caller supplies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable, Callable, Mapping, Optional, Sequence


@dataclass(frozen=True)
class MentionTarget:
    """A user, user group or channel that a mention or link resolved to."""

    id: int
    name: str


def _no_user(name: Optional[str], user_id: Optional[int]) -> Optional[MentionTarget]:
    return None


def _no_match(name: str) -> Optional[MentionTarget]:
    return None


@dataclass(frozen=True)
class UploadImage:
    """What the renderer needs of an uploaded image for Zulip's inline-image markup."""

    width: int  # as displayed
    height: int
    content_type: str
    animated: bool
    thumbnail_url: Optional[str]  # None while its thumbnail is not made yet
    transcoded_image: Optional[str] = None  # Zulip's data-transcoded-image, for TIFF and such


def _no_upload(path_id: str) -> Optional[UploadImage]:
    return None


def _no_topic_message(channel_id: int, topic: str) -> Optional[int]:
    return None


@dataclass
class RenderContext:
    """Everything about the realm (and sender) that affects rendering."""

    realm_url: str = "http://localhost"
    translate_emoticons: bool = False
    # (regex pattern, RFC 6570 URL template) pairs, highest priority first.
    linkifiers: Sequence[tuple[str, str]] = ()
    # find_user(full_name, user_id) -> MentionTarget | None
    find_user: Callable[[Optional[str], Optional[int]], Optional[MentionTarget]] = _no_user
    find_group: Callable[[str], Optional[MentionTarget]] = _no_match
    find_channel: Callable[[str], Optional[MentionTarget]] = _no_match
    # custom emoji name -> (emoji id, image url)
    realm_emoji: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # Zulip's realm setting of that name: previews below links to images.
    inline_image_preview: bool = True
    # Zulip's realm setting of that name: the language of a code fence that names none ("" none).
    default_code_block_language: str = ""
    # find_upload_image(path_id) -> UploadImage | None, for links to /user_uploads/{path_id}
    find_upload_image: Callable[[str], Optional[UploadImage]] = _no_upload
    # find_topic_message(channel id, topic) -> the id a topic link's /with/ suffix names (Zulip's
    # "with" operand: the topic's first message the sender may read), or None for no suffix.
    find_topic_message: Callable[[int, str], Optional[int]] = _no_topic_message
    # Whose budget of KaTeX engine time the message's formulas spend (the sender's id), or None
    # for no per-person budget (markdown/katex.py).
    tex_owner: Optional[Hashable] = None


@dataclass
class RenderResult:
    """Rendered HTML plus the facts the server needs to store with a message."""

    html: str = ""
    is_me_message: bool = False
    mentioned_user_ids: set[int] = field(default_factory=set)
    silently_mentioned_user_ids: set[int] = field(default_factory=set)
    mentioned_group_ids: set[int] = field(default_factory=set)
    stream_wildcard: bool = False
    topic_wildcard: bool = False
    links: list[str] = field(default_factory=list)
    has_image: bool = False
