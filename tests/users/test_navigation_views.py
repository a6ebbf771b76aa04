"""Navigation views: GET/POST /navigation_views, PATCH/DELETE /navigation_views/{fragment}."""

from ..support.helpers import err, ok


def test_add_custom_and_list(org, events):
    """Is a custom view added, listed for its owner only, and announced to its owner only?"""
    client = org.client(org.hamlet)
    ok(client.post("navigation_views", fragment="narrow/is/alerted", is_pinned=True, name="Alert words"))
    views = ok(client.get("navigation_views"))["navigation_views"]
    assert views == [{"fragment": "narrow/is/alerted", "is_pinned": True, "name": "Alert words"}]
    assert ok(org.client(org.othello).get("navigation_views"))["navigation_views"] == []
    _event, ids = events.one("navigation_view", op="add")
    assert ids == {org.hamlet.id}


def test_add_rules(org):
    """Are a blank fragment, a named built-in view, an unnamed custom view and a duplicate refused?"""
    client = org.client(org.hamlet)
    err(client.post("navigation_views", fragment="", is_pinned=True), 400, "BAD_REQUEST", "fragment cannot be blank")
    err(client.post("navigation_views", fragment="inbox", is_pinned=True, name="Mine"), 400, "BAD_REQUEST",
        "Built-in views cannot have a custom name.")
    err(client.post("navigation_views", fragment="narrow/x", is_pinned=True), 400, "BAD_REQUEST")
    ok(client.post("navigation_views", fragment="inbox", is_pinned=False))
    err(client.post("navigation_views", fragment="inbox", is_pinned=True), 400, "BAD_REQUEST")


def test_update_fragment_with_slashes(org, events):
    """Does PATCH on a fragment with slashes update pin and name, told to the owner only?"""
    client = org.client(org.hamlet)
    ok(client.post("navigation_views", fragment="narrow/is/alerted", is_pinned=True, name="Alerts"))
    ok(client.patch("navigation_views/narrow/is/alerted", is_pinned=False, name="Alerted"))
    assert ok(client.get("navigation_views"))["navigation_views"] == [
        {"fragment": "narrow/is/alerted", "is_pinned": False, "name": "Alerted"}]
    event, ids = events.one("navigation_view", op="update")
    assert event["fragment"] == "narrow/is/alerted" and ids == {org.hamlet.id}


def test_update_builtin_pin_but_not_name(org):
    """Can a built-in view be unpinned without a stored row, while naming it is BAD_REQUEST?"""
    client = org.client(org.hamlet)
    ok(client.patch("navigation_views/narrow/is/starred", is_pinned=False))
    assert ok(client.get("navigation_views"))["navigation_views"][0]["is_pinned"] is False
    err(client.patch("navigation_views/recent", name="Recent stuff"), 400, "BAD_REQUEST",
        "Built-in views cannot have a custom name.")


def test_unknown_fragment_not_found(org):
    """Does PATCH or DELETE of an unknown fragment give NOT_FOUND (404)?"""
    client = org.client(org.hamlet)
    err(client.patch("navigation_views/narrow/nothing", is_pinned=False), 404, "NOT_FOUND",
        "Navigation view does not exist.")
    err(client.delete("navigation_views/narrow/nothing"), 404, "NOT_FOUND")


def test_remove(org, events):
    """Does DELETE remove the view, told to the owner only?"""
    client = org.client(org.hamlet)
    ok(client.post("navigation_views", fragment="narrow/is/alerted", is_pinned=True, name="Alerts"))
    ok(client.delete("navigation_views/narrow/is/alerted"))
    assert ok(client.get("navigation_views"))["navigation_views"] == []
    _event, ids = events.one("navigation_view", op="remove", fragment="narrow/is/alerted")
    assert ids == {org.hamlet.id}


def test_custom_view_names_are_unique_per_user(org):
    """Is a second custom view with the same name refused, on add and on rename?"""
    client = org.client(org.hamlet)
    ok(client.post("navigation_views", fragment="narrow/channel/1", is_pinned=True, name="Work"))
    err(client.post("navigation_views", fragment="narrow/channel/2", is_pinned=True, name="Work"), 400,
        "BAD_REQUEST", "Navigation view already exists.")
    ok(client.post("navigation_views", fragment="narrow/channel/2", is_pinned=True, name="Play"))
    err(client.patch("navigation_views/narrow/channel/2", name="Work"), 400, "BAD_REQUEST",
        "Navigation view already exists.")


def test_followed_is_not_built_in(org):
    """Is narrow/is/followed a custom view (it needs a name), unlike the built-in views?"""
    err(org.client(org.hamlet).post("navigation_views", fragment="narrow/is/followed", is_pinned=True), 400,
        "BAD_REQUEST", "Custom views must have a valid name.")
