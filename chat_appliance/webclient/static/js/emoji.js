// Emoji names from the server's own table (the renderer's), and a picker over them.
import { emojiGlyph, h } from "./util.js";

let table = null;
let loading = null;

export function loadEmoji() {
  if (!loading) {
    loading = fetch("/webclient/emoji.json", { credentials: "same-origin" })
      .then((response) => response.json())
      .then((data) => {
        table = data;
        return table;
      })
      .catch(() => {
        loading = null; // try again next time it is needed
        return {};
      });
  }
  return loading;
}

export const emojiTable = () => table || {};
export const emojiLoaded = () => table !== null;

export function searchEmoji(prefix, limit = 8) {
  const lowered = prefix.toLowerCase();
  const names = Object.keys(emojiTable());
  const starts = names.filter((name) => name.startsWith(lowered));
  const contains = lowered ? names.filter((name) => !name.startsWith(lowered) && name.includes(lowered)) : [];
  return [...starts, ...contains].slice(0, limit);
}

export function glyphFor(name, code) {
  if (code === "zulip" || name === "zulip") return "Z";
  return emojiGlyph(code || emojiTable()[name]);
}

const POPULAR = ["thumbs_up", "heart", "smile", "tada", "joy", "eyes", "check", "working_on_it", "octopus", "rocket"];

// A picker dialog anchored near `anchor`; calls choose(name) and closes.
export async function openPicker(anchor, choose) {
  await loadEmoji();
  closePicker();
  const list = h("div.emoji-grid", { role: "listbox", "aria-label": "Emoji" });
  const input = h("input.emoji-search", { type: "text", placeholder: "Search emoji", "aria-label": "Search emoji" });
  const dialog = h("div.popover.emoji-picker#emoji-picker", { role: "dialog", "aria-label": "Emoji picker" }, input, list);
  const fill = () => {
    const names = input.value ? searchEmoji(input.value, 120) : [...POPULAR.filter((n) => n in emojiTable()), ...searchEmoji("", 110)];
    list.replaceChildren(
      ...names.map((name) =>
        h("button.emoji-choice", { type: "button", role: "option", title: `:${name}:`, "aria-label": name, dataset: { name }, on: { click: () => pick(name) } }, glyphFor(name)),
      ),
    );
  };
  const pick = (name) => {
    closePicker();
    choose(name);
  };
  input.addEventListener("input", fill);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") {
      const first = list.querySelector("button");
      if (first) pick(first.dataset.name);
      event.preventDefault();
    } else if (event.key === "Escape") {
      closePicker();
      event.stopPropagation();
    }
  });
  fill();
  // Inside the topmost open modal dialog, if any: the rest of the page is inert behind it.
  ([...document.querySelectorAll("dialog[open]")].pop() || document.body).append(dialog);
  placeNear(dialog, anchor);
  input.focus();
  setTimeout(() => document.addEventListener("pointerdown", outside, true), 0);
}

function outside(event) {
  const picker = document.getElementById("emoji-picker");
  if (picker && !picker.contains(event.target)) closePicker();
}

export function closePicker() {
  document.getElementById("emoji-picker")?.remove();
  document.removeEventListener("pointerdown", outside, true);
}

export function placeNear(popover, anchor) {
  const rect = anchor.getBoundingClientRect();
  const width = popover.offsetWidth;
  const height = popover.offsetHeight;
  const left = Math.max(4, Math.min(window.innerWidth - width - 4, rect.right - width));
  const below = rect.bottom + 4;
  const top = below + height > window.innerHeight ? Math.max(4, rect.top - height - 4) : below;
  popover.style.left = `${left}px`;
  popover.style.top = `${top}px`;
}

// The renderer marks emoji as <span class="emoji emoji-CODE">:name:</span>; show the glyph.
export function showEmojiGlyphs(root) {
  for (const span of root.querySelectorAll("span.emoji")) {
    const match = /(?:^|\s)emoji-([0-9a-f-]+)(?:\s|$)/.exec(span.className);
    if (match && span.textContent.startsWith(":")) span.textContent = emojiGlyph(match[1]);
  }
}
