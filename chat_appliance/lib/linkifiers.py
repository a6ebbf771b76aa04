"""The organization's linkifiers, as the renderer and /register read them."""

from __future__ import annotations


from chat_appliance.models import Linkifier


def realm_linkifiers(realm_id: int | None) -> list[Linkifier]:
    """The organization's linkifiers in priority order."""
    return list(Linkifier.select().where(Linkifier.realm == realm_id).order_by(Linkifier.order, Linkifier.id))


def linkifiers_for_realm(realm_id: int | None) -> list[tuple[str, str]]:
    """[(pattern, url_template)] in priority order: what the Markdown renderer applies."""
    return [(l.pattern, l.url_template) for l in realm_linkifiers(realm_id)]
