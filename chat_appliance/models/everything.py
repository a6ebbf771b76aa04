"""Every model module beyond the base and the organization, and the one declaration of the names
chat_appliance.models gives from them: the package imports this module on the first use of one
of these names (its __getattr__), and mypy reads these same imports (its TYPE_CHECKING star
import), so a model is added here and nowhere else. The modules come in an order in which each
one's imports come before it.

They load together so that a model's backrefs (`realm.streams`, `user.subscriptions`) exist once
any model is in use. Python makes another thread that imports this module meanwhile wait until
it is complete."""

from chat_appliance.models.users import (ROLE_ADMINISTRATOR, ROLE_GUEST, ROLE_MEMBER, ROLE_MODERATOR, ROLE_OWNER,
                                         ROLES, BOT_EMBEDDED, BOT_GENERIC, BOT_INCOMING_WEBHOOK, BOT_OUTGOING_WEBHOOK,
                                         EMAIL_VISIBLE_ADMINS, EMAIL_VISIBLE_EVERYONE, EMAIL_VISIBLE_MEMBERS,
                                         EMAIL_VISIBLE_MODERATORS, GroupGroupMembership, UserGroup,
                                         UserGroupMembership, UserProfile)
from chat_appliance.models.channels import (RECIPIENT_DIRECT_MESSAGE_GROUP, RECIPIENT_STREAM, DirectMessageGroup,
                                            DirectMessageGroupMember, Recipient, Stream, Subscription)
from chat_appliance.models.messages import (CONVERSATION_INDEX, EMPTY_TOPIC_DISPLAY_NAME, FLAG_BITS,
                                            PENDING_UNREAD_INDEX, TOPIC_FOLLOWED, TOPIC_INHERIT, TOPIC_MUTED, TOPIC_UNMUTED,
                                            BotStorageData, Message, PendingUnreadMessage, Reaction, SubMessage,
                                            UserMessage, UserTopic, new_user_message_rows, received_condition_sql,
                                            received_conditions, unread_condition_sql, unread_conditions)
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
from chat_appliance.models.outgoing_email import OutgoingEmail

# The names above, in order: what chat_appliance.models gives beyond its core. (Only
# identifiers: pytest's assertion rewriting, which covers this package as a plugin's, adds
# globals such as "@py_builtins".)
NAMES = tuple(name for name in dict(globals()) if name.isidentifier() and not name.startswith("_"))
