// "View read receipts", as Zulip's read_receipts: a dialog listing who has read a message (the
// server leaves out those who chose not to share that they read).
import * as api from "./api.js";
import { openDialog } from "./dialog.js";
import { avatar } from "./feed.js";
import { model } from "./model.js";
import { h } from "./util.js";

export function showReadReceipts(message) {
  openDialog("Read receipts", (dialog) => {
    const body = h("div.read-receipts", { "aria-live": "polite" }, h("p.loading", "Loading\u2026"));
    api.get(`messages/${message.id}/read_receipts`).then(({ user_ids: ids }) => {
      const people = ids.map((id) => model.users.get(id)).filter(Boolean).sort((a, b) => a.full_name.localeCompare(b.full_name));
      body.replaceChildren(
        h("p.detail", people.length === 1 ? "This message has been read by 1 person:" : `This message has been read by ${people.length} people:`),
        people.length ? h("ul.read-receipt-list", { "aria-label": "Read by" }, people.map((u) => h("li", avatar(u.user_id, ".small"), h("span", u.full_name)))) : null,
      );
    }, (error) => {
      body.replaceChildren(h("p.error", { role: "alert" }, error.message));
    });
    setTimeout(() => dialog.querySelector(".dialog-close")?.focus(), 0);
    return body;
  }, { className: "read-receipts-dialog" });
}
