"""Linkifiers (Zulip's realm filters): patterns whose matches the renderer turns into links."""

from __future__ import annotations

from typing import Any

import re
from urllib.parse import urlsplit

from peewee import fn

from chat_appliance.db.connection import write_transaction
from chat_appliance.events.bus import publish
from chat_appliance.lib.audiences import active_user_ids
from chat_appliance.lib.errors import JsonableError
from chat_appliance.lib.linkifiers import realm_linkifiers
from chat_appliance.lib.serializers import linkifier_dict
from chat_appliance.lib.uri_template import InvalidTemplate, template_variables
from chat_appliance.lib import event_catalogue
from chat_appliance.markdown.linkifier_regex import BadPattern, pattern_groups
from chat_appliance.models import Linkifier


def check_linkifier(pattern: str, url_template: str) -> None:
    """The pattern compiles with RE2, the engine the renderer runs it with (linear time: no
    backreferences or look-around), the template is RFC 6570, and the template's variables are
    exactly the pattern's named groups."""
    try:
        groups = pattern_groups(pattern)
    except BadPattern as error:
        raise JsonableError(str(error)) from None
    if not pattern.strip():
        raise JsonableError("Linkifier pattern cannot be empty.")
    try:
        variables = set(template_variables(url_template))
    except InvalidTemplate:
        raise JsonableError("Invalid URL template.") from None
    # An absolute web URL, as Zulip's validator requires: a `javascript:` or `data:` template would
    # put script into every message and topic link the pattern matches.
    example = re.sub(r"\{[^}]*\}", "x", url_template).strip()
    parts = urlsplit(example)
    if parts.scheme.lower() not in ("http", "https", "ftp", "ftps") or not parts.netloc:
        raise JsonableError("Invalid URL template.")
    for name in sorted(variables - groups):
        raise JsonableError(f"Group '{name}' in URL template is not present in linkifier pattern.")
    for name in sorted(groups - variables):
        raise JsonableError(f"Group '{name}' in linkifier pattern is not present in URL template.")


def notify_linkifiers(realm_id: int) -> None:
    """realm_linkifiers with the whole ordered list, to everyone."""
    publish(event_catalogue.realm_linkifiers([linkifier_dict(l) for l in realm_linkifiers(realm_id)]),
            active_user_ids(realm_id))


def do_add_linkifier(realm_id: int, pattern: str, url_template: str) -> Linkifier:
    """Add a linkifier with the lowest priority."""
    check_linkifier(pattern, url_template)
    with write_transaction():
        order = (Linkifier.select(fn.MAX(Linkifier.order)).where(Linkifier.realm == realm_id).scalar() or 0) + 1
        linkifier = Linkifier.create(realm=realm_id, pattern=pattern, url_template=url_template, order=order)
    notify_linkifiers(realm_id)
    return linkifier


def access_linkifier(realm_id: int, filter_id: int) -> Any:
    """A linkifier of the organization, or BAD_REQUEST."""
    linkifier = Linkifier.get_or_none((Linkifier.id == filter_id) & (Linkifier.realm == realm_id))
    if linkifier is None:
        raise JsonableError("Linkifier not found.")
    return linkifier


def do_update_linkifier(linkifier: Linkifier, pattern: str, url_template: str) -> None:
    """Replace a linkifier's pattern and template, keeping its priority."""
    check_linkifier(pattern, url_template)
    with write_transaction():
        linkifier.pattern, linkifier.url_template = pattern, url_template
        linkifier.save()
    notify_linkifiers(linkifier.realm_id)


def do_remove_linkifier(linkifier: Linkifier) -> None:
    """Delete a linkifier."""
    with write_transaction():
        linkifier.delete_instance()
    notify_linkifiers(linkifier.realm_id)


def do_reorder_linkifiers(realm_id: int, ordered_ids: Any) -> None:
    """Set the priority order; the ids must be exactly the organization's linkifiers."""
    with write_transaction():
        current = {l.id for l in realm_linkifiers(realm_id)}
        if len(ordered_ids) != len(set(ordered_ids)) or set(ordered_ids) != current:
            raise JsonableError("Wrong number of linkifiers.")
        for position, linkifier_id in enumerate(ordered_ids):
            Linkifier.update(order=position).where(Linkifier.id == linkifier_id).execute()
    notify_linkifiers(realm_id)
