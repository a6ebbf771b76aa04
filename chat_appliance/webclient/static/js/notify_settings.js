// Settings > Notifications, the part beyond the basic switches: sounds and desktop notifications by kind of
// message, and each channel's desktop, audible, mobile and email notifications. Loaded with the settings.
import * as api from "./api.js";
import { model } from "./model.js";
import { clear, h, toast } from "./util.js";

const setting = (name, fallback = true) => model.state.user_settings?.[name] ?? model.state[name] ?? fallback;

async function saveSetting(name, value) {
  try {
    await api.patch("settings", { [name]: value });
    (model.state.user_settings ||= {})[name] = value;
  } catch (error) {
    toast(error.message, "error");
  }
}

async function saveSubscription(streamId, property, value) {
  try {
    await api.post("users/me/subscriptions/properties", { subscription_data: [{ stream_id: streamId, property, value }] });
    const sub = model.subs.get(streamId);
    if (sub) sub[property] = value;
  } catch (error) {
    toast(error.message, "error");
  }
}

const SETTINGS = [
  ["enable_sounds", "Play a sound for direct messages and mentions", true],
  ["enable_desktop_notifications", "Desktop notifications for direct messages and mentions", true],
  ["enable_stream_audible_notifications", "Play a sound for channel messages", false],
  ["enable_stream_desktop_notifications", "Desktop notifications for channel messages", false],
  ["enable_followed_topic_audible_notifications", "Play a sound for followed topics", true],
  ["enable_followed_topic_desktop_notifications", "Desktop notifications for followed topics", true],
];

// A channel's notification kinds: its subscription property, the personal default it falls back
// to, the column heading, and the word its checkboxes are named with.
const CHANNEL_KINDS = [
  ["desktop_notifications", "enable_stream_desktop_notifications", "Desktop", "Desktop"],
  ["audible_notifications", "enable_stream_audible_notifications", "Audible", "Audible"],
  ["push_notifications", "enable_stream_push_notifications", "Mobile", "Mobile"],
  ["email_notifications", "enable_stream_email_notifications", "Email", "Email"],
];

// The settings panel's part: the switches, then each channel's own choice.
export function notificationSettings(root) {
  const checkbox = (label, checked, onChange) => {
    const input = h("input", { type: "checkbox", checked, on: { change: () => onChange(input.checked) } });
    return h("label.check", input, label);
  };
  // Each channel's four notifications, as Zulip's settings_notifications table: ticked by the
  // effective value (the subscription's own, else the personal default for channels); a click
  // saves that one property of that one channel.
  const table = h("table.user-table.channel-notifications", { "aria-label": "Channel notifications" },
    h("thead", h("tr", h("th", { scope: "col" }, "Channel"), CHANNEL_KINDS.map(([, , heading]) => h("th", { scope: "col" }, heading)))));
  const body = h("tbody");
  const cell = (sub, [property, fallbackName, , kind]) => {
    const input = h("input", {
      type: "checkbox", "aria-label": `${kind} notifications for #${sub.name}`,
      checked: sub[property] ?? setting(fallbackName, false),
      on: { change: () => saveSubscription(sub.stream_id, property, input.checked) },
    });
    return h("td", input);
  };
  clear(body, model.sortedSubs().map((sub) => h("tr", h("th", { scope: "row" }, `#${sub.name}`), CHANNEL_KINDS.map((k) => cell(sub, k)))));
  table.append(body);
  root.append(
    h("div.inline-form", SETTINGS.map(([name, label, fallback]) => checkbox(label, setting(name, fallback), (v) => saveSetting(name, v)))),
    h("h4", "Channels"),
    table,
    h("p.detail", "Follow a topic (from its view) for the followed-topic settings to apply to it."),
  );
}
