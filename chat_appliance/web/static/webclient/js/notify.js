// Notifications as Zulip decides them: the user's settings (desktop notifications and sounds for
// direct messages and mentions, for channels, for followed topics), overridden per channel by the
// subscription's desktop_notifications / audible_notifications (null: follow the setting); muted
// topics never notify unless mentioned. The sound is a short tone made with Web Audio.
import * as api from "./api.js";
import { model } from "./model.js";
import { clear, h, toast } from "./util.js";

const setting = (name, fallback = true) => model.state.user_settings?.[name] ?? model.state[name] ?? fallback;

// {desktop, sound}: what a new message should raise.
export function notificationsFor(message) {
  const none = { desktop: false, sound: false };
  if (message.sender_id === model.myId) return none;
  const flags = message.flags || [];
  const mentioned = flags.some((f) => /mentioned/.test(f));
  if (message.type === "private" || mentioned) {
    if (!mentioned || message.type === "private") {
      return { desktop: setting("enable_desktop_notifications"), sound: setting("enable_sounds") };
    }
    const muted = model.isMutedMessage(message);
    if (muted && !flags.includes("mentioned")) return none;
    return { desktop: setting("enable_desktop_notifications"), sound: setting("enable_sounds") };
  }
  if (model.isMutedMessage(message)) return none;
  const sub = model.subs.get(message.stream_id);
  const followed = model.policyOf(message.stream_id, message.subject) === 3;
  const desktop = sub?.desktop_notifications ?? (setting("enable_stream_desktop_notifications", false) || (followed && setting("enable_followed_topic_desktop_notifications")));
  const sound = sub?.audible_notifications ?? (setting("enable_stream_audible_notifications", false) || (followed && setting("enable_followed_topic_audible_notifications")));
  return { desktop: Boolean(desktop), sound: Boolean(sound) };
}

let audio = null;
export function playSound() {
  try {
    audio ||= new AudioContext();
    const tone = audio.createOscillator();
    const gain = audio.createGain();
    tone.frequency.value = 880;
    gain.gain.setValueAtTime(0.15, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.25);
    tone.connect(gain).connect(audio.destination);
    tone.start();
    tone.stop(audio.currentTime + 0.25);
    window.__soundsPlayed = (window.__soundsPlayed || 0) + 1; // for tests and curious people
  } catch {
    /* no audio here */
  }
}

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
