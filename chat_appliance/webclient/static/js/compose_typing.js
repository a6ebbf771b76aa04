// Typing notifications: sent while you type, shown for others typing in the conversation.
import * as api from "./api.js";
import { model } from "./model.js";
import { C } from "./compose_state.js";
import { conversationKey } from "./compose_drafts.js";

// --- typing notifications ---------------------------------------------------------------------

export function typingParams(op) {
  if (C.target.type === "stream") return { type: "stream", op, stream_id: C.target.stream_id, topic: C.els.topic.value };
  return C.target.to.length ? { type: "direct", op, to: C.target.to } : null;
}

export function typing() {
  if (!C.target || !C.els.textarea.value.trim()) return stopTyping();
  const wait = model.state.server_typing_started_wait_period_milliseconds || 10000;
  const key = conversationKey(C.target);
  if (Date.now() - C.lastTypingStart > wait || C.typingKey !== key) {
    const params = typingParams("start");
    if (params) {
      C.lastTypingStart = Date.now();
      C.typingKey = key;
      api.post("typing", params).catch(() => {});
    }
  }
  clearTimeout(C.typingStopTimer);
  C.typingStopTimer = setTimeout(stopTyping, model.state.server_typing_stopped_wait_period_milliseconds || 5000);
}

export function stopTyping() {
  clearTimeout(C.typingStopTimer);
  if (!C.typingKey || !C.target) return;
  const params = typingParams("stop");
  C.typingKey = null;
  C.lastTypingStart = 0;
  if (params) api.post("typing", params).catch(() => {});
}

// Show who is typing in the conversation the compose box is aimed at.
export function showTyping() {
  if (!C.target || !C.els.typing) return;
  const key = C.target.type === "stream"
    ? model.conversationKey({ stream_id: C.target.stream_id, topic: C.els.topic.value })
    : model.conversationKey({ dm: C.target.to.length ? C.target.to : [model.myId] });
  const ids = model.typingFor(key).filter((id) => id !== model.myId);
  const names = ids.map((id) => model.userName(id));
  C.els.typing.textContent = names.length === 0 ? "" : names.length === 1 ? `${names[0]} is typing\u2026` : `${names.join(", ")} are typing\u2026`;
}
