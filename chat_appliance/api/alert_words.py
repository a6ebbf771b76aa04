"""Alert words: GET|POST|DELETE /users/me/alert_words."""

from flask import Blueprint

from chat_appliance.actions.alert_words import ALERT_WORD_MAX_LENGTH, clean_alert_words, do_add_alert_words, do_remove_alert_words
from chat_appliance.lib.alert_words import user_alert_words
from chat_appliance.lib.validators import list_of, string_max
from chat_appliance.web.params import Param, endpoint

bp = Blueprint("alert_words", __name__)

ALERT_WORDS = Param(list_of(string_max(ALERT_WORD_MAX_LENGTH)))


@bp.get("/users/me/alert_words")
@endpoint()
def get_alert_words(user):
    """The requester's alert words."""
    return {"alert_words": user_alert_words(user)}


@bp.post("/users/me/alert_words")
@endpoint(alert_words=ALERT_WORDS)
def add_alert_words(user, alert_words):
    """Add alert words; the answer lists them all."""
    return {"alert_words": do_add_alert_words(user, clean_alert_words(alert_words))}


@bp.delete("/users/me/alert_words")
@endpoint(alert_words=ALERT_WORDS)
def remove_alert_words(user, alert_words):
    """Remove alert words; the answer lists those left."""
    return {"alert_words": do_remove_alert_words(user, clean_alert_words(alert_words))}
