"""Migration 10: the structure of an organization: channel folders, pinned navigation views,
linkifiers, custom profile fields and their values, special permissions granted to users, and
the devices registered for (end-to-end encrypted) push notifications.
"""

from peewee import (
    BigIntegerField,
    BooleanField,
    CharField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from chat_appliance.migrations.frozen import Frozen

DESCRIPTION = "organization structure"


def apply(database, backend):
    frozen = Frozen(database)
    Realm, UserProfile = frozen.tables("realm", "user_profile")

    class ChannelFolder(frozen.Model):
        realm = ForeignKeyField(Realm)
        name = CharField(max_length=60)
        description = CharField(max_length=1024)
        rendered_description = TextField()
        date_created = IntegerField()
        creator = ForeignKeyField(UserProfile, on_delete="SET NULL", null=True)
        order = IntegerField()
        is_archived = BooleanField()

        class Meta:
            table_name = "channel_folder"

    class NavigationView(frozen.Model):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        fragment = CharField(max_length=200)
        is_pinned = BooleanField()
        name = CharField(max_length=200, null=True)

        class Meta:
            table_name = "navigation_view"
            indexes = ((('user_profile', 'fragment'), True),)

    class Linkifier(frozen.Model):
        realm = ForeignKeyField(Realm)
        pattern = TextField()
        url_template = TextField()
        order = IntegerField()

        class Meta:
            table_name = "linkifier"

    class CustomProfileField(frozen.Model):
        realm = ForeignKeyField(Realm)
        name = CharField(max_length=40)
        hint = CharField(max_length=80)
        field_type = IntegerField()
        field_data = TextField()
        order = IntegerField()
        display_in_profile_summary = BooleanField()
        required = BooleanField()
        editable_by_user = BooleanField()

        class Meta:
            table_name = "custom_profile_field"

    class CustomProfileFieldValue(frozen.Model):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        field = ForeignKeyField(CustomProfileField, on_delete="CASCADE")
        value = TextField()
        rendered_value = TextField(null=True)

        class Meta:
            table_name = "custom_profile_field_value"
            indexes = ((('user_profile', 'field'), True),)

    class UserPermission(frozen.Model):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        permission = CharField(max_length=60)

        class Meta:
            table_name = "user_permission"
            indexes = ((('user_profile', 'permission'), True),)

    class PushDevice(frozen.Model):
        user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
        push_account_id = BigIntegerField()
        token_kind = CharField(max_length=10)
        push_public_key = TextField()
        bouncer_public_key = TextField()
        encrypted_push_registration = TextField()
        date_updated = IntegerField()

        class Meta:
            table_name = "push_device"
            indexes = ((('user_profile', 'push_account_id'), True),)

    frozen.create(
        ChannelFolder, NavigationView, Linkifier, CustomProfileField, CustomProfileFieldValue, UserPermission,
        PushDevice,
    )
