"""Signed-in browser sessions of the web client."""

from peewee import CharField, IntegerField

from chat_appliance.models.base import BaseModel, ForeignKeyField, now
from chat_appliance.models.users import UserProfile


class WebSession(BaseModel):
    """One signed-in browser. The cookie holds a random token; only its SHA-256 is stored, so a
    copy of the database does not hand out sessions."""

    token_hash = CharField(max_length=64, unique=True)
    user = ForeignKeyField(UserProfile, backref="web_sessions", on_delete="CASCADE")
    # Sent back by the page in X-CSRFToken on every state-changing /json request.
    csrf_token = CharField(max_length=64)
    created = IntegerField(default=now)
    expires = IntegerField()

    class Meta:
        table_name = "web_session"
        indexes = ((("user",), False),)
