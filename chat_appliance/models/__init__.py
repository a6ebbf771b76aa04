"""Peewee models, split by domain. Import them from here."""

from .base import MAX_DATABASE_INT, BaseModel, JSONField, database, in_ids, now
from .bots import INTERFACE_GENERIC, INTERFACE_SLACK, BotService
from .channels import (
    RECIPIENT_DIRECT_MESSAGE_GROUP,
    RECIPIENT_STREAM,
    DirectMessageGroup,
    DirectMessageGroupMember,
    Recipient,
    Stream,
    Subscription,
)
from .invites import Invitation
from .messages import FLAG_BITS, BotStorageData, Message, Reaction, UserMessage, UserTopic
from .org import (
    ChannelFolder,
    CustomProfileField,
    CustomProfileFieldValue,
    Linkifier,
    NavigationView,
    PushDevice,
    UserPermission,
)
from .customization import RealmEmoji, RealmExport, RealmPlayground
from .people import AlertWord, MutedUser, PushDeviceToken, UserStatus
from .personal import DRAFT_TYPES, Draft, SavedSnippet
from .realm import EDIT_HISTORY_POLICIES, Realm
from .uploads import Attachment, UserPresence
from .users import (
    ROLE_ADMINISTRATOR,
    ROLE_GUEST,
    ROLE_MEMBER,
    ROLE_MODERATOR,
    ROLE_OWNER,
    ROLES,
    GroupGroupMembership,
    UserGroup,
    UserGroupMembership,
    UserProfile,
)
from .web import WebSession

__all__ = [
    "MAX_DATABASE_INT", "BaseModel", "JSONField", "database", "in_ids", "now",
    "RECIPIENT_DIRECT_MESSAGE_GROUP", "RECIPIENT_STREAM", "DirectMessageGroup",
    "DirectMessageGroupMember", "Recipient", "Stream", "Subscription",
    "FLAG_BITS", "BotStorageData", "Message", "Reaction", "UserMessage", "UserTopic",
    "EDIT_HISTORY_POLICIES", "Realm",
    "ROLE_ADMINISTRATOR", "ROLE_GUEST", "ROLE_MEMBER", "ROLE_MODERATOR", "ROLE_OWNER", "ROLES",
    "GroupGroupMembership", "UserGroup", "UserGroupMembership", "UserProfile",
    "ChannelFolder", "CustomProfileField", "CustomProfileFieldValue", "Linkifier", "NavigationView",
    "PushDevice", "UserPermission",
    "DRAFT_TYPES", "Draft", "SavedSnippet",
    "Attachment", "UserPresence",
    "WebSession",
    "Invitation",
    "RealmEmoji", "RealmExport", "RealmPlayground", "AlertWord", "MutedUser", "PushDeviceToken", "UserStatus",
    "INTERFACE_GENERIC", "INTERFACE_SLACK", "BotService",
]
