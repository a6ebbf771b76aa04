"""Incoming webhook integrations: each module turns a third-party service's request into a
message. A module has NAME, DEFAULT_TOPIC and `format_message(payload, headers)` returning
(topic or None, content in Zulip Markdown), or raising UnsupportedEvent. Adding one is adding a
module here and listing it in INTEGRATIONS.

This package is pure: it knows nothing of HTTP frameworks or the database.
"""

from chat_appliance.integrations import github, json_formatter, slack_incoming
from chat_appliance.integrations.base import UnsupportedEvent

INTEGRATIONS = {module.NAME: module for module in (slack_incoming, github, json_formatter)}

__all__ = ["INTEGRATIONS", "UnsupportedEvent"]
