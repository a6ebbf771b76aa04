"""Organization structure: channel folders, navigation views, linkifiers, custom profile
fields, special user permissions and push registrations."""

from peewee import BigIntegerField, BooleanField, CharField, IntegerField, TextField

from chat_appliance.models.base import BaseModel, ForeignKeyField, now
from chat_appliance.models.realm import Realm
from chat_appliance.models.users import UserProfile


class ChannelFolder(BaseModel):
    realm = ForeignKeyField(Realm, backref="channel_folders")
    name = CharField(max_length=60)
    description = CharField(max_length=1024, default="")
    rendered_description = TextField(default="")
    date_created = IntegerField(default=now)
    creator = ForeignKeyField(UserProfile, null=True, on_delete="SET NULL")
    order = IntegerField(default=0)
    is_archived = BooleanField(default=False)


class NavigationView(BaseModel):
    """A user's setting for one left-sidebar view: a built-in one (no name) or a custom one."""

    user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
    fragment = CharField(max_length=200)
    is_pinned = BooleanField(default=True)
    name = CharField(max_length=200, null=True)

    class Meta:
        indexes = ((("user_profile", "fragment"), True),)


class Linkifier(BaseModel):
    """Zulip's RealmFilter: a pattern and the URL template its matches link to."""

    realm = ForeignKeyField(Realm, backref="linkifiers")
    pattern = TextField()
    url_template = TextField()
    # Lower first: the order in which the renderer tries linkifiers.
    order = IntegerField(default=0)


class CustomProfileField(BaseModel):
    realm = ForeignKeyField(Realm, backref="profile_fields")
    name = CharField(max_length=40)
    hint = CharField(max_length=80, default="")
    field_type = IntegerField()
    field_data = TextField(default="")
    order = IntegerField(default=0)
    display_in_profile_summary = BooleanField(default=False)
    required = BooleanField(default=False)
    editable_by_user = BooleanField(default=True)


class CustomProfileFieldValue(BaseModel):
    user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
    field = ForeignKeyField(CustomProfileField, on_delete="CASCADE")
    value = TextField()
    rendered_value = TextField(null=True)

    class Meta:
        indexes = ((("user_profile", "field"), True),)


class UserPermission(BaseModel):
    """A special permission granted to one user, e.g. 'can_change_user_emails'."""

    user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
    permission = CharField(max_length=60)

    class Meta:
        indexes = ((("user_profile", "permission"), True),)


class PushDevice(BaseModel):
    """An end-to-end encrypted push registration, one per user and push_account_id."""

    user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
    push_account_id = BigIntegerField()
    token_kind = CharField(max_length=10)
    push_public_key = TextField()
    bouncer_public_key = TextField()
    encrypted_push_registration = TextField()
    date_updated = IntegerField(default=now)

    class Meta:
        indexes = ((("user_profile", "push_account_id"), True),)


class ClientDevice(BaseModel):
    """One installed app of a user (Zulip's register_client_device), with its push state: the
    key its notifications are encrypted with (clients/push_e2ee.py), and its FCM or APNs token as
    the push service knows it, by token id (pending while the service has not confirmed it)."""

    user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
    # An unsigned 32-bit integer: beyond a 32-bit signed column (PostgreSQL's integer).
    push_key_id = BigIntegerField(null=True)
    # The tag byte 0x31 and the 32-byte secretbox key, base64 as the app sent it.
    push_key = CharField(max_length=64, null=True)
    push_token_kind = CharField(max_length=4, null=True)  # "fcm" or "apns"
    push_token_id = CharField(max_length=100, null=True)
    pending_push_token_id = CharField(max_length=100, null=True)
    push_token_last_updated_timestamp = IntegerField(null=True)
    push_registration_error_code = CharField(max_length=100, null=True)
    date_created = IntegerField(default=now)
