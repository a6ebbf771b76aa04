// The one place events are told apart by type. Each event goes to the store that owns its facts
// (stores/*.js), then the views hear of it: model.emit(type, event), which they subscribe to
// with model.on(type, fn). Types the client has no use for are named in IGNORED; any other
// unknown type is logged (a server newer than this page, or a type forgotten here).
// tests/test_webclient_structure.py compares these lists with the server's event catalogue.
import { model } from "./model.js";
import * as channels from "./stores/channels.js";
import * as drafts from "./stores/drafts.js";
import * as presence from "./stores/presence.js";
import * as realm from "./stores/realm.js";
import * as scheduled from "./stores/scheduled.js";
import * as topics from "./stores/topics.js";
import * as unread from "./stores/unread.js";
import * as users from "./stores/users.js";

const none = () => {};

// Event type -> the store function (or functions) that apply it. `none`: the facts live in what a view holds
// (the feed's messages) or are fetched again when shown (invitations): the views apply it.
const STORES = {
  message: [unread.apply, presence.applyMessage],
  update_message: unread.applyUpdate,
  delete_message: unread.applyDelete,
  update_message_flags: unread.applyFlags,
  reaction: none,
  submessage: none,
  typing: presence.applyTyping,
  presence: presence.apply,
  stream: channels.apply,
  subscription: channels.applySubscription,
  realm_user: users.apply,
  user_status: users.applyStatus,
  user_topic: topics.apply,
  drafts: drafts.apply,
  realm: realm.apply,
  user_settings: realm.applyUserSettings,
  realm_bot: realm.applyBot,
  user_group: realm.applyGroup,
  realm_emoji: realm.applyEmoji,
  realm_linkifiers: realm.applyLinkifiers,
  realm_playgrounds: realm.applyPlaygrounds,
  custom_profile_fields: realm.applyProfileFields,
  default_streams: realm.applyDefaultStreams,
  muted_users: realm.applyMutedUsers,
  alert_words: realm.applyAlertWords,
  invites_changed: none,
  scheduled_messages: scheduled.apply,
};

// Types this client does not show (yet): received, and dropped without a word.
const IGNORED = new Set([
  "heartbeat",
  "typing_edit_message",
  "channel_folder",
  "saved_snippets",
  "reminders",
  "navigation_view",
  "device",
  "realm_user_settings_defaults",
  "realm_export",
  "realm_export_consent",
]);

export function dispatch(event) {
  const apply = Object.hasOwn(STORES, event.type) ? STORES[event.type] : null;
  if (!apply) {
    if (!IGNORED.has(event.type)) console.info("event type not handled", event.type, event);
    return;
  }
  for (const fn of [apply].flat()) fn(event);
  model.emit(event.type, event);
}
