"""Slack-compatible incoming webhooks: a message in the format of Slack's incoming webhooks
(text, Block Kit blocks, legacy attachments) in Slack's mrkdwn, turned into Zulip Markdown the
way Zulip's Slack importer turns it, so that scripts written for Slack post here unchanged. The
payload's channel becomes the topic. Slack's clients expect {"ok": true} back, and errors as
{"ok": false, "error": ...}."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from itertools import zip_longest

# Slack's emphasis rules need Unicode's punctuation and symbol classes (\p{P}, \p{S}), which
# the standard re module does not have.
import regex

from chat_appliance.integrations.base import AnomalousPayload, Integration, InvalidPayload, WebhookRequest, always

# <https://example.com|label> and <https://example.com>: a bare domain with an optional protocol,
# port and path (lower case, as Slack sends them).
SLACK_LINK = re.compile(r"<(?:https?://(?:www\.)?|ftp://)?[a-z0-9]+(?:[-.][a-z0-9]+)*\.[a-z]{2,63}(?::[0-9]{1,5})?"
                        r"(?:/[^>]*)?\|?(?:\|[^>]+)?>")
SLACK_MAILTO = re.compile(r"<((?:mailto:)?[\w.-]+@[\w.-]+(?:\.\w+)+)\|?(?:[\w.-]+@[\w.-]+(?:\.\w+)+)?>")

BLOCK_TYPES = {"actions", "context", "call", "contact_card", "condition", "divider", "file", "header", "image", "input",
               "section", "table", "rich_text"}
# Blocks Zulip does not show: buttons and other interactive parts, calls, files, tables, and
# rich_text, which repeats the message's text.
UNSHOWN_BLOCKS = {"call", "contact_card", "file", "table", "actions", "rich_text"}


def emphasis_pattern(marker: str) -> str:
    """Slack's *bold*, _italic_ and ~strike~: the marker pair must stand between punctuation,
    spaces, symbols or line ends (Slack has no mid-word emphasis), not next to backquotes, @,
    backslashes, or brackets and quotes on the wrong side."""
    m = re.escape(marker)
    return (rf"((?![{m}`@\\\p{{Pf}}\p{{Pe}}])[\p{{P}}\p{{Zs}}\p{{S}}]|^)"
            rf"({m})([^{m}]+)({m})"
            rf"((?![{m}`@\\\p{{Pi}}\p{{Ps}}])(?=[\p{{P}}\p{{Zs}}\p{{S}}]|$))")


EMPHASIS = [(regex.compile(emphasis_pattern(marker), regex.MULTILINE), zulip)
            for marker, zulip in (("*", "**"), ("~", "~~"), ("_", "*"))]


def convert_slack_formatting(text: str) -> str:
    for pattern, zulip in EMPHASIS:
        text = pattern.sub(lambda m, z=zulip: m.group(1) + z + m.group(3) + z, text)
    return text


def replace_links(text: str) -> str:
    """<url|label> -> [label](url), <url> -> url, <mailto:a@b|a@b> -> mailto:a@b."""
    for match in SLACK_LINK.finditer(text):
        url, _, label = match.group(0)[1:-1].partition("|")
        text = text.replace(match.group(0), f"[{label}]({url})" if label else url)
    for match in SLACK_MAILTO.finditer(text):
        text = text.replace(match.group(0), match.group(1))
    return text


def text_of(block, plain_text_only: bool = False) -> str:
    """A text object's text, after checking it is one."""
    kinds = ("plain_text",) if plain_text_only else ("plain_text", "mrkdwn")
    if not isinstance(block, dict) or block.get("type") not in kinds or not isinstance(block.get("text"), str):
        raise InvalidPayload("Malformed payload")
    return block["text"]


def joined(pieces) -> str:
    return "\n\n".join(piece.strip() for piece in pieces if piece.strip() != "")


