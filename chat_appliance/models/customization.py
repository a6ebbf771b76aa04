"""Organization customizations: custom emoji, code playgrounds, and data exports."""

from peewee import BooleanField, CharField, FloatField, IntegerField, TextField

from chat_appliance.models.base import BaseModel, ForeignKeyField
from chat_appliance.models.realm import Realm
from chat_appliance.models.users import UserProfile


class RealmEmoji(BaseModel):
    """A custom emoji. Its image is `{INSTANCE_PATH}/avatars/{realm_id}/emoji/images/{file_name}`,
    served at /user_avatars/{realm_id}/emoji/images/{file_name} as in Zulip. A deactivated emoji
    keeps its row and image: old messages and reactions still show it."""

    realm = ForeignKeyField(Realm, backref="emoji", on_delete="CASCADE")
    name = CharField(max_length=100)
    author = ForeignKeyField(UserProfile, null=True, on_delete="SET NULL")
    file_name = CharField(max_length=255, null=True)
    is_animated = BooleanField(default=False)
    deactivated = BooleanField(default=False)


class RealmPlayground(BaseModel):
    """A code playground: code blocks of `pygments_language` link to `url_template`."""

    realm = ForeignKeyField(Realm, backref="playgrounds", on_delete="CASCADE")
    name = CharField(max_length=100)
    pygments_language = CharField(max_length=40)
    url_template = TextField()

    class Meta:
        indexes = ((("realm", "pygments_language", "name"), True),)


class RealmExport(BaseModel):
    """One organization export written to the instance folder (times in UNIX seconds, float
    as Zulip reports them). `path` is the export's folder relative to the instance folder."""

    realm = ForeignKeyField(Realm, backref="exports", on_delete="CASCADE")
    acting_user = ForeignKeyField(UserProfile, null=True, on_delete="SET NULL")
    export_type = IntegerField(default=1)
    date_requested = FloatField()
    date_succeeded = FloatField(null=True)
    date_failed = FloatField(null=True)
    date_deleted = FloatField(null=True)
    path = CharField(max_length=500, null=True)
