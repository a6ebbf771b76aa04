"""Linkifiers: GET|PATCH /realm/linkifiers, POST /realm/filters, PATCH|DELETE /realm/filters/{id}."""

from flask import Blueprint

from chat_appliance.actions.linkifiers import (
    access_linkifier,
    do_add_linkifier,
    do_remove_linkifier,
    do_reorder_linkifiers,
    do_update_linkifier,
)
from chat_appliance.lib.access import require_realm_admin
from chat_appliance.lib.linkifiers import realm_linkifiers
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_int, list_of, string_max
from chat_appliance.lib.serializers import linkifier_dict

# Every message render runs every pattern: a bound of our choosing keeps them reasonable.
MAX_PATTERN_LENGTH = 1000

bp = Blueprint("linkifiers", __name__)


@bp.get("/realm/linkifiers")
@endpoint()
def get_linkifiers(user):
    """The organization's linkifiers in priority order."""
    return {"linkifiers": [linkifier_dict(l) for l in realm_linkifiers(user.realm_id)]}


@bp.post("/realm/filters")
@endpoint(pattern=Param(string_max(MAX_PATTERN_LENGTH)), url_template=Param(string_max(MAX_PATTERN_LENGTH)))
def add_linkifier(user, pattern, url_template):
    """Administrators add linkifiers."""
    require_realm_admin(user)
    return {"id": do_add_linkifier(user.realm_id, pattern, url_template).id}


@bp.patch("/realm/filters/<int:filter_id>")
@endpoint(pattern=Param(string_max(MAX_PATTERN_LENGTH)), url_template=Param(string_max(MAX_PATTERN_LENGTH)))
def update_linkifier(user, filter_id, pattern, url_template):
    """Administrators replace a linkifier's pattern and template (both required)."""
    require_realm_admin(user)
    do_update_linkifier(access_linkifier(user.realm_id, filter_id), pattern, url_template)


@bp.delete("/realm/filters/<int:filter_id>")
@endpoint()
def remove_linkifier(user, filter_id):
    """Administrators remove linkifiers."""
    require_realm_admin(user)
    do_remove_linkifier(access_linkifier(user.realm_id, filter_id))


@bp.patch("/realm/linkifiers")
@endpoint(ordered_linkifier_ids=Param(list_of(check_int)))
def reorder_linkifiers(user, ordered_linkifier_ids):
    """Administrators set the order in which linkifiers are tried."""
    require_realm_admin(user)
    do_reorder_linkifiers(user.realm_id, ordered_linkifier_ids)
