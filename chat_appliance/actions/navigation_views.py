"""Navigation views: each user's pinned or hidden left-sidebar views, built-in or custom."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.errors import JsonableError, ResourceNotFoundError
from chat_appliance.lib.serializers import view_dict
from chat_appliance.lib import event_catalogue
from chat_appliance.models import NavigationView

if TYPE_CHECKING:
    from chat_appliance.models import UserProfile

# The fragments of Zulip's built-in views (web app URL hashes). A stored row for one of them
# only records whether it is pinned; built-in views never carry a name.
BUILT_IN_FRAGMENTS = frozenset({
    "inbox", "recent", "feed", "drafts", "scheduled", "reminders",
    "narrow/is/mentioned", "narrow/is/starred", "narrow/has/reaction/sender/me",
})


def find_view(user: UserProfile, fragment: str) -> Any:
    """The user's stored row for this fragment, or None."""
    return NavigationView.get_or_none((NavigationView.user_profile == user) & (NavigationView.fragment == fragment))


def check_new_view(user: UserProfile, fragment: str, name: str) -> str:
    """Zulip's rules: a fragment, not stored yet; a name exactly when the view is custom."""
    fragment = fragment.strip()
    if not fragment:
        raise JsonableError("fragment cannot be blank")
    if fragment in BUILT_IN_FRAGMENTS:
        if name is not None:
            raise JsonableError("Built-in views cannot have a custom name.")
    elif not (name and name.strip()):
        raise JsonableError("Custom views must have a valid name.")
    if find_view(user, fragment) is not None or name_taken(user, name):
        raise JsonableError("Navigation view already exists.")
    return fragment


def name_taken(user: UserProfile, name: str) -> bool:
    """Whether another of the user's views already has this name (names are unique per user)."""
    return name is not None and NavigationView.select().where(
        (NavigationView.user_profile == user) & (NavigationView.name == name.strip())).exists()


def do_add_view(user: UserProfile, fragment: str, is_pinned: bool, name: str) -> NavigationView:
    """Store a view for the user; only the user's own clients are told."""
    with write_transaction():
        view = NavigationView.create(user_profile=user, fragment=fragment, is_pinned=is_pinned,
                                     name=name.strip() if name else None)
    publish(event_catalogue.navigation_view_add(view_dict(view)), [user.id])
    return view


def access_view_for_update(user: Any, fragment: str) -> Any:
    """The stored view, or a new unsaved row for a built-in view; NOT_FOUND otherwise."""
    view = find_view(user, fragment)
    if view is None and fragment in BUILT_IN_FRAGMENTS:
        return NavigationView(user_profile=user, fragment=fragment, is_pinned=True, name=None)
    if view is None:
        raise ResourceNotFoundError("Navigation view does not exist.")
    return view


def do_update_view(view: NavigationView, changes: Any) -> None:
    """Apply is_pinned/name to the (possibly new) row; the user's clients are told."""
    with write_transaction():
        for key, value in changes.items():
            setattr(view, key, value)
        view.save()
    publish(event_catalogue.navigation_view_update(view.fragment, changes), [view.user_profile_id])


def do_remove_view(user: Any, fragment: str) -> None:
    """Delete the user's stored view (a built-in one returns to its defaults)."""
    view = find_view(user, fragment)
    if view is None:
        raise ResourceNotFoundError("Navigation view does not exist.")
    with write_transaction():
        view.delete_instance()
    publish(event_catalogue.navigation_view_remove(fragment), [user.id])


def user_views(user: UserProfile) -> list[NavigationView]:
    """The user's stored views, oldest first."""
    return list(NavigationView.select().where(NavigationView.user_profile == user).order_by(NavigationView.id))
