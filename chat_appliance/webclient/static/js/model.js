// What the page knows, as one object for the views: the stores (stores/*.js) own the facts and
// apply the events to them; this facade hands their maps out and answers the questions several
// views ask (names, muting, unread counts). Changes reach the views through on(): the
// dispatcher (dispatch.js) emits one per event, named by its type, after its store applied it.
import * as channels from "./stores/channels.js";
import { conversationKey, conversationOf } from "./stores/conversation.js";
import * as drafts from "./stores/drafts.js";
import * as presence from "./stores/presence.js";
import * as realm from "./stores/realm.js";
import * as scheduled from "./stores/scheduled.js";
import * as topics from "./stores/topics.js";
import * as unread from "./stores/unread.js";
import * as users from "./stores/users.js";

const STORES = [users, channels, unread, topics, drafts, presence, scheduled, realm];
const listeners = new Map();

export const model = {
  get myId() {
    return users.me.id;
  },
  get state() {
    return realm.realm.state;
  },
  users: users.users,
  statuses: users.statuses, // user id -> {status_text, emoji_name, emoji_code}
  streams: channels.streams, // every channel the user can see
  subs: channels.subs, // subscribed channels by id
  unread: unread.unread, // message id -> conversation key
  unreadTopics: unread.unreadTopics, // conversation key -> {stream_id, topic} or {dm: [ids]}
  mentions: unread.mentions,
  drafts: drafts.drafts,
  scheduled: scheduled.scheduled, // scheduled message id -> scheduled message
  presence: presence.presence,
  typing: presence.typing, // conversation key -> Map(user id -> expiry)
  mutedTopics: topics.mutedTopics, // "stream id:lowercased topic" with visibility policy 1 (muted)
  topicPolicy: topics.topicPolicy, // "stream id:lowercased topic" -> Zulip's visibility policy

  load(state) {
    for (const store of STORES) store.load(state);
    this.emit("all");
  },

  on(name, fn) {
    if (!listeners.has(name)) listeners.set(name, []);
    listeners.get(name).push(fn);
  },
  emit(name, ...args) {
    for (const fn of listeners.get(name) || []) fn(...args);
  },

  me() {
    return this.users.get(this.myId);
  },
  isAdmin() {
    const me = this.me();
    return me && (me.is_admin || me.is_owner || me.role <= 200);
  },
  userName(id) {
    const user = this.users.get(Number(id));
    return user ? user.full_name : `Unknown user ${id}`;
  },
  userEmail(id) {
    const user = this.users.get(Number(id));
    return user ? user.email : String(id);
  },
  userByEmail(email) {
    const lowered = email.toLowerCase();
    for (const user of this.users.values()) if (user.email.toLowerCase() === lowered) return user;
    return null;
  },
  userByEmailOrName(text) {
    const lowered = text.toLowerCase();
    return this.userByEmail(text) || [...this.users.values()].find((u) => u.full_name.toLowerCase() === lowered) || null;
  },
  streamName(id) {
    const stream = this.streams.get(Number(id));
    return stream ? stream.name : `unknown channel ${id}`;
  },
  streamByName(name) {
    const lowered = String(name).toLowerCase();
    for (const stream of this.streams.values()) if (stream.name.toLowerCase() === lowered) return stream;
    return null;
  },
  // Pinned channels first (Zulip's "pin to top"), then the rest; each group by name.
  sortedSubs() {
    return [...this.subs.values()].sort((a, b) => !!b.pin_to_top - !!a.pin_to_top || a.name.localeCompare(b.name));
  },

  conversationKey,
  conversationOf,
  setTopicPolicy: topics.setPolicy,
  policyOf(streamId, topic) {
    return this.topicPolicy.get(`${streamId}:${String(topic).toLowerCase()}`) || 0;
  },
  // As Zulip: a muted topic is muted; in a muted channel, every topic not unmuted or followed.
  isTopicMuted(streamId, topic) {
    const policy = this.policyOf(streamId, topic);
    if (policy === 1) return true;
    if (policy === 2 || policy === 3) return false;
    return Boolean(this.subs.get(Number(streamId))?.is_muted);
  },
  // A muted person (Settings > Muted users): their messages are hidden until shown, and never notify.
  isMutedUser(id) {
    return (this.state?.muted_users || []).some((entry) => entry.id === Number(id));
  },
  isMutedMessage(message) {
    if (message.type !== "stream") return false;
    return this.isTopicMuted(message.stream_id, message.subject);
  },

  setUnread: unread.setUnread,
  // Messages read here (seen in the feed): counted read at once, before the server's event.
  markRead(ids) {
    unread.markRead(ids);
    this.emit("unread");
  },
  unreadCount(filter) {
    let count = 0;
    for (const key of this.unread.values()) if (!filter || filter(key)) count += 1;
    return count;
  },
  // Unread messages of a channel outside its muted topics (as Zulip counts them).
  unreadInStream(streamId) {
    const prefix = `s:${streamId}:`;
    return this.unreadCount((key) => key.startsWith(prefix) && !this.isTopicMuted(streamId, key.slice(prefix.length)));
  },
  unreadInTopic(streamId, topic) {
    const wanted = `s:${streamId}:${topic.toLowerCase()}`;
    return this.unreadCount((key) => key === wanted);
  },
  totalUnread() {
    let count = 0;
    for (const key of this.unread.values()) {
      if (key.startsWith("d:")) count += 1;
      else {
        const [, streamId] = key.split(":", 2);
        const topic = key.slice(3 + streamId.length);
        if (this.subs.has(Number(streamId)) && !this.isTopicMuted(streamId, topic)) count += 1;
      }
    }
    return count;
  },

  typingFor: presence.typingFor,
};
