// Who is around: presence (active, idle) and who is typing where.
import { conversationKey, conversationOf } from "./conversation.js";
import { me } from "./users.js";

export const presence = new Map(); // user id -> {active_timestamp, idle_timestamp}
export const typing = new Map(); // conversation key -> Map(user id -> expiry)

export function load(state) {
  presence.clear();
  for (const [id, info] of Object.entries(state.presences || {})) presence.set(Number(id), info);
}

// What POST /users/me/presence answered: everyone's presence, slim.
export function noteAll(presences) {
  for (const [id, info] of Object.entries(presences || {})) presence.set(Number(id), info);
}

export function apply(event) {
  const previous = presence.get(event.user_id) || {};
  const stamp = event.server_timestamp;
  presence.set(event.user_id, { ...previous, active_timestamp: stamp, idle_timestamp: stamp });
}

// typing: someone started (for 15 seconds unless renewed) or stopped composing.
export function applyTyping(event) {
  const conversation = event.message_type === "stream"
    ? { stream_id: event.stream_id, topic: event.topic }
    : { dm: event.recipients.map((r) => r.user_id).filter((id) => id !== me.id) };
  const key = conversationKey(conversation.dm && !conversation.dm.length ? { dm: [me.id] } : conversation);
  if (!typing.has(key)) typing.set(key, new Map());
  if (event.op === "start") typing.get(key).set(event.sender.user_id, Date.now() + 15000);
  else typing.get(key).delete(event.sender.user_id);
}

// message: a message from someone ends their typing there.
export function applyMessage(event) {
  const message = event.message;
  typing.get(conversationKey(conversationOf(message)))?.delete(message.sender_id);
}

export function typingFor(key) {
  const now = Date.now();
  const entry = typing.get(key);
  if (!entry) return [];
  for (const [id, expiry] of entry) if (expiry < now) entry.delete(id);
  return [...entry.keys()];
}
