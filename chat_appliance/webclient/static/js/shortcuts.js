// The "Keyboard shortcuts" dialog (opened with ?): what keys.js does, listed.
import { h } from "./util.js";

export const SHORTCUTS = [
  ["Navigation", [
    ["/", "Search messages"],
    ["q", "Search people"],
    ["w", "Filter channels"],
    ["Shift + A / Shift + D", "Previous / next channel"],
    ["n", "Next unread topic"],
    ["p", "Next unread direct message"],
    ["Esc", "Close a popup, leave a box"],
    ["?", "Show keyboard shortcuts"],
  ]],
  ["Messages", [
    ["j / \u2193", "Next message"],
    ["k / \u2191", "Previous message"],
    ["r / Enter", "Reply to the selected message"],
    ["c", "New topic"],
    ["x", "New direct message"],
    ["e", "Edit the selected message"],
    ["i", "Message actions"],
    ["+", "Thumbs up the selected message"],
    ["*", "Star the selected message"],
    [":", "React to the selected message"],
  ]],
];

export function openShortcuts() {
  if (document.querySelector("dialog.shortcuts")) return;
  const dialog = h(
    "dialog.shortcuts",
    { "aria-labelledby": "shortcuts-title" },
    h("h2#shortcuts-title", "Keyboard shortcuts"),
    SHORTCUTS.map(([section, rows]) => h("table.shortcut-table", { "aria-label": section },
      h("caption", section),
      h("tbody", rows.map(([key, what]) => h("tr", h("th", { scope: "row" }, h("kbd", key)), h("td", what)))))),
    h("form", { method: "dialog" }, h("button", { type: "submit" }, "Close")),
  );
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}