def render_element(element) -> str:
    """Only images: Zulip has no interactive elements."""
    if element["type"] == "image":
        return f"[{element['alt_text']}]({element['image_url']})"
    return ""


def render_block(block) -> str:
    kind = block["type"]
    if kind not in BLOCK_TYPES:
        raise InvalidPayload("Malformed payload")
    if kind in UNSHOWN_BLOCKS:
        return ""
    if kind == "context" and block.get("elements"):
        # Slack packs these side by side; one above the other reads as well.
        return joined(render_element(e) if e["type"] == "image" else text_of(e) for e in block["elements"])
    if kind == "divider":
        return "----"
    if kind == "header":
        return "## " + text_of(block["text"], plain_text_only=True)
    if kind == "image":
        alt = text_of(block["title"], plain_text_only=True) if "title" in block else block["alt_text"]
        return f"[{alt}]({block['image_url']})"
    if kind == "section":
        pieces = []
        if "text" in block:
            pieces.append(text_of(block["text"]))
        if "accessory" in block:
            pieces.append(render_element(block["accessory"]))
        if "fields" in block:
            fields = [text_of(field) for field in block["fields"]]
            if len(fields) == 1:
                pieces.append(fields[0])
            else:
                # Two columns, as Slack shows them; a table cell holds no newline or pipe.
                cells = [field.replace("\n", " ").replace("|", " ") for field in fields]
                table = "| | |\n|-|-|\n"
                for left, right in zip_longest(cells[::2], cells[1::2], fillvalue=""):
                    table += f"| {left} | {right} |\n"
                pieces.append(table)
        return joined(pieces)
    return ""


def render_attachment(attachment) -> str:
    """Slack's legacy attachment fields, any of which may be missing or null."""
    pieces = []
    if attachment.get("title"):
        link = attachment.get("title_link")
        pieces.append(f"## [{attachment['title']}]({link})" if link else f"## {attachment['title']}")
    for key in ("pretext", "text"):
        if attachment.get(key):
            pieces.append(attachment[key])
    if "fields" in attachment:
        lines = []
        for field in attachment["fields"]:
            if field.get("title") and field.get("value"):
                lines.append(f"*{field['title']}*: {field['value']}")
            elif field.get("title"):
                lines.append(f"*{field['title']}*")
            elif field.get("value"):
                lines.append(f"{field['value']}")
        pieces.append("\n".join(lines))
    if attachment.get("blocks"):
        pieces += map(render_block, attachment["blocks"])
    if attachment.get("image_url"):
        pieces.append(f"[]({attachment['image_url']})")
    if attachment.get("footer"):
        pieces.append(attachment["footer"])
    if attachment.get("ts"):
        moment = datetime.fromtimestamp(int(float(attachment["ts"])), timezone.utc)
        pieces.append(f"<time:{moment.isoformat(timespec='seconds')}>")
    return joined(pieces)


def format_message(hook: WebhookRequest) -> tuple[str, str] | None:
    p = hook.payload
    if not isinstance(p, dict):
        raise AnomalousPayload()
    topic = "(no topic)"
    if isinstance(p.get("channel"), str):
        topic = re.sub(r"^[@#]", "", p["channel"])
    pieces: list[str] = []
    if p.get("blocks"):
        pieces += map(render_block, p["blocks"])
    if p.get("attachments"):
        pieces += map(render_attachment, p["attachments"])
    body = joined(pieces)
    if body == "" and p.get("text"):
        body = ((p["icon_emoji"] + " ") if p.get("icon_emoji") else "") + p["text"]
        body = body.strip()
    if body == "":
        return None
    return topic, convert_slack_formatting(replace_links(body).strip())


INTEGRATION = Integration(
    name="slack_incoming",
    display_name="SlackIncoming",
    description="Messages in the format of Slack's incoming webhooks (text, blocks, attachments).",
    find_event=always("message"),
    formatters={"message": format_message},
    slack_compatible=True,
)
