// What the page knows: the /register state, kept current by events.

const listeners = new Map();

export const model = {
  myId: null,
  state: null,
  users: new Map(),
  streams: new Map(), // every channel the user can see
  subs: new Map(), // subscribed channels by id
  unread: new Map(), // message id -> conversation key
  unreadTopics: new Map(), // conversation key -> {stream_id, topic} or {dm: [ids]}
  drafts: new Map(),
  presence: new Map(),
  mutedTopics: new Set(), // "stream id:lowercased topic" with visibility policy 1 (muted)
  topicPolicy: new Map(), // "stream id:lowercased topic" -> Zulip's visibility policy (1 muted, 2 unmuted, 3 followed)
  statuses: new Map(), // user id -> {status_text, emoji_name, emoji_code}
  typing: new Map(), // conversation key -> Map(user id -> expiry)

  load(state) {
    this.state = state;
    this.myId = state.user_id;
    this.users.clear();
    for (const user of [...state.realm_users, ...(state.realm_non_active_users || []), ...(state.cross_realm_bots || [])]) {
      this.users.set(user.user_id, user);
    }
    this.streams.clear();
    this.subs.clear();
    for (const stream of [...(state.streams || []), ...(state.never_subscribed || []), ...(state.unsubscribed || [])]) {
      this.streams.set(stream.stream_id, stream);
    }
    for (const sub of state.subscriptions) {
      this.subs.set(sub.stream_id, sub);
      this.streams.set(sub.stream_id, { ...this.streams.get(sub.stream_id), ...sub });
    }
    this.unread.clear();
    this.unreadTopics.clear();
    const u = state.unread_msgs;
    for (const group of u.streams) {
      for (const id of group.unread_message_ids) this.setUnread(id, { stream_id: group.stream_id, topic: group.topic });
    }
    for (const group of u.pms) {
      for (const id of group.unread_message_ids) this.setUnread(id, { dm: [group.other_user_id ?? group.sender_id] });
    }
    for (const group of u.huddles) {
      const ids = group.user_ids_string.split(",").map(Number).filter((id) => id !== this.myId);
      for (const id of group.unread_message_ids) this.setUnread(id, { dm: ids });
    }
    this.mentions = new Set(u.mentions);
    this.drafts.clear();
    for (const draft of state.drafts || []) this.drafts.set(draft.id, draft);
    this.presence.clear();
    for (const [id, info] of Object.entries(state.presences || {})) this.presence.set(Number(id), info);
    this.mutedTopics.clear();
    this.topicPolicy.clear();
    for (const t of state.user_topics || []) this.setTopicPolicy(t.stream_id, t.topic_name, t.visibility_policy);
    this.statuses.clear();
    for (const [id, status] of Object.entries(state.user_status || {})) this.statuses.set(Number(id), status);
    this.emit("all");
  },

  on(name, fn) {
    if (!listeners.has(name)) listeners.set(name, []);
    listeners.get(name).push(fn);
  },
  emit(name, ...args) {
    for (const fn of listeners.get(name) || []) fn(...args);
    if (name !== "all" && name !== "any") for (const fn of listeners.get("any") || []) fn(name, ...args);
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

  // Conversation keys: channel topics compare case-insensitively, as Zulip's do.
  conversationKey(conversation) {
    if (conversation.dm) return `d:${[...conversation.dm].sort((a, b) => a - b).join(",")}`;
    return `s:${conversation.stream_id}:${conversation.topic.toLowerCase()}`;
  },
  conversationOf(message) {
    if (message.type === "stream") return { stream_id: message.stream_id, topic: message.subject };
    const ids = message.display_recipient.map((r) => r.id).filter((id) => id !== this.myId);
    return { dm: ids.length ? ids : [this.myId] };
  },
  setTopicPolicy(streamId, topic, policy) {
    const key = `${streamId}:${topic.toLowerCase()}`;
    if (policy) this.topicPolicy.set(key, policy);
    else this.topicPolicy.delete(key);
    if (policy === 1) this.mutedTopics.add(key);
    else this.mutedTopics.delete(key);
  },
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
  isMutedMessage(message) {
    if (message.type !== "stream") return false;
    return this.isTopicMuted(message.stream_id, message.subject);
  },

  setUnread(id, conversation) {
    const key = this.conversationKey(conversation);
    this.unread.set(id, key);
    if (!this.unreadTopics.has(key)) this.unreadTopics.set(key, conversation);
  },
  markRead(ids) {
    let changed = false;
    for (const id of ids) changed = this.unread.delete(id) || changed;
    if (changed) this.emit("unread");
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

  typingFor(key) {
    const now = Date.now();
    const entry = this.typing.get(key);
    if (!entry) return [];
    for (const [id, expiry] of entry) if (expiry < now) entry.delete(id);
    return [...entry.keys()];
  },
};
