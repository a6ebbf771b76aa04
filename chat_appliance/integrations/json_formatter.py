"""The JSON formatter: any JSON body, shown as a highlighted code block."""

import json

NAME = "json"
DEFAULT_TOPIC = "JSON"


def format_message(payload, headers):
    """The payload pretty-printed in a ```json block (a fence longer than any backtick run inside)."""
    text = json.dumps(payload, indent=2, ensure_ascii=False, sort_keys=True)
    fence = "```"
    while fence in text:
        fence += "`"
    return None, f"{fence}json\n{text}\n{fence}"
