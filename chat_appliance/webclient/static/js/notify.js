// Notifications as Zulip decides them: the user's settings (desktop notifications and sounds for
// direct messages and mentions, for channels, for followed topics), overridden per channel by the
// subscription's desktop_notifications / audible_notifications (null: follow the setting); muted
// topics never notify unless mentioned, muted people never. The sound is a short tone made with Web Audio.
import { model } from "./model.js";
import { viewHash } from "./narrow.js";

const setting = (name, fallback = true) => model.state.user_settings?.[name] ?? model.state[name] ?? fallback;

// {desktop, sound}: what a new message should raise.
export function notificationsFor(message) {
  const none = { desktop: false, sound: false };
  if (message.sender_id === model.myId || model.isMutedUser(message.sender_id)) return none;
  const flags = message.flags || [];
  // An alert word notifies as a mention does (Zulip's rule).
  const mentioned = flags.some((f) => /mentioned/.test(f)) || flags.includes("has_alert_word");
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

// A new message: its sound, and its desktop notification when the page is not in front.
export function notifyMessage(message) {
  const wanted = notificationsFor(message);
  if (wanted.sound) playSound();
  if (!wanted.desktop || !("Notification" in window) || Notification.permission !== "granted") return;
  if (document.visibilityState === "visible" && document.hasFocus()) return;
  const text = message.content.replace(/<[^>]*>/g, "").slice(0, 200);
  const title = message.type === "private" ? message.sender_full_name : `${message.sender_full_name} (#${message.display_recipient} > ${message.subject})`;
  const note = new Notification(title, { body: text, tag: String(message.id) });
  note.onclick = () => {
    window.focus();
    location.hash = viewHash({ kind: "narrow", ops: [{ operator: "near", operand: message.id }] });
  };
}
