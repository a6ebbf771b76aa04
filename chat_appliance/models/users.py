"""Users (humans and bots) and user groups, including the role-based system groups."""

from peewee import BooleanField, CharField, IntegerField, TextField, fn

from chat_appliance.models.base import BaseModel, ForeignKeyField, JSONField, instance_from_row, now, raw_select_rows
from chat_appliance.models.realm import Realm

ROLE_OWNER = 100
ROLE_ADMINISTRATOR = 200
ROLE_MODERATOR = 300
ROLE_MEMBER = 400
ROLE_GUEST = 600
ROLES = (ROLE_OWNER, ROLE_ADMINISTRATOR, ROLE_MODERATOR, ROLE_MEMBER, ROLE_GUEST)

# Zulip's bot types.
BOT_GENERIC, BOT_INCOMING_WEBHOOK, BOT_OUTGOING_WEBHOOK, BOT_EMBEDDED = 1, 2, 3, 4

# email_address_visibility, as Zulip numbers it.
EMAIL_VISIBLE_EVERYONE = 1
EMAIL_VISIBLE_MEMBERS = 2
EMAIL_VISIBLE_ADMINS = 3
EMAIL_VISIBLE_NOBODY = 4
EMAIL_VISIBLE_MODERATORS = 5


class UserProfile(BaseModel):
    realm = ForeignKeyField(Realm, backref="users")
    # The API email: the real address when everyone may see it, else user{id}@{host}.
    email = CharField(max_length=254, index=True)
    delivery_email = CharField(max_length=254, index=True)
    full_name = CharField(max_length=100)
    role = IntegerField(default=ROLE_MEMBER)
    is_active = BooleanField(default=True)
    is_bot = BooleanField(default=False)
    bot_type = IntegerField(null=True)
    bot_owner = ForeignKeyField("self", null=True, backref="bots", on_delete="SET NULL")
    # System bots (welcome bot, notification bot) are Zulip's cross-realm bots.
    is_system_bot = BooleanField(default=False)
    api_key = CharField(max_length=32, unique=True)
    password = CharField(max_length=255, null=True)
    date_joined = IntegerField(default=now)
    timezone = CharField(default="", max_length=64)
    email_address_visibility = IntegerField(default=EMAIL_VISIBLE_EVERYONE)
    avatar_version = IntegerField(default=1)
    # "G": the gravatar Zulip computes; "U": a picture uploaded with POST /users/me/avatar.
    avatar_source = CharField(max_length=1, default="G")
    # Personal settings beyond the columns above; defaults live in lib/user_settings.py.
    settings = JSONField(default=dict)
    # Soft deactivation (actions/soft_deactivation.py): a person idle for a long time gets no
    # per-user row for a channel message that would carry no flag; the rows of the messages
    # after last_active_message_id are added when they come back.
    long_term_idle = BooleanField(default=False)
    last_active_message_id = IntegerField(null=True)

    @property
    def is_owner(self):
        return self.role == ROLE_OWNER

    @property
    def is_realm_admin(self):
        return self.role in (ROLE_OWNER, ROLE_ADMINISTRATOR)

    @property
    def is_moderator(self):
        return self.role == ROLE_MODERATOR

    @property
    def is_guest(self):
        return self.role == ROLE_GUEST

    @classmethod
    def fetch_row_by_id(cls, user_id):
        """The row of the account with this id, as a tuple, or None, through SQL built once: a
        Basic request authenticates by it (web/auth.py keeps it); `from_row` makes the account."""
        return next(iter(raw_select_rows(cls, '"id" = {p}', user_id)), None)

    @classmethod
    def from_row(cls, row):
        """A new account instance of a fetch_row_by_id row (each caller gets its own)."""
        return instance_from_row(cls, row)

    @classmethod
    def get_by_login_email(cls, email):
        """The account an HTTP Basic user name names: its API email or its real address."""
        lowered = email.strip().lower()
        return (
            cls.select()
            .where((fn.LOWER(cls.email) == lowered) | (fn.LOWER(cls.delivery_email) == lowered))
            .order_by(cls.id)
            .first()
        )


class UserGroup(BaseModel):
    realm = ForeignKeyField(Realm, backref="user_groups")
    name = CharField(max_length=100)
    description = TextField(default="")
    is_system_group = BooleanField(default=False)
    deactivated = BooleanField(default=False)
    date_created = IntegerField(default=now)
    creator = ForeignKeyField(UserProfile, null=True, on_delete="SET NULL")
    # Group-valued permission settings of this group (ids of groups), as Zulip's can_*_group.
    settings = JSONField(default=dict)

    class Meta:
        indexes = ((("realm", "name"), True),)


class UserGroupMembership(BaseModel):
    """Direct members of a group (recursive membership goes through GroupGroupMembership)."""

    user_group = ForeignKeyField(UserGroup, backref="direct_memberships", on_delete="CASCADE")
    user_profile = ForeignKeyField(UserProfile, backref="group_memberships", on_delete="CASCADE")

    class Meta:
        indexes = ((("user_group", "user_profile"), True), (("user_profile",), False))


class GroupGroupMembership(BaseModel):
    """`subgroup` is a direct subgroup of `supergroup`."""

    supergroup = ForeignKeyField(UserGroup, backref="direct_subgroup_links", on_delete="CASCADE")
    subgroup = ForeignKeyField(UserGroup, backref="direct_supergroup_links", on_delete="CASCADE")

    class Meta:
        indexes = ((("supergroup", "subgroup"), True),)
