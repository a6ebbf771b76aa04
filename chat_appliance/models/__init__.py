"""Peewee models, split by domain. Import them from here."""

from chat_appliance.models.base import MAX_DATABASE_INT, BaseModel, JSONField, database, in_ids, now
from chat_appliance.models.bots import INTERFACE_GENERIC, INTERFACE_SLACK, BotService
from chat_appliance.models.channels import (
    RECIPIENT_DIRECT_MESSAGE_GROUP,
    RECIPIENT_STREAM,
    DirectMessageGroup,
    DirectMessageGroupMember,
    Recipient,
    Stream,
    Subscription,
)
from chat_appliance.models.invites import Invitation
from chat_appliance.models.messages import (
    FLAG_BITS,
    PENDING_UNREAD_INDEX,
    BotStorageData,
    Message,
    PendingUnreadMessage,
    Reaction,
    SubMessage,
    UserMessage,
    UserTopic,
    new_user_message_rows,
    unread_conditions,
)
from chat_appliance.models.org import (
    ChannelFolder,
    ClientDevice,
    CustomProfileField,
    CustomProfileFieldValue,
    Linkifier,
    NavigationView,
    PushDevice,
    UserPermission,
)
from chat_appliance.models.customization import RealmEmoji, RealmExport, RealmPlayground
from chat_appliance.models.people import AlertWord, MutedUser, PushDeviceToken, UserStatus
from chat_appliance.models.personal import DRAFT_TYPES, Draft, SavedSnippet
from chat_appliance.models.realm import EDIT_HISTORY_POLICIES, Realm
from chat_appliance.models.presence import UserPresence
from chat_appliance.models.uploads import Attachment, AttachmentMessage
from chat_appliance.models.users import (
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
from chat_appliance.models.web import WebSession

__all__ = [
    "MAX_DATABASE_INT", "BaseModel", "JSONField", "database", "in_ids", "now",
    "RECIPIENT_DIRECT_MESSAGE_GROUP", "RECIPIENT_STREAM", "DirectMessageGroup",
    "DirectMessageGroupMember", "Recipient", "Stream", "Subscription",
    "FLAG_BITS", "PENDING_UNREAD_INDEX", "BotStorageData", "Message", "PendingUnreadMessage", "Reaction",
    "SubMessage", "UserMessage", "UserTopic", "new_user_message_rows", "unread_conditions",
    "EDIT_HISTORY_POLICIES", "Realm",
    "ROLE_ADMINISTRATOR", "ROLE_GUEST", "ROLE_MEMBER", "ROLE_MODERATOR", "ROLE_OWNER", "ROLES",
    "GroupGroupMembership", "UserGroup", "UserGroupMembership", "UserProfile",
    "ChannelFolder", "ClientDevice", "CustomProfileField", "CustomProfileFieldValue", "Linkifier", "NavigationView",
    "PushDevice", "UserPermission",
    "DRAFT_TYPES", "Draft", "SavedSnippet",
    "Attachment", "AttachmentMessage",
    "UserPresence",
    "WebSession",
    "Invitation",
    "RealmEmoji", "RealmExport", "RealmPlayground", "AlertWord", "MutedUser", "PushDeviceToken", "UserStatus",
    "INTERFACE_GENERIC", "INTERFACE_SLACK", "BotService",
]
