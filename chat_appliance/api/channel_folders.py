"""Channel folders: POST /channel_folders/create, GET /channel_folders, PATCH /channel_folders/{id},
and PATCH /streams/{stream_id} (the folder_id parameter)."""

from flask import Blueprint

from chat_appliance.actions.channel_folders import (
    access_folder,
    check_folder_description,
    check_folder_name,
    check_folder_order,
    do_create_folder,
    do_reorder_folders,
    do_update_folder,
    realm_folders,
)
from chat_appliance.lib.access import require_realm_admin
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_bool, check_int, list_of
from chat_appliance.lib.serializers import folder_dict
from chat_appliance.web.context import limits

bp = Blueprint("channel_folders", __name__)

UNSET = object()


@bp.post("/channel_folders/create")
@endpoint(name=Param(), description=Param(default=""))
def create_folder(user, name, description):
    """Administrators create folders."""
    require_realm_admin(user)
    return {"channel_folder_id": do_create_folder(user, name, description, limits()).id}


@bp.get("/channel_folders")
@endpoint(include_archived=Param(check_bool, default=False))
def get_folders(user, include_archived):
    """The organization's folders in order; archived ones only when asked."""
    return {"channel_folders": [folder_dict(f) for f in realm_folders(user.realm_id, include_archived)]}


@bp.patch("/channel_folders/<int:folder_id>")
@endpoint(name=Param(default=None), description=Param(default=None), is_archived=Param(check_bool, default=None))
def update_folder(user, folder_id, name, description, is_archived):
    """Administrators rename, describe, archive and unarchive folders."""
    require_realm_admin(user)
    folder = access_folder(user.realm_id, folder_id)
    changes = {}
    if name is not None:
        changes["name"] = check_folder_name(user.realm_id, name, limits(), exclude_id=folder.id)
    if description is not None:
        changes["description"] = check_folder_description(description, limits())
    if is_archived is not None:
        changes["is_archived"] = is_archived
    if changes:
        do_update_folder(folder, changes)


@bp.patch("/channel_folders")
@endpoint(order=Param(list_of(check_int)))
def reorder_folders(user, order):
    """Administrators set the order of all the organization's folders."""
    require_realm_admin(user)
    do_reorder_folders(user.realm_id, check_folder_order(user.realm_id, order))


def check_folder_id(var_name, value):
    """An integer folder id, or JSON null for 'no folder'."""
    if value in ("null", None):
        return None
    return check_int(var_name, value)
