"""PUT, GET and DELETE /bot_storage."""

from flask import Blueprint

from chat_appliance.actions.bot_storage import do_remove_storage, do_update_storage, stored_items
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_dict, check_string, list_of

bp = Blueprint("bot_storage", __name__)


@bp.put("/bot_storage")
@endpoint(storage=Param(check_dict))
def update_storage(user, storage):
    """Store string values (`storage` is a JSON object of strings)."""
    do_update_storage(user, storage)


@bp.get("/bot_storage")
@endpoint(keys=Param(list_of(check_string), default=None))
def get_storage(user, keys):
    """The values of `keys` (a JSON list), or everything stored when keys is absent."""
    return {"storage": stored_items(user, keys)}


@bp.delete("/bot_storage")
@endpoint(keys=Param(list_of(check_string), default=None))
def remove_storage(user, keys):
    """Delete `keys`, or everything stored when keys is absent."""
    do_remove_storage(user, keys)
