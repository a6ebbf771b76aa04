"""Reads of an organization's code playgrounds (actions/playgrounds.py changes them)."""

from chat_appliance.models import RealmPlayground


def playground_dict(playground):
    """Zulip's RealmPlayground object."""
    return {"id": playground.id, "name": playground.name, "pygments_language": playground.pygments_language,
            "url_template": playground.url_template}


def realm_playgrounds(realm_id):
    """The organization's playgrounds, oldest first."""
    return [playground_dict(p) for p in RealmPlayground.select().where(RealmPlayground.realm == realm_id)
            .order_by(RealmPlayground.id)]
