"""Reads of a user's alert words (actions/alert_words.py changes them)."""

from chat_appliance.models import AlertWord


def user_alert_words(user):
    """The user's words, as typed, in the order they were added."""
    return [row.word for row in AlertWord.select(AlertWord.word).where(AlertWord.user_profile == user)
            .order_by(AlertWord.id)]
