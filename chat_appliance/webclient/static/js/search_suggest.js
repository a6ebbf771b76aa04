// Suggestions under the search box, as Zulip's search_suggestion offers them: an operator being
// typed ("sender:mi", "channel:sea", "dm:", "topic:", "is:") is completed with the people,
// channels or values that match. Arrow keys move through them, Enter or a click picks one (and
// searches); Enter with none picked searches the text as typed.
import { model } from "./model.js";
import { parseSearch } from "./narrow.js";
import { h } from "./util.js";

const IS_VALUES = ["dm", "starred", "mentioned", "unread", "resolved", "followed"];

// A value that needs quotes in search text (spaces) gets them.
const quoted = (value) => (/\s/.test(value) ? `"${value}"` : value);

function people(text, operator) {
  const lowered = text.toLowerCase();
  return [...model.users.values()]
    .filter((u) => u.is_active !== false && (u.full_name.toLowerCase().includes(lowered) || u.email.toLowerCase().includes(lowered)))
    .sort((a, b) => a.full_name.localeCompare(b.full_name))
    .slice(0, 8)
    .map((u) => ({ label: `${operator === "sender" ? "Sent by" : "Direct messages with"} ${u.full_name} (${u.email})`, token: `${operator}:${u.email}` }));
}

function channels(text, operator) {
  const lowered = text.toLowerCase();
  return [...model.streams.values()]
    .filter((s) => s.name.toLowerCase().includes(lowered))
    .sort((a, b) => a.name.localeCompare(b.name))
    .slice(0, 8)
    .map((s) => ({ label: `Channel #${s.name}`, token: `${operator}:${quoted(s.name)}` }));
}

// Suggestions for the last term of `text`: {label, text} with the term completed.
export function suggestions(text) {
  const match = /(^|\s)(-?)([a-z-]+):(\S*)$/i.exec(text);
  if (!match) return [];
  const before = text.slice(0, match.index + match[1].length) + match[2];
  const operator = match[3].toLowerCase();
  const value = match[4].replace(/^"/, "");
  let items = [];
  if (operator === "sender" || operator === "from") items = people(value, "sender");
  else if (operator === "dm" || operator === "pm-with") items = people(value, "dm");
  else if (operator === "channel" || operator === "stream") items = channels(value, "channel");
  else if (operator === "is") items = IS_VALUES.filter((v) => v.startsWith(value.toLowerCase())).map((v) => ({ label: `is:${v}`, token: `is:${v}` }));
  return items.map((item) => ({ label: item.label, text: `${before}${item.token} ` }));
}

function parses(text) {
  try {
    parseSearch(text);
    return true;
  } catch {
    return false;
  }
}

// Attach the suggestions to the search box; `search()` runs the search (the form's submit).
export function attachSearchSuggestions(input, search) {
  const list = h("ul.completion.search-suggestions#search-suggestions", { role: "listbox", "aria-label": "Search suggestions", hidden: true });
  input.setAttribute("aria-autocomplete", "list");
  input.setAttribute("aria-controls", "search-suggestions");
  input.after(list);
  let items = [];
  let active = -1;
  const draw = () => {
    list.replaceChildren(...items.map((item, i) => h("li", {
      role: "option", id: `search-suggestion-${i}`, "aria-selected": String(i === active), class: i === active ? "active" : "",
      on: { mousedown: (event) => { event.preventDefault(); pick(item); } },
    }, item.label)));
    list.hidden = !items.length;
    if (active >= 0) input.setAttribute("aria-activedescendant", `search-suggestion-${active}`);
    else input.removeAttribute("aria-activedescendant");
  };
  const close = () => {
    items = [];
    active = -1;
    draw();
  };
  const pick = (item) => {
    input.value = item.text.trimEnd();
    close();
    search();
  };
  input.addEventListener("input", () => {
    items = suggestions(input.value);
    active = -1;
    draw();
  });
  input.addEventListener("keydown", (event) => {
    if (!items.length) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      active = (active + (event.key === "ArrowDown" ? 1 : items.length - 1)) % items.length;
      draw();
    } else if (event.key === "Escape") {
      event.preventDefault();
      close();
    } else if (event.key === "Enter") {
      // The picked suggestion; none picked, the text as typed, or the first suggestion when the
      // text alone names nobody ("sender:mi").
      const choice = active >= 0 ? items[active] : parses(input.value) ? null : items[0];
      if (!choice) return close();
      event.preventDefault();
      pick(choice);
    }
  });
  input.addEventListener("blur", () => setTimeout(close, 150));
  return close;
}
