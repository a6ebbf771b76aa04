"""Service bots' configuration: an outgoing webhook's URL, format and token (bot_type 3), or an
embedded bot's name and settings (bot_type 4). Delivery lives in `service_dispatch`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import secrets
from importlib import util as import_util

from chat_appliance.lib.errors import JsonableError
from chat_appliance.clients.safe_fetch import UnsafeURLError, resolve
from chat_appliance.models import (BOT_EMBEDDED, BOT_OUTGOING_WEBHOOK, INTERFACE_GENERIC, INTERFACE_SLACK,
                                   ROLE_ADMINISTRATOR, ROLE_OWNER, BotService, UserProfile)

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict

# The zulip_bots bots Zulip offers as embedded bots: they need no outside service or keys of
# their own beyond what config_data gives them.
EMBEDDED_BOT_NAMES = ("converter", "encrypt", "helloworld", "virtual_fs", "giphy", "followup")


def zulip_bots_installed() -> bool:
    """Whether the optional `zulip-bots` package can be imported."""
    return import_util.find_spec("zulip_bots") is not None


def available_embedded_bots() -> list[str]:
    """The embedded bot names this server can run (none without the zulip-bots package)."""
    if not zulip_bots_installed():
        return []
    return [name for name in EMBEDDED_BOT_NAMES if import_util.find_spec(f"zulip_bots.bots.{name}") is not None]


def check_payload_url(url: str, *, allow_private: bool) -> str:
    """An http(s) URL with a host; unless allowed, one whose every address is public. The same
    guard runs again at each call (clients/safe_fetch), since the name may resolve elsewhere by then."""
    try:
        resolve(url, allow_private=allow_private)
    except UnsafeURLError as error:
        hint = " (set OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES to allow them)" if "private" in str(error) else ""
        raise JsonableError(f"Invalid payload_url: {error}{hint}.") from None
    return url


def check_service_settings(bot_type: int, *, payload_url: str | None, interface_type: int, service_name: str | None,
                           config_data: Any, allow_private: bool) -> JSONDict | None:
    """Validate what POST /bots says about a service bot, before anything is created. Returns the
    fields of its BotService row, or None for bots that have no service."""
    if bot_type == BOT_OUTGOING_WEBHOOK:
        if not payload_url:
            raise JsonableError("Missing 'payload_url' argument")
        if interface_type not in (INTERFACE_GENERIC, INTERFACE_SLACK):
            raise JsonableError("Invalid interface type")
        return {"name": "", "base_url": check_payload_url(payload_url, allow_private=allow_private),
                "interface": interface_type, "config_data": {}}
    if bot_type == BOT_EMBEDDED:
        if not zulip_bots_installed():
            raise JsonableError("Embedded bots need the zulip-bots package on the server: pip install zulip-bots")
        if service_name not in available_embedded_bots():
            raise JsonableError("Invalid embedded bot name.")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in (config_data or {}).items()):
            raise JsonableError("config_data values must be strings")
        return {"name": service_name, "base_url": "", "interface": INTERFACE_GENERIC,
                "config_data": dict(config_data or {})}
    return None


def create_bot_service(bot: UserProfile, fields: Any) -> BotService:
    """The service row of a new bot, inside the bot's creation transaction."""
    return BotService.create(bot=bot, token=secrets.token_urlsafe(24)[:32], **fields)


def bot_administrator_ids(bot: UserProfile) -> set[int]:
    """Who receives realm_bot events about `bot`: its owner and the organization's administrators."""
    admins = UserProfile.select(UserProfile.id).where(
        (UserProfile.realm == bot.realm_id) & UserProfile.is_active & ~UserProfile.is_bot
        & UserProfile.role.in_([ROLE_OWNER, ROLE_ADMINISTRATOR]))
    ids = {row.id for row in admins}
    if bot.bot_owner_id is not None:
        ids.add(bot.bot_owner_id)
    return ids
