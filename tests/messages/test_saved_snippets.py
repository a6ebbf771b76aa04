"""Saved snippets: GET/POST /saved_snippets, PATCH/DELETE /saved_snippets/{id}, events, /register."""

import time

from ..support.helpers import err, get_events, ok, register

NOT_FOUND = "Saved snippet does not exist."


def create(client, title="Welcome", content="Welcome to **Elsinore**."):
    return ok(client.post("saved_snippets", title=title, content=content))["saved_snippet_id"]


def listed(client):
    return ok(client.get("saved_snippets"))["saved_snippets"]


def test_create_and_list(org):
    """Is a snippet stored with a stripped title, its id returned, and listed in creation order
    with its creation time?"""
    hamlet = org.client(org.hamlet)
    before = int(time.time())
    first = create(hamlet, title="  Welcome  ")
    second = create(hamlet, title="Farewell", content="Good night")
    snippets = listed(hamlet)
    assert [s["id"] for s in snippets] == [first, second]
    assert {**snippets[0], "date_created": 0} == {"id": first, "title": "Welcome",
                                                  "content": "Welcome to **Elsinore**.", "date_created": 0}
    assert snippets[0]["date_created"] >= before


def test_title_and_content_required_and_not_blank(org):
    """Are a missing, empty or blank title or content refused with BAD_REQUEST, on create and on edit?"""
    hamlet = org.client(org.hamlet)
    err(hamlet.post("saved_snippets", content="c"), 400, "REQUEST_VARIABLE_MISSING", "Missing 'title' argument")
    err(hamlet.post("saved_snippets", title="t"), 400, "REQUEST_VARIABLE_MISSING", "Missing 'content' argument")
    for blank in ("", "  \n"):
        err(hamlet.post("saved_snippets", title=blank, content="c"), 400, "BAD_REQUEST", "Title cannot be empty.")
        err(hamlet.post("saved_snippets", title="t", content=blank), 400, "BAD_REQUEST",
            "Content cannot be empty.")
    snippet_id = create(hamlet)
    err(hamlet.patch(f"saved_snippets/{snippet_id}", title=" "), 400, "BAD_REQUEST", "Title cannot be empty.")
    err(hamlet.patch(f"saved_snippets/{snippet_id}", content=""), 400, "BAD_REQUEST", "Content cannot be empty.")
    assert listed(hamlet)[0]["title"] == "Welcome"


def test_edit_title_or_content(org):
    """Does PATCH change only the fields sent?"""
    hamlet = org.client(org.hamlet)
    snippet_id = create(hamlet)
    ok(hamlet.patch(f"saved_snippets/{snippet_id}", title="Greeting"))
    ok(hamlet.patch(f"saved_snippets/{snippet_id}", content="Hail!"))
    [snippet] = listed(hamlet)
    assert (snippet["title"], snippet["content"]) == ("Greeting", "Hail!")


def test_delete_and_unknown(org):
    """Is a deleted snippet gone, and do edit and delete of an unknown id (even one too large for the
    database) give Zulip's error (HTTP 404, code BAD_REQUEST)?"""
    hamlet = org.client(org.hamlet)
    snippet_id = create(hamlet)
    ok(hamlet.delete(f"saved_snippets/{snippet_id}"))
    assert listed(hamlet) == []
    err(hamlet.delete(f"saved_snippets/{snippet_id}"), 404, "BAD_REQUEST", NOT_FOUND)
    err(hamlet.patch("saved_snippets/9999", content="x"), 404, "BAD_REQUEST", NOT_FOUND)
    err(hamlet.delete(f"saved_snippets/{10**30}"), 404, "BAD_REQUEST", NOT_FOUND)


def test_other_users_snippets_are_invisible(org):
    """Does another user neither see, edit nor delete someone's snippet, getting the same error as
    for a snippet that does not exist?"""
    snippet_id = create(org.client(org.hamlet))
    othello = org.client(org.othello)
    assert listed(othello) == []
    err(othello.patch(f"saved_snippets/{snippet_id}", title="Mine"), 404, "BAD_REQUEST", NOT_FOUND)
    err(othello.delete(f"saved_snippets/{snippet_id}"), 404, "BAD_REQUEST", NOT_FOUND)
    assert listed(org.client(org.hamlet))[0]["title"] == "Welcome"


def test_events_reach_the_owners_other_clients_only(org):
    """Do add, update and remove events arrive, in Zulip's shapes, on another queue of the same
    user, and on nobody else's queue?"""
    hamlet, othello = org.client(org.hamlet), org.client(org.othello)
    other_client = register(hamlet, event_types=["saved_snippets"])["queue_id"]
    someone_else = register(othello, event_types=["saved_snippets"])["queue_id"]
    snippet_id = create(hamlet)
    ok(hamlet.patch(f"saved_snippets/{snippet_id}", title="Greeting"))
    ok(hamlet.delete(f"saved_snippets/{snippet_id}"))
    add, update, remove = get_events(hamlet, other_client)
    assert add["op"] == "add" and {**add["saved_snippet"], "date_created": 0} == {
        "id": snippet_id, "title": "Welcome", "content": "Welcome to **Elsinore**.", "date_created": 0}
    assert update["op"] == "update" and update["saved_snippet"]["title"] == "Greeting"
    assert update["saved_snippet"]["date_created"] == add["saved_snippet"]["date_created"]
    assert (remove["op"], remove["saved_snippet_id"]) == ("remove", snippet_id)
    assert get_events(othello, someone_else) == []


def test_register_returns_saved_snippets(org):
    """Does /register's `saved_snippets` hold the requester's snippets, as GET lists them, and
    only theirs?"""
    hamlet = org.client(org.hamlet)
    create(hamlet)
    create(hamlet, title="Farewell", content="Good night")
    assert register(hamlet, fetch_event_types=["saved_snippets"])["saved_snippets"] == listed(hamlet)
    assert register(org.client(org.othello), fetch_event_types=["saved_snippets"])["saved_snippets"] == []
