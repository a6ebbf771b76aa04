"""Navigation views: GET|POST /navigation_views, PATCH|DELETE /navigation_views/{fragment}.

Fragments may contain slashes (narrow/is/starred), hence the `path` converter."""

from flask import Blueprint

from chat_appliance.actions.navigation_views import (
    BUILT_IN_FRAGMENTS,
    access_view_for_update,
    check_new_view,
    do_add_view,
    do_remove_view,
    do_update_view,
    name_taken,
    user_views,
)
from chat_appliance.lib.errors import JsonableError
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_bool, string_max
from chat_appliance.lib.serializers import view_dict

# Bounds of our choosing: a view is a URL fragment and a label in a sidebar.
MAX_FRAGMENT_LENGTH = 1000
MAX_NAME_LENGTH = 100

bp = Blueprint("navigation_views", __name__)


@bp.get("/navigation_views")
@endpoint()
def get_views(user):
    """The requester's stored views."""
    return {"navigation_views": [view_dict(v) for v in user_views(user)]}


@bp.post("/navigation_views")
@endpoint(fragment=Param(string_max(MAX_FRAGMENT_LENGTH)), is_pinned=Param(check_bool),
          name=Param(string_max(MAX_NAME_LENGTH), default=None))
def add_view(user, fragment, is_pinned, name):
    """Pin or hide a built-in view, or add a named custom one."""
    do_add_view(user, check_new_view(user, fragment, name), is_pinned, name)


@bp.patch("/navigation_views/<path:fragment>")
@endpoint(is_pinned=Param(check_bool, default=None), name=Param(string_max(MAX_NAME_LENGTH), default=None))
def update_view(user, fragment, is_pinned, name):
    """Change whether a view is pinned, and a custom view's name."""
    view = access_view_for_update(user, fragment)
    changes = {}
    if name is not None:
        if fragment in BUILT_IN_FRAGMENTS:
            raise JsonableError("Built-in views cannot have a custom name.")
        if not name.strip():
            raise JsonableError("Custom views must have a valid name.")
        if name_taken(user, name):
            raise JsonableError("Navigation view already exists.")
        changes["name"] = name.strip()
    if is_pinned is not None:
        changes["is_pinned"] = is_pinned
    if changes:
        do_update_view(view, changes)


@bp.delete("/navigation_views/<path:fragment>")
@endpoint()
def remove_view(user, fragment):
    """Remove a stored view."""
    do_remove_view(user, fragment)
