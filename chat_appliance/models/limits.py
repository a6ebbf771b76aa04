"""The longest text each stored column takes: one table, enforced on every write through the
models (unbounded, a bot's payload_url of 2 MiB, a playground's url_template of 2 MiB, profile
field choices of 1 MB, each sent to every client in /register).

A CharField's limit is its max_length; TEXT_LIMITS gives the others (TextField and JSONField,
JSON measured as stored). The API's own checks, with Zulip's texts, come first and are often
tighter; this is the floor under all of them, so that a field nobody remembered to check is
still bounded. tests/security/test_input_limits.py walks every text column of every model and
fails for one without a limit.
"""

import json

from peewee import CharField, Field, TextField

# "table.column": characters. Ceilings for derived text (rendered HTML, edit history) are wide:
# they follow from bounded inputs.
TEXT_LIMITS = {
    "realm.settings": 100_000,
    "user_profile.settings": 100_000,
    "user_group.description": 1024,
    "user_group.settings": 100_000,
    "bot_service.base_url": 2048,
    "bot_service.config_data": 10_000,
    "stream.rendered_description": 100_000,
    "stream.settings": 100_000,
    "invitation.stream_ids": 100_000,
    "invitation.group_ids": 100_000,
    "invitation.welcome_message_custom_text": 10_000,
    "message.content": 1_000_000,
    "message.rendered_content": 5_000_000,
    "message.edit_history": 20_000_000,
    "bot_storage_data.value": 100_000,
    "channel_folder.rendered_description": 100_000,
    "linkifier.pattern": 2048,
    "linkifier.url_template": 2048,
    "custom_profile_field.field_data": 20_000,
    "custom_profile_field_value.value": 20_000,
    "custom_profile_field_value.rendered_value": 200_000,
    "push_device.push_public_key": 10_000,
    # A mail's subject is one header line (RFC 5322: at most 998 characters); the last error is
    # the SMTP server's reply, kept short.
    "outgoing_email.subject": 998,
    "outgoing_email.last_error": 2000,
    "push_device.bouncer_public_key": 10_000,
    "push_device.encrypted_push_registration": 20_000,
    "realm_playground.url_template": 2048,
    "alert_word.word": 100,
    "draft.to": 100_000,
    "draft.topic": 10_000,
    "draft.content": 1_000_000,
    "scheduled_message.to": 100_000,
    "scheduled_message.topic": 10_000,
    "scheduled_message.content": 1_000_000,
    "scheduled_message.rendered_content": 5_000_000,
    "scheduled_message.failure_message": 10_000,
    "saved_snippet.title": 1000,
    "saved_snippet.content": 1_000_000,
    # A widget's first submessage repeats its message's options; later ones are a vote or a task.
    "sub_message.content": 100_000,
    # Shards (models/shards.py), written with SQL by events/shards.py and web/shared_rate_limit.py:
    # an event as published (a message's Markdown and HTML, an edit's old and new forms), and
    # "domain|key|seconds|limit" with the key an address, an account or a name as typed.
    "event_log.payload": 50_000_000,
    "rate_limit_bucket.key": 10_000,
    "rate_limit_failure.key": 10_000,
}


class TextTooLongError(ValueError):
    """A value longer than its column's limit; the HTTP layer answers 400 with this text."""

    def __init__(self, field, limit):
        super().__init__(f"{field.name} is too long (limit: {limit} characters)")
        self.field, self.limit = field, limit


def text_limit(field):
    """The limit of a text column, or None for a column that holds no text."""
    if isinstance(field, CharField):
        return field.max_length
    if isinstance(field, TextField):
        return TEXT_LIMITS.get(f"{field.model._meta.table_name}.{field.column_name}")
    return None


def check_text_lengths(model, values):
    """Raise TextTooLongError for a value in `values` ({field or field name: value}) longer than
    its column takes."""
    for key, value in values.items():
        if value is None or isinstance(value, (int, float, bool)):
            continue
        field = key if isinstance(key, Field) else model._meta.fields.get(key)
        limit = text_limit(field) if field is not None else None
        if limit is None:
            continue
        if isinstance(value, str):
            length = len(value)
        elif isinstance(value, (dict, list)):
            length = len(json.dumps(value, separators=(",", ":")))
        else:
            continue
        if length > limit:
            raise TextTooLongError(field, limit)
