"""Facts of Zulip's export layout, read from Zulip's zerver/lib/export.py and import_realm.py.

An export is a folder holding:
- realm.json: {table name: [rows]} for the organization's tables, named as Zulip's database
  tables (zerver_realm, zerver_userprofile, zerver_stream, zerver_recipient, zerver_subscription,
  zerver_huddle, zerver_reaction, ...). Rows are Django's model_to_dict of each row: a foreign key
  appears under the field's name without "_id" ("sender": 5), datetimes as UNIX seconds (float).
- messages-000001.json, messages-000002.json, ...: {"zerver_message": [...],
  "zerver_usermessage": [...]}, at most 1000 messages per file, in id order. A usermessage row
  carries its flags as the integer bit mask "flags_mask" in Zulip's flag order (FLAG_ORDER).
- attachment.json: {"zerver_attachment": [...]}, each row listing the "messages" that link it.
- uploads/records.json (+ the files at uploads/{path}), emoji/records.json (+ emoji/{path}),
  avatars/records.json, realm_icons/records.json: lists of file records.
- migration_status.json: {"migrations_by_app": {app: ["[X] name", ...]}, "zulip_version": "..."}.

A system bot (Welcome Bot, Notification Bot) lives in Zulip's internal realm: it is listed in
zerver_userprofile_crossrealm as {"id", "email", "recipient_id"} rather than as a user row.
"""

# Zulip's Recipient.type values.
RECIPIENT_PERSONAL = 1
RECIPIENT_STREAM = 2
RECIPIENT_HUDDLE = 3

# Zulip's UserMessage flag bits, in bit order (bit i = 1 << i).
FLAG_ORDER = [
    "read", "starred", "collapsed", "mentioned", "stream_wildcard_mentioned", "topic_wildcard_mentioned",
    "group_mentioned", "force_expand", "force_collapse", "has_alert_word", "historical", "is_private",
    "active_mobile_push_notification",
]

FLAG_INDEX = {name: index for index, name in enumerate(FLAG_ORDER)}

MESSAGES_PER_FILE = 1000
MESSAGE_FILE_TEMPLATE = "messages-{:06d}.json"

# What this server writes in migration_status.json besides Zulip's keys, and which of its
# format versions it reads. A Zulip export carries only zulip_version.
FORMAT_KEY = "chat_appliance_export_format"
FORMAT_VERSION = 1
SUPPORTED_FORMAT_VERSIONS = {1}
# Zulip server major versions whose export layout this importer has been written for.
SUPPORTED_ZULIP_MAJORS = range(5, 12)
# The Zulip version this server's API follows (feature level 420 is Zulip 11.0).
ZULIP_VERSION = "11.0"

# Tables every export must have for an import to make sense.
REQUIRED_REALM_TABLES = ("zerver_realm", "zerver_userprofile", "zerver_stream", "zerver_recipient",
                         "zerver_subscription")


def zulip_flags_mask(bits, our_flag_bits):
    """Our flag bits -> Zulip's flags_mask."""
    mask = 0
    for name, bit in our_flag_bits.items():
        if bits & bit and name in FLAG_INDEX:
            mask |= 1 << FLAG_INDEX[name]
    return mask


def our_flag_bits(mask, our_bits):
    """Zulip's flags_mask -> our flag bits (flags this server does not keep are dropped)."""
    bits = 0
    for index, name in enumerate(FLAG_ORDER):
        if mask & (1 << index) and name in our_bits:
            bits |= our_bits[name]
    return bits
