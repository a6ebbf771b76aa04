"""Reads of an organization's code playgrounds (actions/playgrounds.py changes them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from chat_appliance.models import RealmPlayground
from chat_appliance.models.base import raw_select

if TYPE_CHECKING:
    from chat_appliance.lib.types import JSONDict


def playground_dict(playground: Any) -> JSONDict:
    """Zulip's RealmPlayground object."""
    return {"id": playground.id, "name": playground.name, "pygments_language": playground.pygments_language,
            "url_template": playground.url_template}


def realm_playgrounds(realm_id: int) -> list[Any]:
    """The organization's playgrounds, oldest first."""
    return [playground_dict(p) for p in raw_select(RealmPlayground, '"realm_id" = {p} ORDER BY "id"', realm_id)]
