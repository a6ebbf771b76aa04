"""Slack-compatible incoming webhooks: `text` (and simple blocks and attachments) in Slack's
mrkdwn, converted to Zulip Markdown. Lets scripts written for Slack post here unchanged."""

import re

from chat_appliance.integrations.base import AnomalousPayload, Integration, WebhookRequest, always

LINK_RE = re.compile(r"<((?:https?|mailto):[^|>]+)(?:\|([^>]+))?>")
MENTION_RE = re.compile(r"<[@#!]([^|>]+)(?:\|([^>]+))?>")


def convert_mrkdwn(text):
    """Slack mrkdwn -> Zulip Markdown: *bold*, _italic_, ~strike~, <url|label> links."""
    text = LINK_RE.sub(lambda m: f"[{m.group(2)}]({m.group(1)})" if m.group(2) else m.group(1), text)
    text = MENTION_RE.sub(lambda m: f"@{m.group(2) or m.group(1)}", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)([^*\n]+?)(?<!\s)\*(?![\w*])", r"**\1**", text)
    text = re.sub(r"(?<![\w_])_(?!\s)([^_\n]+?)(?<!\s)_(?![\w_])", r"*\1*", text)
    text = re.sub(r"(?<![\w~])~(?!\s)([^~\n]+?)(?<!\s)~(?![\w~])", r"~~\1~~", text)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def block_text(block):
    """The text of a section or header block, with its fields."""
    parts = []
    if isinstance(block.get("text"), dict):
        parts.append(block["text"].get("text", ""))
    for field in block.get("fields") or []:
        if isinstance(field, dict):
            parts.append(field.get("text", ""))
    return "\n".join(p for p in parts if p)


def attachment_text(attachment):
    """An attachment as a title line, its text and its fields."""
    lines = []
    title = attachment.get("title")
    if title:
        link_url = attachment.get("title_link")
        lines.append(f"**[{title}]({link_url})**" if link_url else f"**{title}**")
    for key in ("pretext", "text"):
        if attachment.get(key):
            lines.append(convert_mrkdwn(str(attachment[key])))
    for field in attachment.get("fields") or []:
        if isinstance(field, dict):
            lines.append(f"**{field.get('title', '')}**: {convert_mrkdwn(str(field.get('value', '')))}")
    if not lines and attachment.get("fallback"):
        lines.append(convert_mrkdwn(str(attachment["fallback"])))
    return "\n".join(lines)


def format_message(request: WebhookRequest) -> tuple[str, str]:
    """Topic from the payload's channel name, if any; content from text, blocks and attachments."""
    payload = request.payload
    if not isinstance(payload, dict):
        raise AnomalousPayload()
    pieces = []
    if payload.get("text"):
        pieces.append(convert_mrkdwn(str(payload["text"])))
    for block in payload.get("blocks") or []:
        if isinstance(block, dict) and block.get("type") in ("section", "header", "context"):
            text = block_text(block)
            if text:
                pieces.append(convert_mrkdwn(text))
        elif isinstance(block, dict) and block.get("type") == "divider":
            pieces.append("---")
    for attachment in payload.get("attachments") or []:
        if isinstance(attachment, dict):
            text = attachment_text(attachment)
            if text:
                pieces.append(text)
    if not pieces:
        raise AnomalousPayload()
    channel = payload.get("channel")
    topic = channel.lstrip("#") if isinstance(channel, str) and channel.strip("#") else ""
    return topic, "\n\n".join(pieces)


INTEGRATION = Integration(
    name="slack_incoming",
    display_name="SlackIncoming",
    description="Messages in the format of Slack's incoming webhooks (text, blocks, attachments).",
    find_event=always("message"),
    formatters={"message": format_message},
)
