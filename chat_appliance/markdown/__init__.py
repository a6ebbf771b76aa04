"""Zulip-flavoured Markdown rendering for chat-appliance.

``render(content, context)`` turns a message's Markdown into sanitised HTML
plus the facts the server stores with the message (mentions, wildcard flags,
links, /me); ``topic_links(topic, context)`` computes a topic's links.

The renderer never touches the database: the caller passes lookups in a
:class:`RenderContext`, e.g.::

    ctx = RenderContext(
        realm_url="https://chat.example.com",
        translate_emoticons=sender.translate_emoticons,
        linkifiers=[(r"#(?P<id>[0-9]+)", "https://tracker.example.com/{id}")],
        find_user=lambda name, user_id: ...,   # -> MentionTarget(id, full_name) | None
        find_group=lambda name: ...,           # -> MentionTarget | None
        find_channel=lambda name: ...,         # -> MentionTarget | None
        realm_emoji={"party_parrot": ("7", "/user_avatars/2/emoji/7.gif")},
    )
    result = render(content, ctx)

``find_user`` receives ``(full_name, None)`` for ``@**Name**``,
``(full_name, id)`` for ``@**Name|id**`` and ``(None, id)`` for ``@**|id**``.
Rendering is thread-safe (one engine per thread).
"""

from typing import TYPE_CHECKING, Any

from chat_appliance.markdown.context import MentionTarget, RenderContext, RenderResult

if TYPE_CHECKING:
    from chat_appliance.markdown.engine import render, topic_links


def __getattr__(name: str) -> Any:
    """`render` and `topic_links` load the engine (Python-Markdown, Pygments, nh3, the emoji
    table) when first asked for: a server that has not rendered anything yet does not hold them
    (they are most of start-up time and idle memory)."""
    if name in ("render", "topic_links"):
        from chat_appliance.markdown.engine import render, topic_links

        return render if name == "render" else topic_links
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["MentionTarget", "RenderContext", "RenderResult", "render", "topic_links"]
