"""Things each user keeps for themself and syncs across their clients: drafts and saved snippets."""

from peewee import CharField, IntegerField, TextField

from chat_appliance.models.base import BaseModel, ForeignKeyField, JSONField, now
from chat_appliance.models.users import UserProfile

# A draft's `type`, as the API spells it: unaddressed, channel, direct message.
DRAFT_TYPES = ("", "stream", "private")


class Draft(BaseModel):
    """A message being composed. `to` is the audience as the API returns it: [channel id] for a
    channel draft, the other participants' user ids for a direct one, [] when unaddressed."""

    user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
    type = CharField(max_length=10)
    to = JSONField(default=list)
    # Text rather than a 60-character column: MAX_TOPIC_LENGTH is configurable.
    topic = TextField(default="")
    content = TextField()
    # Unix seconds of the last edit; GET /drafts lists the most recently edited first.
    last_edit_time = IntegerField()

    class Meta:
        indexes = ((("user_profile", "last_edit_time"), False),)


class SavedSnippet(BaseModel):
    """A titled piece of Markdown a user inserts into messages."""

    user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE", index=True)
    title = TextField()
    content = TextField()
    date_created = IntegerField(default=now)
