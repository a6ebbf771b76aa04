"""The organization's linkifiers, as the renderer and /register read them."""

from __future__ import annotations


from chat_appliance.models import Linkifier
from chat_appliance.models.base import raw_select


def realm_linkifiers(realm_id: int | None) -> list[Linkifier]:
    """The organization's linkifiers in priority order."""
    return raw_select(Linkifier, '"realm_id" = {p} ORDER BY "order", "id"', realm_id)


def linkifiers_for_realm(realm_id: int | None) -> list[tuple[str, str]]:
    """[(pattern, url_template)] in priority order: what the Markdown renderer applies."""
    return [(l.pattern, l.url_template) for l in realm_linkifiers(realm_id)]
