"""Events go out when the transaction that made the change commits, never for one rolled back."""

import pytest

from chat_appliance.actions.channels import subscribe_users_to_streams
from chat_appliance.db.connection import write_transaction
from chat_appliance.models import Subscription, database


class Abort(Exception):
    """Raised to roll a test transaction back."""


def test_events_wait_for_the_commit(org, events):
    """Is a subscription published inside a transaction delivered only once it commits?"""
    with database.connection_context():
        with write_transaction():
            subscribe_users_to_streams([org.verona], [org.othello])
            assert events.of("subscription") == []
        [(add, to)] = events.of("subscription", op="add")
    assert to == {org.othello.id} and add["subscriptions"][0]["name"] == "Verona"
    assert events.one("subscription", op="peer_add")[1] >= {org.hamlet.id, org.cordelia.id}


def test_rolled_back_changes_send_nothing(org, events):
    """Does a transaction that rolls back drop the events published in it, along with its rows?"""
    with database.connection_context():
        with pytest.raises(Abort), write_transaction():
            subscribe_users_to_streams([org.verona], [org.othello])
            raise Abort
        assert not Subscription.select().where((Subscription.user_profile == org.othello.id)
                                               & (Subscription.stream == org.verona.id)).exists()
    assert events.published == []


def test_a_rolled_back_savepoint_drops_only_its_own_events(org, events):
    """Inside a committed transaction, are the events of a rolled-back nested one dropped while
    the others go out?"""
    with database.connection_context():
        with write_transaction():
            subscribe_users_to_streams([org.verona], [org.othello])
            with pytest.raises(Abort), write_transaction():
                subscribe_users_to_streams([org.denmark], [org.cordelia])
                raise Abort
    assert [(e["subscriptions"][0]["name"], ids) for e, ids in events.of("subscription", op="add")] == [
        ("Verona", {org.othello.id})]


def test_outside_a_transaction_events_go_at_once(org, events):
    """Does an action run outside any transaction still publish (it commits its own)?"""
    with database.connection_context():
        subscribe_users_to_streams([org.verona], [org.othello])
    assert events.one("subscription", op="add")[1] == {org.othello.id}
