"""POST /register_client_device, POST /remove_client_device (the mobile app calls both)."""

from flask import Blueprint

from chat_appliance.actions.devices import (
    do_register_client_device,
    do_remove_client_device,
)
from chat_appliance.lib.validators import check_int
from chat_appliance.web.params import Param, endpoint

bp = Blueprint("devices", __name__)


@bp.post("/register_client_device")
@endpoint()
def register_client_device(user):
    """A device id for the app installation calling."""
    return {"device_id": do_register_client_device(user)}


@bp.post("/remove_client_device")
@endpoint(device_id=Param(check_int))
def remove_client_device(user, device_id):
    """The app installation is going away (logout)."""
    do_remove_client_device(user, device_id)
