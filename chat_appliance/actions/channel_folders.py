"""Channel folders: create, rename, describe, archive; channels are put in folders by
PATCH /streams/{id} with folder_id."""

from __future__ import annotations

from typing import TYPE_CHECKING

from peewee import fn

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.audiences import active_user_ids
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.serializers import folder_dict
from chat_appliance.models import ChannelFolder
from chat_appliance.lib.rendering import render_plain
from chat_appliance.lib import event_catalogue

if TYPE_CHECKING:
    from chat_appliance.config import Limits
    from chat_appliance.lib.types import JSONDict
    from chat_appliance.models import UserProfile


def access_folder(realm_id: int, folder_id: int) -> ChannelFolder:
    """A folder of the organization, or BAD_REQUEST 'Invalid channel folder ID'."""
    folder = ChannelFolder.get_or_none((ChannelFolder.id == folder_id) & (ChannelFolder.realm == realm_id))
    if folder is None:
        raise JsonableError("Invalid channel folder ID")
    return folder


def check_folder_name(realm_id: int, name: str, limits: Limits, *, exclude_id: int | None = None) -> str:
    """Not empty, within limits.max_channel_folder_name_length, unique (without regard to case)."""
    name = name.strip()
    limit = limits.max_channel_folder_name_length
    if not name:
        raise JsonableError("Channel folder name can't be empty.")
    if len(name) > limit:
        raise JsonableError(f"name is too long (limit: {limit} characters)")
    clash = ChannelFolder.select().where((ChannelFolder.realm == realm_id)
                                         & (fn.LOWER(ChannelFolder.name) == name.lower()))
    if exclude_id is not None:
        clash = clash.where(ChannelFolder.id != exclude_id)
    if clash.exists():
        raise JsonableError(f"Channel folder name '{name}' already exists.")
    return name


def check_folder_description(description: str, limits: Limits) -> str:
    """Within limits.max_channel_folder_description_length."""
    limit = limits.max_channel_folder_description_length
    if len(description) > limit:
        raise JsonableError(f"description is too long (limit: {limit} characters)")
    return description.strip()


def do_create_folder(creator: UserProfile, name: str, description: str, limits: Limits) -> ChannelFolder:
    """A new folder at the end of the order; everyone is told."""
    name = check_folder_name(creator.realm_id, name, limits)
    description = check_folder_description(description, limits)
    with write_transaction():
        order = (ChannelFolder.select(fn.MAX(ChannelFolder.order))
                 .where(ChannelFolder.realm == creator.realm_id).scalar() or 0) + 1
        folder = ChannelFolder.create(realm=creator.realm_id, name=name, description=description,
                                      rendered_description=render_plain(description), creator=creator.id,
                                      order=order)
    publish(event_catalogue.channel_folder_add(folder_dict(folder)), active_user_ids(creator.realm_id))
    return folder


def do_update_folder(folder: ChannelFolder, changes: JSONDict) -> None:
    """Apply validated changes (name, description, is_archived); everyone is told."""
    if "description" in changes:
        changes["rendered_description"] = render_plain(changes["description"])
    with write_transaction():
        for key, value in changes.items():
            setattr(folder, key, value)
        folder.save()
    publish(event_catalogue.channel_folder_update(folder.id, changes), active_user_ids(folder.realm_id))


def realm_folders(realm_id: int, include_archived: bool) -> list[ChannelFolder]:
    """The organization's folders in order, archived ones only when asked."""
    query = ChannelFolder.select().where(ChannelFolder.realm == realm_id)
    if not include_archived:
        query = query.where(~ChannelFolder.is_archived)
    return list(query.order_by(ChannelFolder.order, ChannelFolder.id))


def check_folder_order(realm_id: int, order: list[int]) -> list[int]:
    """Every folder of the organization (archived ones included), each once."""
    ids = {f.id for f in ChannelFolder.select(ChannelFolder.id).where(ChannelFolder.realm == realm_id)}
    if len(order) != len(set(order)) or set(order) != ids:
        raise JsonableError("Invalid order mapping")
    return order


def do_reorder_folders(realm_id: int, order: list[int]) -> None:
    """Folders take their position in `order`; everyone gets channel_folder reorder."""
    with write_transaction():
        for position, folder_id in enumerate(order):
            ChannelFolder.update(order=position).where(ChannelFolder.id == folder_id).execute()
    publish(event_catalogue.channel_folder_reorder(list(order)), active_user_ids(realm_id))
