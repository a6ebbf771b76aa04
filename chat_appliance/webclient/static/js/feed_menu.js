// The message actions menu and the actions it offers (star, react, edit, move, delete, history).
import * as api from "./api.js";
import { closePicker, openPicker, placeNear } from "./emoji.js";
import { model } from "./model.js";
import { messageLink } from "./narrow.js";
import { confirmDialog, formatFullTime, h, toast } from "./util.js";
import { S, messageEl } from "./feed_state.js";
import { openMoveTopic } from "./topic_actions.js";
import { selectedMessage } from "./feed_window.js";
import { markUnreadFrom } from "./feed_read.js";

export async function toggleStar(message) {
  const starred = message.flags.includes("starred");
  try {
    await api.post("messages/flags", { messages: [message.id], op: starred ? "remove" : "add", flag: "starred" });
  } catch (error) {
    toast(error.message, "error");
  }
}

export async function toggleReaction(message, name) {
  const mine = message.reactions.some((r) => r.user_id === model.myId && r.emoji_name === name);
  try {
    if (mine) await api.del(`messages/${message.id}/reactions`, { emoji_name: name });
    else await api.post(`messages/${message.id}/reactions`, { emoji_name: name });
  } catch (error) {
    toast(error.message, "error");
  }
}

export function canEdit(message) {
  const realm = model.state;
  if (message.sender_id !== model.myId || !realm.realm_allow_message_editing) return false;
  const limit = realm.realm_message_content_edit_limit_seconds;
  return !limit || Date.now() / 1000 - message.timestamp < limit;
}

export function closeMenu() {
  document.getElementById("message-menu")?.remove();
  document.removeEventListener("pointerdown", menuOutside, true);
}

export function menuOutside(event) {
  const menu = document.getElementById("message-menu");
  if (menu && !menu.contains(event.target)) closeMenu();
}

export function openMenu(anchor, message) {
  closeMenu();
  closePicker();
  const item = (label, fn, enabled = true) =>
    enabled ? h("button.menu-item", { type: "button", role: "menuitem", on: { click: () => { closeMenu(); fn(); } } }, label) : null;
  const isStream = message.type === "stream";
  const menu = h(
    "div.popover.menu#message-menu",
    { role: "menu", "aria-label": "Message actions" },
    item("Quote and reply", () => S.hooks.reply(message, true)),
    item("Reply", () => S.hooks.reply(message, false)),
    item("Add reaction", () => openPicker(anchor, (name) => toggleReaction(message, name))),
    item(message.flags.includes("starred") ? "Unstar" : "Star", () => toggleStar(message)),
    item("Mark as unread", () => markUnreadFrom(message)),
    item("Copy link to message", () => copyLink(message)),
    item("Edit message", () => editMessage(message), canEdit(message)),
    item("Move topic", () => moveTopic(message), isStream && (message.sender_id === model.myId || model.isAdmin() || model.me()?.role <= 300)),
    item("View edit history", () => showHistory(message), Boolean(message.last_edit_timestamp || message.last_moved_timestamp)),
    item("View read receipts", () => import("./read_receipts.js").then((m) => m.showReadReceipts(message)), model.state.realm_enable_read_receipts !== false),
    item("Delete message", () => deleteMessage(message), message.sender_id === model.myId || model.isAdmin()),
  );
  document.body.append(menu);
  placeNear(menu, anchor);
  menu.querySelector("button")?.focus();
  menu.addEventListener("keydown", (event) => {
    const items = [...menu.querySelectorAll("button")];
    const index = items.indexOf(document.activeElement);
    if (event.key === "ArrowDown") items[(index + 1) % items.length].focus();
    else if (event.key === "ArrowUp") items[(index - 1 + items.length) % items.length].focus();
    else if (event.key === "Escape") closeMenu();
    else return;
    event.preventDefault();
    event.stopPropagation();
  });
  setTimeout(() => document.addEventListener("pointerdown", menuOutside, true), 0);
}

