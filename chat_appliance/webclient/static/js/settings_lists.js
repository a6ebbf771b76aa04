// Settings > Muted users and Settings > Alert words: two lists of one's own, each drawn from the
// realm store (muted_users, alert_words) and drawn again when the server's event changes it, so
// a change made in another tab or client shows here too.
import * as api from "./api.js";
import { attempt, field } from "./dialog.js";
import { model } from "./model.js";
import { clear, formatFullTime, h, toast } from "./util.js";

// The shown list's redraw (null when neither panel is shown).
let redrawMuted = null;
let redrawAlertWords = null;
model.on("muted_users", () => redrawMuted?.());
model.on("alert_words", () => redrawAlertWords?.());

// --- muted users ---------------------------------------------------------------------------------

export function mutedUsersPanel(root) {
  const list = h("ul.settings-list", { "aria-label": "Muted users" });
  const empty = h("p.detail", "You have not muted anyone. A person's profile card has \u201cMute this user\u201d.");
  root.append(
    h("p.detail", "Messages from the people you mute are hidden (each can still be shown) and do not notify you."),
    empty,
    list,
  );
  const draw = () => {
    if (!list.isConnected) {
      if (redrawMuted === draw) redrawMuted = null;
      return;
    }
    const muted = [...(model.state.muted_users || [])]
      .map((entry) => ({ ...entry, name: model.userName(entry.id) }))
      .sort((a, b) => a.name.localeCompare(b.name));
    empty.hidden = muted.length > 0;
    clear(list, muted.map((entry) => h(
      "li",
      h("div", h("strong", entry.name), entry.timestamp ? h("div.detail", `Muted ${formatFullTime(entry.timestamp)}`) : null),
      h("button", { type: "button", "aria-label": `Unmute ${entry.name}`, on: { click: (event) => unmute(event.currentTarget, entry) } }, "Unmute"),
    )));
  };
  redrawMuted = draw;
  draw();
}

async function unmute(button, entry) {
  button.disabled = true;
  // The list follows the muted_users event; a failure gives the button back.
  if (!(await attempt(() => api.del(`users/me/muted_users/${entry.id}`), `${entry.name} unmuted.`))) button.disabled = false;
}

export async function setMuted(userId, muted) {
  const name = model.userName(userId);
  const path = `users/me/muted_users/${userId}`;
  return attempt(() => (muted ? api.post(path) : api.del(path)), muted ? `${name} muted.` : `${name} unmuted.`);
}

// --- alert words ---------------------------------------------------------------------------------

export function alertWordsPanel(root) {
  const word = h("input", { type: "text", required: true, maxlength: "100", autocomplete: "off" });
  const list = h("ul.settings-list", { "aria-label": "Alert words" });
  const empty = h("p.detail", "No alert words yet.");
  root.append(
    h("p.detail", "A message holding one of your alert words (in any case) is highlighted and notifies you like a mention."),
    h(
      "form.inline-form",
      {
        on: {
          submit: async (event) => {
            event.preventDefault();
            const wanted = word.value.trim();
            if (!wanted) return;
            if (await attempt(() => api.post("users/me/alert_words", { alert_words: [wanted] }), `Alert word \u201c${wanted}\u201d added.`)) word.value = "";
          },
        },
      },
      field("Alert word", word),
      h("button.primary", { type: "submit" }, "Add alert word"),
    ),
    h("h4", "Your alert words"),
    empty,
    list,
  );
  const draw = () => {
    if (!list.isConnected) {
      if (redrawAlertWords === draw) redrawAlertWords = null;
      return;
    }
    const words = [...(model.state.alert_words || [])].sort((a, b) => a.localeCompare(b));
    empty.hidden = words.length > 0;
    clear(list, words.map((text) => h(
      "li",
      h("span", text),
      h("button", { type: "button", "aria-label": `Remove alert word ${text}`, on: { click: (event) => removeWord(event.currentTarget, text) } }, "Remove"),
    )));
  };
  redrawAlertWords = draw;
  draw();
}

async function removeWord(button, text) {
  button.disabled = true;
  try {
    await api.del("users/me/alert_words", { alert_words: [text] });
  } catch (error) {
    button.disabled = false;
    toast(error.message, "error");
  }
}
