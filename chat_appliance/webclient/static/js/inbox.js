// The Inbox: every conversation with unread messages (outside muted topics) and its count.
import { model } from "./model.js";
import { viewHash } from "./narrow.js";
import { clear, h } from "./util.js";

export const kind = "inbox";
export const hash = () => "#inbox";
export const title = () => "Inbox";

let container = null;

export function show(view, { list }) {
  container = list;
  refresh();
}

export function close() {
  container = null;
}

export function refresh() {
  if (!container) return;
  const groups = new Map();
  for (const [key, conversation] of model.unreadTopics) {
    if (!conversation.dm && model.isTopicMuted(conversation.stream_id, conversation.topic)) continue;
    const n = model.unreadCount((k) => k === key);
    if (n) groups.set(key, { conversation, n });
  }
  const items = [...groups.values()].map(({ conversation, n }) => {
    const href = conversation.dm
      ? viewHash({ kind: "narrow", ops: [{ operator: "dm", operand: conversation.dm }] })
      : viewHash({ kind: "narrow", ops: [{ operator: "channel", operand: conversation.stream_id }, { operator: "topic", operand: conversation.topic }] });
    const label = conversation.dm ? conversation.dm.map((id) => model.userName(id)).join(", ") : `#${model.streamName(conversation.stream_id)} > ${conversation.topic}`;
    return h("li", h("a", { href }, h("span.name", label), h("span.unread-count", ` ${n}`)));
  });
  clear(container, items.length ? h("ul.inbox", items) : h("div.empty", "You have no unread messages."));
}
