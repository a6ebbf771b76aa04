"""Record what actions publish on the events bus (the real queues live on another branch)."""

import pytest

from chat_appliance.events import bus


class EventRecorder:
    """Events published while the test runs, with the ids of the users they were sent to."""

    def __init__(self):
        self.published = []

    def __call__(self, event, user_ids):
        self.published.append((event, set(user_ids)))

    def of(self, type_, **match):
        """(event, user ids) pairs of this type whose top-level fields equal `match`."""
        return [(e, ids) for e, ids in self.published
                if e["type"] == type_ and all(e.get(k) == v for k, v in match.items())]

    def one(self, type_, **match):
        """The single matching event, asserted to be exactly one."""
        found = self.of(type_, **match)
        assert len(found) == 1, (type_, match, self.published)
        return found[0]


@pytest.fixture
def events():
    """An EventRecorder listening on the bus for the duration of the test."""
    recorder = bus.add_listener(EventRecorder())
    yield recorder
    bus.remove_listener(recorder)


def active_ids(org):
    """Ids of every active user of the example organization (system bots included)."""
    from chat_appliance.models import UserProfile, database

    with database.connection_context():
        return {u.id for u in UserProfile.select().where((UserProfile.realm == org.realm.id) & UserProfile.is_active)}
