// The buttons beside a view's title: mark as read (all, a channel, a topic), mute or follow a
// topic, mute a channel, a topic's actions (topic_actions.js). Each calls Zulip's API; the events that follow update the page.
import * as api from "./api.js";
import { model } from "./model.js";
import { opOf } from "./narrow.js";
import { topicActionsButton } from "./topic_actions.js";
import { clear, h, toast } from "./util.js";

// The buttons' requests reach the server in the order they were clicked: each waits for the one
// before. Sent at once, two quick clicks (Unmute topic, then Follow topic) raced, and when the
// first landed last it undid the second.
let previous = Promise.resolve();

const call = (fn) => () => {
  previous = previous.then(async () => {
    try {
      await fn();
    } catch (error) {
      toast(error.message, "error");
    }
  });
  return previous;
};

export const markAllAsRead = call(() => api.post("mark_all_as_read"));
export const markChannelAsRead = (streamId) => call(() => api.post("mark_stream_as_read", { stream_id: streamId }))();
export const markTopicAsRead = (streamId, topic) => call(() => api.post("mark_topic_as_read", { stream_id: streamId, topic_name: topic }))();
export const setTopicPolicy = (streamId, topic, policy) =>
  call(() => api.post("user_topics", { stream_id: streamId, topic, visibility_policy: policy }))();
export const setChannelMuted = (streamId, muted) =>
  call(() => api.post("users/me/subscriptions/properties", { subscription_data: [{ stream_id: streamId, property: "is_muted", value: muted }] }))();

export function renderViewActions(container, view) {
  const button = (label, fn, pressed) =>
    h("button.icon-text.view-action", { type: "button", "aria-pressed": pressed === undefined ? null : String(pressed), on: { click: fn } }, label);
  const buttons = [];
  const channel = opOf(view, "channel");
  const topic = opOf(view, "topic");
  if (view.kind === "inbox" || view.kind === "recent" || view.kind === "feed") {
    buttons.push(button("Mark all as read", markAllAsRead));
  } else if (channel && model.subs.has(channel.operand)) {
    const streamId = channel.operand;
    if (topic) {
      const policy = model.policyOf(streamId, topic.operand);
      const muted = model.isTopicMuted(streamId, topic.operand);
      buttons.push(topicActionsButton(streamId, topic.operand));
      buttons.push(button("Mark topic as read", () => markTopicAsRead(streamId, topic.operand)));
      buttons.push(button(muted ? "Unmute topic" : "Mute topic", () => setTopicPolicy(streamId, topic.operand, muted ? (model.subs.get(streamId)?.is_muted ? 2 : 0) : 1)));
      buttons.push(button(policy === 3 ? "Unfollow topic" : "Follow topic", () => setTopicPolicy(streamId, topic.operand, policy === 3 ? 0 : 3)));
    } else {
      const muted = Boolean(model.subs.get(streamId)?.is_muted);
      buttons.push(button("Mark channel as read", () => markChannelAsRead(streamId)));
      buttons.push(button(muted ? "Unmute channel" : "Mute channel", () => setChannelMuted(streamId, !muted)));
    }
  }
  clear(container, buttons);
}
