// Unread messages by conversation, and the unread messages that mention the user.
import { conversationKey, conversationOf } from "./conversation.js";
import { me } from "./users.js";

export const unread = new Map(); // message id -> conversation key
export const unreadTopics = new Map(); // conversation key -> {stream_id, topic} or {dm: [ids]}
export const mentions = new Set(); // unread message ids that mention the user

export function setUnread(id, conversation) {
  const key = conversationKey(conversation);
  unread.set(id, key);
  if (!unreadTopics.has(key)) unreadTopics.set(key, conversation);
}

export function markRead(ids) {
  for (const id of ids) {
    unread.delete(id);
    mentions.delete(id);
  }
}

export function load(state) {
  unread.clear();
  unreadTopics.clear();
  mentions.clear();
  const u = state.unread_msgs;
  for (const group of u.streams) {
    for (const id of group.unread_message_ids) setUnread(id, { stream_id: group.stream_id, topic: group.topic });
  }
  for (const group of u.pms) {
    for (const id of group.unread_message_ids) setUnread(id, { dm: [group.other_user_id ?? group.sender_id] });
  }
  for (const group of u.huddles) {
    const ids = group.user_ids_string.split(",").map(Number).filter((id) => id !== me.id);
    for (const id of group.unread_message_ids) setUnread(id, { dm: ids });
  }
  for (const id of u.mentions) mentions.add(id);
}

// message: a new message is unread unless the user sent it or it came flagged read.
export function apply(event) {
  const message = event.message;
  const flags = event.flags || [];
  if (!flags.includes("read") && message.sender_id !== me.id) setUnread(message.id, conversationOf(message));
  if (!flags.includes("read") && flags.some((f) => /mentioned/.test(f))) mentions.add(message.id);
}

// update_message: moved messages stay unread in their new conversation.
export function applyUpdate(event) {
  if (event.subject === undefined && event.new_stream_id === undefined) return;
  for (const id of event.message_ids || []) {
    if (unread.has(id)) setUnread(id, { stream_id: event.new_stream_id ?? event.stream_id, topic: event.subject ?? event.orig_subject });
  }
}

export function applyDelete(event) {
  markRead(event.message_ids || [event.message_id]);
}

// update_message_flags: only "read" concerns unread counts; marking unread carries where each
// message lives (message_details).
export function applyFlags(event) {
  if (event.flag !== "read") return;
  if (event.op === "add") markRead(event.all ? [...unread.keys()] : event.messages);
  else {
    for (const id of event.messages) {
      const d = event.message_details?.[id];
      if (!d) continue;
      setUnread(id, d.type === "stream" ? { stream_id: d.stream_id, topic: d.topic } : { dm: d.user_ids?.length ? d.user_ids : [me.id] });
      if (d.mentioned) mentions.add(id);
    }
  }
}
