"""Peewee models, split by domain. Import them from here, not from their modules.

The base and the organization (Realm) load with the package. The other model modules load
together, on the first use of any of their names here (models/everything.py): a restarted server
answers its first request, GET /server_settings, without them (issue 32), and whenever one model
is in use all are, so that every backref they add exists. Outside this package, only the base,
the organization's module, the limits and the shards' tables are imported directly
(tests/test_layers.py)."""

from importlib import import_module
from typing import TYPE_CHECKING

from chat_appliance.models.base import MAX_DATABASE_INT, BaseModel, JSONField, database, in_ids, now
from chat_appliance.models.realm import EDIT_HISTORY_POLICIES, Realm, instance_realm

if TYPE_CHECKING:  # for mypy: what __getattr__ returns (the same names as _LAZY: tests/test_lazy_imports.py)
    from chat_appliance.models.users import (ROLE_ADMINISTRATOR, ROLE_GUEST, ROLE_MEMBER, ROLE_MODERATOR, ROLE_OWNER,
                                             ROLES, BOT_EMBEDDED, BOT_GENERIC, BOT_INCOMING_WEBHOOK, BOT_OUTGOING_WEBHOOK,
                                             EMAIL_VISIBLE_ADMINS, EMAIL_VISIBLE_EVERYONE, EMAIL_VISIBLE_MEMBERS,
                                             EMAIL_VISIBLE_MODERATORS, GroupGroupMembership, UserGroup,
                                             UserGroupMembership, UserProfile)
    from chat_appliance.models.channels import (RECIPIENT_DIRECT_MESSAGE_GROUP, RECIPIENT_STREAM, DirectMessageGroup,
                                                DirectMessageGroupMember, Recipient, Stream, Subscription)
    from chat_appliance.models.messages import (EMPTY_TOPIC_DISPLAY_NAME, FLAG_BITS, PENDING_UNREAD_INDEX,
                                                TOPIC_FOLLOWED, TOPIC_INHERIT, TOPIC_MUTED, TOPIC_UNMUTED,
                                                BotStorageData, Message, PendingUnreadMessage, Reaction, SubMessage,
                                                UserMessage, UserTopic, new_user_message_rows, received_conditions,
                                                unread_conditions)
    from chat_appliance.models.org import (ChannelFolder, ClientDevice, CustomProfileField, CustomProfileFieldValue,
                                           Linkifier, NavigationView, PushDevice, UserPermission)
    from chat_appliance.models.customization import RealmEmoji, RealmExport, RealmPlayground
    from chat_appliance.models.people import AlertWord, MutedUser, PushDeviceToken, UserStatus
    from chat_appliance.models.personal import DRAFT_TYPES, Draft, SavedSnippet
    from chat_appliance.models.presence import UserPresence
    from chat_appliance.models.uploads import Attachment, AttachmentMessage
    from chat_appliance.models.web import WebSession
    from chat_appliance.models.invites import INVITE_ACTIVE, INVITE_REVOKED, INVITE_USED, Invitation
    from chat_appliance.models.bots import INTERFACE_GENERIC, INTERFACE_SLACK, BotService
    from chat_appliance.models.scheduled import REMINDER, SEND_LATER, ScheduledMessage
    from chat_appliance.models.channel_email import ChannelEmailAddress

# The names loaded on first use, by the module that defines them, each module after those it
# imports (the order in which models/everything.py loads them).
_LAZY = {
    "users": ("ROLE_ADMINISTRATOR", "ROLE_GUEST", "ROLE_MEMBER", "ROLE_MODERATOR", "ROLE_OWNER", "ROLES",
              "BOT_EMBEDDED", "BOT_GENERIC", "BOT_INCOMING_WEBHOOK", "BOT_OUTGOING_WEBHOOK", "EMAIL_VISIBLE_ADMINS", "EMAIL_VISIBLE_EVERYONE",
              "EMAIL_VISIBLE_MEMBERS", "EMAIL_VISIBLE_MODERATORS", "GroupGroupMembership", "UserGroup",
              "UserGroupMembership", "UserProfile"),
    "channels": ("RECIPIENT_DIRECT_MESSAGE_GROUP", "RECIPIENT_STREAM", "DirectMessageGroup", "DirectMessageGroupMember",
                 "Recipient", "Stream", "Subscription"),
    "messages": ("EMPTY_TOPIC_DISPLAY_NAME", "FLAG_BITS", "PENDING_UNREAD_INDEX", "TOPIC_FOLLOWED", "TOPIC_INHERIT",
                 "TOPIC_MUTED", "TOPIC_UNMUTED", "BotStorageData", "Message", "PendingUnreadMessage", "Reaction",
                 "SubMessage", "UserMessage", "UserTopic", "new_user_message_rows", "received_conditions",
                 "unread_conditions"),
    "org": ("ChannelFolder", "ClientDevice", "CustomProfileField", "CustomProfileFieldValue", "Linkifier",
            "NavigationView", "PushDevice", "UserPermission"),
    "customization": ("RealmEmoji", "RealmExport", "RealmPlayground"),
    "people": ("AlertWord", "MutedUser", "PushDeviceToken", "UserStatus"),
    "personal": ("DRAFT_TYPES", "Draft", "SavedSnippet"),
    "presence": ("UserPresence",),
    "uploads": ("Attachment", "AttachmentMessage"),
    "web": ("WebSession",),
    "invites": ("INVITE_ACTIVE", "INVITE_REVOKED", "INVITE_USED", "Invitation"),
    "bots": ("INTERFACE_GENERIC", "INTERFACE_SLACK", "BotService"),
    "scheduled": ("REMINDER", "SEND_LATER", "ScheduledMessage"),
    "channel_email": ("ChannelEmailAddress",),
}
_HOMES = {name: module for module, names in _LAZY.items() for name in names}
MODEL_MODULES = tuple(_LAZY)


def __getattr__(name):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # Importing `everything` while another thread imports it waits until it is complete.
    import_module(f"{__name__}.everything")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # found directly from now on
    return value


# What the package loads with itself, and then every name loaded on first use.
_CORE = ("MAX_DATABASE_INT", "BaseModel", "JSONField", "database", "in_ids", "now", "EDIT_HISTORY_POLICIES", "Realm",
         "instance_realm")
__all__ = [*_CORE, *_HOMES]
