"""The organization (Zulip's realm). One server hosts one organization."""

from peewee import BooleanField, CharField, IntegerField

from chat_appliance.models.base import BaseModel, JSONField, now

# Zulip's message_edit_history_visibility_policy values, by API name.
EDIT_HISTORY_POLICIES = {"all": 1, "moves": 2, "none": 3}


class Realm(BaseModel):
    name = CharField(max_length=40)
    # Host part of bot and placeholder emails, and of the organization URL.
    host = CharField(max_length=255)
    url = CharField(max_length=255)
    date_created = IntegerField(default=now)
    description = CharField(default="", max_length=1000)
    moderation_request_channel_id = IntegerField(null=True)
    message_edit_history_visibility_policy = IntegerField(default=EDIT_HISTORY_POLICIES["all"])
    # Group ids; set by init to the matching role groups (see actions.realm.create_realm).
    can_mention_many_users_group_id = IntegerField(null=True)
    allow_message_editing = BooleanField(default=True)
    # Zulip's default: 10 minutes. Clients compare it with `> 0`, so it is never null here.
    message_content_edit_limit_seconds = IntegerField(default=600)
    # Extra organization settings that need no query of their own (see lib/realm_settings.py).
    settings = JSONField(default=dict)

    def edit_history_policy_name(self):
        """The API name of the edit-history visibility policy."""
        return {v: k for k, v in EDIT_HISTORY_POLICIES.items()}[self.message_edit_history_visibility_policy]


def instance_realm() -> "Realm | None":
    """The organization this server hosts (one per instance), or None before it is created."""
    return Realm.select().order_by(Realm.id).first()
