"""The presence each user last reported (POST /users/me/presence)."""

from peewee import IntegerField

from chat_appliance.models.base import BaseModel, ForeignKeyField, now
from chat_appliance.models.users import UserProfile


class UserPresence(BaseModel):
    """The last presence a user's clients reported. Zulip keeps two times: when a client was last
    connected (idle or active) and when the user was last active; `last_update_id` orders changes
    for the incremental presence protocol."""

    user_profile = ForeignKeyField(UserProfile, unique=True, on_delete="CASCADE")
    last_connected_time = IntegerField(default=now)
    last_active_time = IntegerField(null=True)
    last_update_id = IntegerField(default=0, index=True)
