// Read tracking: messages seen in the page are marked read in batches; Mark as unread pauses it.
import * as api from "./api.js";
import { model } from "./model.js";
import { apiNarrow } from "./narrow.js";
import { toast } from "./util.js";
import { S, messageEl } from "./feed_state.js";

export function onVisible(entries) {
  if (S.readingPaused) return;
  for (const entry of entries) {
    if (!entry.isIntersecting || !document.hasFocus()) continue;
    const id = Number(entry.target.dataset.id);
    S.observer.unobserve(entry.target);
    S.readQueue.add(id);
  }
}

// Before the session ends (Log out): send what has been read so far, then send nothing more, so
// no request goes out after the session is gone.
export async function stopReading() {
  clearInterval(S.readTimer);
  S.readingPaused = true;
  await flushRead();
}

export async function flushRead() {
  if (!S.readQueue.size) return;
  // Only messages still here: one deleted meanwhile would fail the whole request.
  const ids = [...S.readQueue].filter((id) => S.byId.has(id));
  S.readQueue.clear();
  if (!ids.length) return;
  for (const id of ids) {
    const message = S.byId.get(id);
    if (message && !message.flags.includes("read")) message.flags.push("read");
    messageEl(id)?.classList.remove("unread");
  }
  model.markRead(ids);
  try {
    await api.post("messages/flags", { messages: ids, op: "add", flag: "read" });
  } catch (error) {
    toast(`Could not mark messages as read: ${error.message}`, "error");
  }
}

// As Zulip: this message and the later ones of the view become unread, and stay so while the
// view is open (seeing them does not mark them read again).
export async function markUnreadFrom(message) {
  S.readingPaused = true;
  for (const id of [...S.readQueue]) if (id >= message.id) S.readQueue.delete(id);
  try {
    await api.post("messages/flags/narrow", {
      anchor: String(message.id), include_anchor: true, num_before: 0, num_after: 5000,
      narrow: apiNarrow(S.view), op: "remove", flag: "read",
    });
  } catch (error) {
    toast(error.message, "error");
  }
}
