// Conversation keys: a channel's topic (compared case-insensitively, as Zulip's) or a direct
// message conversation (its other people; yourself alone for notes to self).
import { me } from "./users.js";

export function conversationKey(conversation) {
  if (conversation.dm) return `d:${[...conversation.dm].sort((a, b) => a - b).join(",")}`;
  return `s:${conversation.stream_id}:${conversation.topic.toLowerCase()}`;
}

export function conversationOf(message) {
  if (message.type === "stream") return { stream_id: message.stream_id, topic: message.subject };
  const ids = message.display_recipient.map((r) => r.id).filter((id) => id !== me.id);
  return { dm: ids.length ? ids : [me.id] };
}
