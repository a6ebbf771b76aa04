"""Service bots' configuration: an outgoing webhook's URL, format and token (bot_type 3), or an
embedded bot's name and settings (bot_type 4). Delivery lives in `service_dispatch`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ipaddress
import secrets
import socket
from importlib import util as import_util
from urllib.parse import urlparse

from chat_appliance.lib.errors import JsonableError
from chat_appliance.models import INTERFACE_GENERIC, INTERFACE_SLACK, ROLE_ADMINISTRATOR, ROLE_OWNER, BotService, UserProfile
from chat_appliance.models.users import BOT_EMBEDDED, BOT_OUTGOING_WEBHOOK

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


def is_private_address(address: str) -> bool:
    """Loopback, private, link-local, multicast or reserved: not somewhere a webhook should reach
    from a server facing the internet (a guard against server-side request forgery)."""
    ip = ipaddress.ip_address(address)
    return not ip.is_global or ip.is_multicast


def check_payload_url(url: str, *, allow_private: bool) -> str:
    """An http(s) URL with a host; unless allowed, one whose every address is public."""
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise JsonableError("Invalid payload_url: it must be an http:// or https:// URL.")
    if allow_private:
        return url
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(parsed.hostname, parsed.port or 80)}
    except (socket.gaierror, UnicodeError):
        raise JsonableError(f"Invalid payload_url: cannot resolve {parsed.hostname}.") from None
    # getaddrinfo gives IP addresses as str (an int only for other socket families).
    if any(is_private_address(address.split("%")[0]) for address in addresses):  # type: ignore[union-attr]
        raise JsonableError("Invalid payload_url: outgoing webhooks may not call private or loopback addresses "
                            "(set OUTGOING_WEBHOOK_ALLOW_PRIVATE_ADDRESSES to allow them).")
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


def service_of(bot: UserProfile) -> BotService | None:
    """The bot's service row, or None."""
    return BotService.get_or_none(BotService.bot == bot.id)


def administered_bots(user: UserProfile) -> list[UserProfile]:
    """Bots `user` administers: every bot of the organization for administrators, else their own.
    System bots are nobody's to administer."""
    query = UserProfile.select().where((UserProfile.realm == user.realm_id) & UserProfile.is_bot
                                       & ~UserProfile.is_system_bot)
    if not user.is_realm_admin:
        query = query.where(UserProfile.bot_owner == user.id)
    return list(query.order_by(UserProfile.id))


def bot_administrator_ids(bot: UserProfile) -> set[int]:
    """Who receives realm_bot events about `bot`: its owner and the organization's administrators."""
    admins = UserProfile.select(UserProfile.id).where(
        (UserProfile.realm == bot.realm_id) & UserProfile.is_active & ~UserProfile.is_bot
        & UserProfile.role.in_([ROLE_OWNER, ROLE_ADMINISTRATOR]))
    ids = {row.id for row in admins}
    if bot.bot_owner_id is not None:
        ids.add(bot.bot_owner_id)
    return ids
