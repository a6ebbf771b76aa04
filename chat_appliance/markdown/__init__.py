"""Zulip-flavoured Markdown rendering for chat-appliance.

``render(content, context)`` turns a message's Markdown into sanitised HTML
plus the mention/link facts the server stores; ``topic_links`` computes a
topic's links.  See :mod:`.context` for the inputs and outputs.
"""

from .context import MentionTarget, RenderContext, RenderResult
from .engine import render, topic_links

__all__ = ["MentionTarget", "RenderContext", "RenderResult", "render", "topic_links"]
