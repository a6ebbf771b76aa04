"""Migration 90: people and an organization's customization: user statuses, muted users, alert
words, legacy (non-encrypted) push device tokens, custom emoji, code playgrounds and
organization exports.
"""

from peewee import (
    BooleanField,
    CharField,
    FloatField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "people and organization customization"


def apply(database, backend):
    frozen = Frozen(database)
    Realm, UserProfile = frozen.tables("realm", "user_profile")

    class UserStatus(frozen.Model):
        user_profile = ForeignKeyField(UserProfile, unique=True, on_delete="CASCADE")
        status_text = CharField(max_length=255, default="")
        emoji_name = CharField(max_length=100, default="")
        emoji_code = CharField(max_length=100, default="")
        reaction_type = CharField(max_length=30, default="")
        timestamp = IntegerField()

        class Meta:
            table_name = "user_status"

    class MutedUser(frozen.Model):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        muted_user = ForeignKeyField(UserProfile, on_delete="CASCADE")
        date_muted = IntegerField()

        class Meta:
            table_name = "muted_user"
            indexes = ((("user_profile", "muted_user"), True), (("muted_user",), False))

    class AlertWord(frozen.Model):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        word = TextField()
        word_key = CharField(max_length=100)

        class Meta:
            table_name = "alert_word"
            indexes = ((("user_profile", "word_key"), True),)

    class PushDeviceToken(frozen.Model):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        kind = CharField(max_length=10)
        token = CharField(max_length=4096)
        ios_app_id = CharField(max_length=255, null=True)
        date_created = IntegerField()

        class Meta:
            table_name = "push_device_token"
            indexes = ((("user_profile", "kind", "token"), True),)

    class RealmEmoji(frozen.Model):
        realm = ForeignKeyField(Realm, on_delete="CASCADE")
        name = CharField(max_length=100)
        author = ForeignKeyField(UserProfile, null=True, on_delete="SET NULL")
        file_name = CharField(max_length=255, null=True)
        is_animated = BooleanField(default=False)
        deactivated = BooleanField(default=False)

        class Meta:
            table_name = "realm_emoji"

    class RealmPlayground(frozen.Model):
        realm = ForeignKeyField(Realm, on_delete="CASCADE")
        name = CharField(max_length=100)
        pygments_language = CharField(max_length=40)
        url_template = TextField()

        class Meta:
            table_name = "realm_playground"
            indexes = ((("realm", "pygments_language", "name"), True),)

    class RealmExport(frozen.Model):
        realm = ForeignKeyField(Realm, on_delete="CASCADE")
        acting_user = ForeignKeyField(UserProfile, null=True, on_delete="SET NULL")
        export_type = IntegerField(default=1)
        date_requested = FloatField()
        date_succeeded = FloatField(null=True)
        date_failed = FloatField(null=True)
        date_deleted = FloatField(null=True)
        path = CharField(max_length=500, null=True)

        class Meta:
            table_name = "realm_export"

    frozen.create(UserStatus, MutedUser, AlertWord, PushDeviceToken, RealmEmoji, RealmPlayground, RealmExport)
