// "Set status": your status text and emoji (POST /users/me/status), shown beside your name in
// the user list for everyone (user_status events).
import * as api from "./api.js";
import { glyphFor, openPicker } from "./emoji.js";
import { model } from "./model.js";
import { h, toast } from "./util.js";

export function openStatusDialog() {
  const current = model.statuses.get(model.myId) || {};
  let emoji = current.emoji_name || "";
  const text = h("input", { type: "text", "aria-label": "Status text", maxlength: "60", value: current.status_text || "", placeholder: "What's your status?" });
  const emojiButton = h("button.status-emoji-button", { type: "button", "aria-label": "Status emoji", title: "Choose an emoji" });
  const showEmoji = () => { emojiButton.textContent = emoji ? glyphFor(emoji) : "\u263a"; };
  showEmoji();
  emojiButton.addEventListener("click", () => openPicker(emojiButton, (name) => { emoji = name; showEmoji(); }));
  const save = async (clearIt) => {
    try {
      await api.post("users/me/status", clearIt
        ? { status_text: "", emoji_name: "" }
        : { status_text: text.value.trim(), emoji_name: emoji, ...(emoji ? {} : { emoji_code: "", reaction_type: "" }) });
      dialog.close();
    } catch (error) {
      toast(error.message, "error");
    }
  };
  const dialog = h(
    "dialog.confirm.status-dialog",
    { "aria-labelledby": "status-title" },
    h("h2#status-title", "Set status"),
    h("form", { on: { submit: (event) => { event.preventDefault(); save(false); } } },
      h("div.row", emojiButton, text),
      h("div.row",
        h("button.primary", { type: "submit" }, "Save"),
        h("button", { type: "button", on: { click: () => save(true) } }, "Clear status"),
        h("button", { type: "button", on: { click: () => dialog.close() } }, "Cancel"))),
  );
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  text.focus();
}
