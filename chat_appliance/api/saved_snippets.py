"""Saved snippets: GET|POST /saved_snippets, PATCH|DELETE /saved_snippets/{saved_snippet_id}."""

from flask import Blueprint

from chat_appliance.actions.saved_snippets import (
    access_saved_snippet,
    check_snippet_content,
    check_title,
    do_create_saved_snippet,
    do_delete_saved_snippet,
    do_edit_saved_snippet,
)
from chat_appliance.lib.saved_snippets import user_saved_snippets
from chat_appliance.web.params import Param, endpoint
from chat_appliance.lib.validators import string_max
from chat_appliance.lib.serializers import saved_snippet_dict
from chat_appliance.web.context import limits

MAX_TITLE_LENGTH = 60  # Zulip's SavedSnippet title limit

bp = Blueprint("saved_snippets", __name__)


@bp.get("/saved_snippets")
@endpoint()
def get_saved_snippets(user):
    """The requester's snippets."""
    return {"saved_snippets": [saved_snippet_dict(s) for s in user_saved_snippets(user)]}


@bp.post("/saved_snippets")
@endpoint(title=Param(string_max(MAX_TITLE_LENGTH)), content=Param())
def create_saved_snippet(user, title, content):
    """Save a snippet; its id is returned."""
    snippet = do_create_saved_snippet(user, check_title(title), check_snippet_content(content, limits()))
    return {"saved_snippet_id": snippet.id}


@bp.patch("/saved_snippets/<int:saved_snippet_id>")
@endpoint(title=Param(string_max(MAX_TITLE_LENGTH), default=None), content=Param(default=None))
def edit_saved_snippet(user, saved_snippet_id, title, content):
    """Change a snippet's title and/or content."""
    snippet = access_saved_snippet(user, saved_snippet_id)
    changes = {}
    if title is not None:
        changes["title"] = check_title(title)
    if content is not None:
        changes["content"] = check_snippet_content(content, limits())
    do_edit_saved_snippet(snippet, changes)


@bp.delete("/saved_snippets/<int:saved_snippet_id>")
@endpoint()
def delete_saved_snippet(user, saved_snippet_id):
    """Delete a snippet."""
    do_delete_saved_snippet(access_saved_snippet(user, saved_snippet_id))
