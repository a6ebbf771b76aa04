// A topic's actions, as Zulip's topic popover offers them: mark the topic resolved (its name
// gains the "✔ " prefix, on every message) or unresolved, and move the whole topic to another
// channel or name. The page follows a topic that moves while it is shown (view and compose).
import * as api from "./api.js";
import { openDialog } from "./dialog.js";
import { model } from "./model.js";
import { closePopupMenu, showPopupMenu } from "./popup_menu.js";
import { apiNarrow, channelView, opOf, parseHash, viewHash } from "./narrow.js";
import { h, toast } from "./util.js";

// Zulip's resolved-topic prefix: U+2714 HEAVY CHECK MARK and a space.
export const RESOLVED_PREFIX = "\u2714 ";
export const isResolved = (topic) => topic.startsWith(RESOLVED_PREFIX);
export const resolvedName = (topic) => RESOLVED_PREFIX + topic;
export const unresolvedName = (topic) => topic.replace(/^(\u2714\s*)+/, "");

// The newest message of a topic: the one whose edit moves (propagate_mode=change_all) the topic.
async function newestMessageId(streamId, topic) {
  const { messages } = await api.get("messages", {
    anchor: "newest", num_before: 1, num_after: 0, apply_markdown: false,
    narrow: apiNarrow(channelView(streamId, topic)),
  });
  if (!messages.length) throw new Error("This topic has no messages.");
  return messages[messages.length - 1].id;
}

export async function moveTopic(streamId, topic, { newStreamId = streamId, newTopic = topic, messageId = null } = {}) {
  const params = { propagate_mode: "change_all" };
  if (newTopic !== topic) params.topic = newTopic;
  if (newStreamId !== streamId) params.stream_id = newStreamId;
  if (Object.keys(params).length === 1) return true;
  try {
    await api.patch(`messages/${messageId ?? (await newestMessageId(streamId, topic))}`, params);
    return true;
  } catch (error) {
    toast(error.message, "error");
    return false;
  }
}

export const toggleResolved = (streamId, topic) =>
  moveTopic(streamId, topic, { newTopic: isResolved(topic) ? unresolvedName(topic) : resolvedName(topic) });

// The "Move topic" dialog: the new channel, the new name (filled in), Confirm.
export function openMoveTopic(streamId, topic, messageId = null) {
  openDialog("Move topic", (dialog) => {
    const channel = h("select", { "aria-label": "New channel" },
      model.sortedSubs().map((sub) => h("option", { value: String(sub.stream_id), selected: sub.stream_id === streamId }, `#${sub.name}`)));
    const name = h("input", { type: "text", "aria-label": "New topic", value: topic, maxlength: "60" });
    const form = h("form.move-topic", {
      on: {
        submit: async (event) => {
          event.preventDefault();
          const moved = await moveTopic(streamId, topic, { newStreamId: Number(channel.value), newTopic: name.value.trim(), messageId });
          if (moved) dialog.close();
        },
      },
    },
    h("label.field", h("span", "New channel"), channel),
    h("label.field", h("span", "New topic"), name),
    h("div.row", h("button.primary", { type: "submit" }, "Confirm"), h("button", { type: "button", on: { click: () => dialog.close() } }, "Cancel")));
    setTimeout(() => name.focus(), 0);
    return form;
  }, { className: "move-topic-dialog" });
}

const MENU = "topic-menu";

function openMenu(anchor, streamId, topic) {
  const item = (label, fn) => [label, () => { closePopupMenu(MENU); fn(); }];
  showPopupMenu(MENU, "Topic actions", anchor, [
    item(isResolved(topic) ? "Mark as unresolved" : "Mark as resolved", () => toggleResolved(streamId, topic)),
    item("Move topic", () => openMoveTopic(streamId, topic)),
  ], ".topic-actions");
}

// The topic view's button: "Topic actions: NAME".
export function topicActionsButton(streamId, topic) {
  return h("button.icon-text.view-action.topic-actions", {
    type: "button", "aria-haspopup": "menu", "aria-label": `Topic actions: ${topic}`,
    on: { click: (event) => openMenu(event.currentTarget, streamId, topic) },
  }, "Topic actions \u25be");
}

// A topic moved with all its messages (resolved, renamed, to another channel) while its view is
// shown: the view follows it to its new place, as Zulip's does.
export function followMovedTopic(event) {
  if (event.propagate_mode !== "change_all" || (event.subject === undefined && event.new_stream_id === undefined)) return;
  const shown = parseShown();
  if (!shown) return;
  if (shown.streamId !== event.stream_id || shown.topic.toLowerCase() !== String(event.orig_subject).toLowerCase()) return;
  location.hash = viewHash(channelView(event.new_stream_id ?? event.stream_id, event.subject ?? event.orig_subject));
}

function parseShown() {
  const view = parseHash(location.hash);
  if (!view || view.kind !== "narrow") return null;
  const channel = opOf(view, "channel");
  const topic = opOf(view, "topic");
  if (!channel || !topic || view.ops.length !== 2) return null;
  return { streamId: channel.operand, topic: topic.operand };
}
