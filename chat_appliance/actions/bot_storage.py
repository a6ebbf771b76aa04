"""Bot storage: string values under string keys, one namespace per account (the zulip_bots
StateHandler keeps its state here; it JSON-encodes values itself and sends strings)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from chat_appliance.db.connection import write_transaction
from chat_appliance.lib.errors import JsonableError
from chat_appliance.models import BotStorageData

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import UserProfile

# Zulip's limits: total characters of keys and values per account, and one key's length.
STORAGE_SIZE_LIMIT = 10_000_000
MAX_KEY_LENGTH = 200


def check_storage_items(storage: JSONDict) -> None:
    """Keys and values must be strings of sensible length."""
    for key, value in storage.items():
        if not isinstance(value, str):
            raise JsonableError(f"Value type is {type(value).__name__}, but should be str.")
        if len(key) > MAX_KEY_LENGTH:
            raise JsonableError(f"Key is longer than {MAX_KEY_LENGTH} characters.")


def stored_items(user: UserProfile, keys: list[str] | None = None) -> JSONDict:
    """{key: value}; with keys, exactly those, or an error naming the first one missing."""
    query = BotStorageData.select().where(BotStorageData.bot_profile == user)
    if keys is not None:
        query = query.where(BotStorageData.key.in_(list(keys)))
    found = {row.key: row.value for row in query}
    if keys is None:
        return found
    for key in keys:
        if key not in found:
            raise JsonableError(f"Key does not exist: {key}")
    return {key: found[key] for key in keys}


def do_update_storage(user: UserProfile, storage: JSONDict) -> None:
    """Set every key; refuse the whole update if the account's storage would outgrow its limit."""
    check_storage_items(storage)
    with write_transaction():
        current = stored_items(user)
        current.update(storage)
        used = sum(len(k) + len(v) for k, v in current.items())
        if used > STORAGE_SIZE_LIMIT:
            raise JsonableError(f"Request exceeds storage limit by {used - STORAGE_SIZE_LIMIT} characters. "
                                f"The limit is {STORAGE_SIZE_LIMIT} characters.")
        for key, value in storage.items():
            (BotStorageData.insert(bot_profile=user, key=key, value=value)
             .on_conflict(conflict_target=[BotStorageData.bot_profile, BotStorageData.key],
                          update={BotStorageData.value: value})
             .execute())


def do_remove_storage(user: UserProfile, keys: list[str] | None) -> None:
    """Delete the keys (all of them when keys is None); a missing key is an error and deletes nothing."""
    with write_transaction():
        if keys is not None:
            stored_items(user, keys)
        query = BotStorageData.delete().where(BotStorageData.bot_profile == user)
        if keys is not None:
            query = query.where(BotStorageData.key.in_(list(keys)))
        query.execute()
