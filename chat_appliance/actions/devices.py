"""Client devices (Zulip's register_client_device / remove_client_device): each installed app
of a user gets an id that its push registration and its /register `devices` refer to."""

from __future__ import annotations

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib import event_catalogue
from chat_appliance.models import ClientDevice, UserProfile


def do_register_client_device(user: UserProfile) -> int:
    """A new device id for the user; their other clients learn of it (device add)."""
    with write_transaction():
        device = ClientDevice.create(user_profile=user)
    publish(event_catalogue.device_add(device.id), [user.id])
    return device.id


def do_remove_client_device(user: UserProfile, device_id: int) -> None:
    """Forget one of the user's devices; BAD_REQUEST 'Invalid device ID' for another's or none."""
    with write_transaction():
        deleted = ClientDevice.delete().where((ClientDevice.id == device_id)
                                              & (ClientDevice.user_profile == user)).execute()
    if not deleted:
        raise JsonableError("Invalid device ID")
    publish(event_catalogue.device_remove(device_id), [user.id])
