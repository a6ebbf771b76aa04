// Settings > Notifications, the part beyond the basic switches: sounds and desktop notifications by kind of
// message, and each channel's own choice (null: the setting applies). Loaded with the settings.
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

// The settings panel's part: the switches, then each channel's own choice.
export function notificationSettings(root) {
  const checkbox = (label, checked, onChange) => {
    const input = h("input", { type: "checkbox", checked, on: { change: () => onChange(input.checked) } });
    return h("label.check", input, label);
  };
  const table = h("table.user-table.channel-notifications", { "aria-label": "Channel notifications" },
    h("thead", h("tr", h("th", { scope: "col" }, "Channel"), h("th", { scope: "col" }, "Desktop"), h("th", { scope: "col" }, "Sound"))));
  const body = h("tbody");
  const choice = (sub, property, fallbackName, kind) => {
    const value = sub[property];
    const select = h("select", { "aria-label": `${kind} for #${sub.name}`, on: { change: () => saveSubscription(sub.stream_id, property, select.value === "default" ? null : select.value === "on") } },
      h("option", { value: "default", selected: value === null || value === undefined }, `Default (${setting(fallbackName, false) ? "on" : "off"})`),
      h("option", { value: "on", selected: value === true }, "On"),
      h("option", { value: "off", selected: value === false }, "Off"));
    return select;
  };
  clear(body, model.sortedSubs().map((sub) => h("tr", h("td", `#${sub.name}`),
    h("td", choice(sub, "desktop_notifications", "enable_stream_desktop_notifications", "Desktop notifications")),
    h("td", choice(sub, "audible_notifications", "enable_stream_audible_notifications", "Sound")))));
  table.append(body);
  root.append(
    h("div.inline-form", SETTINGS.map(([name, label, fallback]) => checkbox(label, setting(name, fallback), (v) => saveSetting(name, v)))),
    h("h4", "Channels"),
    table,
    h("p.detail", "Follow a topic (from its view) for the followed-topic settings to apply to it."),
  );
}
