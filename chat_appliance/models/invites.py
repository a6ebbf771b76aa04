"""Invitations: email invitations and reusable invitation links (Zulip's PreregistrationUser and
MultiuseInvite, kept in one table: ids are unique across both kinds here, which the API allows)."""

from peewee import BigIntegerField, BooleanField, CharField, IntegerField, TextField

from chat_appliance.models.base import BaseModel, ForeignKeyField, JSONField, now
from chat_appliance.models.realm import Realm
from chat_appliance.models.users import ROLE_MEMBER, UserProfile

# An invitation's status. An email invitation becomes USED when its account is created; a
# reusable link stays ACTIVE until revoked or expired.
INVITE_ACTIVE, INVITE_USED, INVITE_REVOKED = 0, 1, 2


class Invitation(BaseModel):
    realm = ForeignKeyField(Realm, on_delete="CASCADE")
    referred_by = ForeignKeyField(UserProfile, null=True, on_delete="CASCADE")
    is_multiuse = BooleanField(default=False)
    # The invitee's address; null for a reusable link.
    email = CharField(max_length=254, null=True)
    # The secret part of the link <realm url>/join/<key>.
    key = CharField(max_length=40, unique=True)
    invited_as = IntegerField(default=ROLE_MEMBER)
    stream_ids = JSONField(default=list)
    group_ids = JSONField(default=list)
    include_realm_default_subscriptions = BooleanField(default=False)
    notify_referrer_on_join = BooleanField(default=True)
    # None: the organization's welcome text; "": none; else this text.
    welcome_message_custom_text = TextField(null=True)
    invited = IntegerField(default=now)
    # UNIX seconds; None never expires.
    expiry_date = BigIntegerField(null=True)
    status = IntegerField(default=INVITE_ACTIVE)

    class Meta:
        table_name = "invitation"
        indexes = ((("realm", "status"), False),)
