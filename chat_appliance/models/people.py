"""What each person keeps about themselves and others: a status, muted users, alert words, and
legacy (unencrypted) push device tokens."""

from peewee import CharField, IntegerField, TextField

from chat_appliance.models.base import BaseModel, ForeignKeyField, now
from chat_appliance.models.users import UserProfile


class UserStatus(BaseModel):
    """A user's status: text and an emoji, each empty when not set."""

    user_profile = ForeignKeyField(UserProfile, unique=True, on_delete="CASCADE")
    status_text = CharField(max_length=255, default="")
    emoji_name = CharField(max_length=100, default="")
    emoji_code = CharField(max_length=100, default="")
    reaction_type = CharField(max_length=30, default="")
    timestamp = IntegerField(default=now)


class MutedUser(BaseModel):
    """`user_profile` muted `muted_user`: the muter's copies of their messages arrive read."""

    user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
    muted_user = ForeignKeyField(UserProfile, on_delete="CASCADE")
    date_muted = IntegerField(default=now)

    class Meta:
        indexes = ((("user_profile", "muted_user"), True), (("muted_user",), False))


class AlertWord(BaseModel):
    """A word or phrase that flags a message for its owner (has_alert_word). Kept as typed;
    `word_key` is its lower-case form, unique per user, since alert words ignore case."""

    user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
    word = TextField()
    word_key = CharField(max_length=100)

    class Meta:
        indexes = ((("user_profile", "word_key"), True),)


class PushDeviceToken(BaseModel):
    """A legacy push registration: an APNs device token or an FCM registration id."""

    user_profile = ForeignKeyField(UserProfile, on_delete="CASCADE")
    kind = CharField(max_length=10)  # "apns" or "fcm"
    token = CharField(max_length=4096)
    ios_app_id = CharField(max_length=255, null=True)
    date_created = IntegerField(default=now)

    class Meta:
        indexes = ((("user_profile", "kind", "token"), True),)
