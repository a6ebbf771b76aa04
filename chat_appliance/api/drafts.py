"""Drafts: GET|POST /drafts, PATCH|DELETE /drafts/{draft_id}."""

from flask import Blueprint

from chat_appliance.actions.drafts import (
    access_draft,
    check_draft,
    check_drafts_enabled,
    do_create_drafts,
    do_delete_draft,
    do_edit_draft,
)
from chat_appliance.lib.drafts import user_drafts
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import check_dict, list_of
from chat_appliance.lib.serializers import draft_dict
from chat_appliance.web.context import limits

bp = Blueprint("drafts", __name__)


def draft_object(var_name, value):
    """Each item as the list's JSON decoded it; check_draft validates it. (check_dict would decode a
    string item a second time, accepting a draft JSON-encoded twice.)"""
    return value


@bp.get("/drafts")
@endpoint()
def get_drafts(user):
    """The requester's drafts, most recently edited first."""
    check_drafts_enabled(user)
    drafts = [draft_dict(d) for d in user_drafts(user)]
    return {"count": len(drafts), "drafts": drafts}


@bp.post("/drafts")
@endpoint(drafts=Param(list_of(draft_object), default=[], checks_nul=True))
def create_drafts(user, drafts):
    """Store several drafts at once: every one is checked before any is stored."""
    check_drafts_enabled(user)
    validated = [check_draft(user, f"drafts[{i}]", raw, limits()) for i, raw in enumerate(drafts)]
    return {"ids": [d.id for d in do_create_drafts(user, validated)]}


@bp.patch("/drafts/<int:draft_id>")
@endpoint(draft=Param(check_dict, checks_nul=True))
def edit_draft(user, draft_id, draft):
    """Replace one of the requester's drafts."""
    check_drafts_enabled(user)
    stored = access_draft(user, draft_id)
    do_edit_draft(stored, check_draft(user, "draft", draft, limits()))


@bp.delete("/drafts/<int:draft_id>")
@endpoint()
def delete_draft(user, draft_id):
    """Delete one of the requester's drafts."""
    check_drafts_enabled(user)
    do_delete_draft(access_draft(user, draft_id))