export const toggleStarOf = (message) => toggleStar(message);

// Keyboard entry points on the selected message: its element, edit, actions menu, reaction picker.
export const selectedElement = () => (S.selectedId === null ? null : messageEl(S.selectedId));
export function editSelected() {
  const message = selectedMessage();
  if (!message) return;
  if (canEdit(message)) editMessage(message);
  else toast("You cannot edit this message.", "error");
}
export function menuForSelected() {
  const message = selectedMessage();
  const button = selectedElement()?.querySelector('button[aria-label="Message actions"]');
  if (message && button) openMenu(button, message);
}
export function reactToSelected() {
  const message = selectedMessage();
  const button = selectedElement()?.querySelector('.actions button[aria-label="Add reaction"]');
  if (message && button) openPicker(button, (name) => toggleReaction(message, name));
}

export async function copyLink(message) {
  const link = messageLink(message);
  try {
    await navigator.clipboard.writeText(link);
    toast("Link copied.");
  } catch {
    toast(link);
  }
}

export async function editMessage(message) {
  let raw;
  try {
    raw = (await api.get(`messages/${message.id}`, { apply_markdown: false })).message.content;
  } catch (error) {
    toast(error.message, "error");
    return;
  }
  const el = S.listEl.querySelector(`.message[data-id="${message.id}"] .content`);
  if (!el) return;
  const box = h("textarea.edit-box", { "aria-label": "Edit message", rows: 3 }, raw);
  const close = () => {
    // The content element may have been replaced by a re-render: unhide whichever precedes the form.
    if (form.previousElementSibling) form.previousElementSibling.hidden = false;
    form.remove();
  };
  const save = async () => {
    try {
      await api.patch(`messages/${message.id}`, { content: box.value });
      close();
    } catch (error) {
      toast(error.message, "error");
    }
  };
  const cancel = close;
  const form = h(
    "form.edit-form",
    { on: { submit: (event) => { event.preventDefault(); save(); } } },
    box,
    h("div.row", h("button.primary", { type: "submit" }, "Save"), h("button", { type: "button", on: { click: cancel } }, "Cancel")),
  );
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      save();
    } else if (event.key === "Escape") {
      event.stopPropagation();
      cancel();
    }
  });
  el.hidden = true;
  el.after(form);
  box.focus();
  box.setSelectionRange(box.value.length, box.value.length);
}

export async function deleteMessage(message) {
  if (!(await confirmDialog("Delete this message?", "Delete"))) return;
  try {
    await api.del(`messages/${message.id}`);
  } catch (error) {
    toast(error.message, "error");
  }
}

export function moveTopic(message) {
  openMoveTopic(message.stream_id, message.subject, message.id);
}

export async function showHistory(message) {
  let history;
  try {
    history = (await api.get(`messages/${message.id}/history`)).message_history;
  } catch (error) {
    toast(error.message, "error");
    return;
  }
  const dialog = h(
    "dialog.history",
    { "aria-label": "Message edit history" },
    h("h2", "Message edit history"),
    h("ol", history.map((entry, index) => {
      const content = h("div.rendered");
      content.innerHTML = entry.rendered_content || "";
      // The first entry is the message as sent; each later one an edit (its text) or a move.
      const kind = index === 0 ? "Original" : entry.prev_rendered_content !== undefined ? "Edited" : "Moved";
      const current = index === history.length - 1 && index > 0 ? " (current)" : "";
      return h("li", h("div.meta", `${kind}${current}: ${model.userName(entry.user_id)} \u00b7 ${formatFullTime(entry.timestamp)}`),
        entry.topic && entry.prev_topic ? h("div", `Topic: ${entry.prev_topic} \u2192 ${entry.topic}`) : null, content);
    })),
    h("form", { method: "dialog" }, h("button", "Close")),
  );
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}
