"""An organization that requires topics refuses a channel message without one."""

from chat_appliance.models import Realm, database

from ..support.helpers import err


def test_mandatory_topics(org):
    """With topics required in the organization, is an empty topic (or its aliases) refused?"""
    with database.connection_context():
        realm = Realm.get_by_id(org.realm.id)
        realm.settings = dict(realm.settings, mandatory_topics=True)
        realm.save()
    for topic in ("", "(no topic)", "general chat"):
        err(org.client(org.hamlet).post("messages", type="stream", to="Denmark", topic=topic, content="x"), 400,
            "BAD_REQUEST", "Topics are required in this organization.")
