// The compose box's recipients: the channel and topic (with topic suggestions), or people as pills
// (with suggestions).
import * as api from "./api.js";
import { model } from "./model.js";
import { h, toast } from "./util.js";
import { C } from "./compose_state.js";

// --- recipients: pills with people suggestions ------------------------------------------------

export function renderPills() {
  C.els.pills.replaceChildren(...C.target.to.map((id) => h(
    "span.pill",
    h("span.pill-name", model.userName(id)),
    h("button.pill-remove", { type: "button", "aria-label": `Remove ${model.userName(id)}`, on: { click: () => removeRecipient(id) } }, "\u00d7"),
  )));
}

export function addRecipient(id) {
  if (C.target?.type !== "direct") C.target = { type: "direct", to: [] };
  if (!C.target.to.includes(id)) C.target.to = [...C.target.to, id];
  C.els.to.value = "";
  closeSuggest(peopleSuggest);
  renderPills();
  C.els.to.focus();
}

export function removeRecipient(id) {
  C.target.to = C.target.to.filter((x) => x !== id);
  renderPills();
  C.els.to.focus();
}

// Typed text that names people (emails or full names, comma-separated) becomes pills.
export function readRecipients() {
  for (const part of C.els.to.value.split(",").map((p) => p.trim()).filter(Boolean)) {
    // An email, a full name, or the start of exactly one person's name.
    const lowered = part.toLowerCase();
    const starting = [...model.users.values()].filter((u) => u.is_active !== false && u.full_name.toLowerCase().startsWith(lowered));
    const user = model.userByEmailOrName(part) || (starting.length === 1 ? starting[0] : null);
    if (!user) {
      toast(`No user "${part}".`, "error");
      return null;
    }
    if (!C.target.to.includes(user.user_id)) C.target.to = [...C.target.to, user.user_id];
  }
  C.els.to.value = "";
  renderPills();
  return C.target.to;
}

// A small listbox under an input: {list, input, items, index, choose}.
export const peopleSuggest = { items: [], index: 0 };
export const topicSuggest = { items: [], index: 0 };

export function showSuggest(state, list, input, items, choose) {
  Object.assign(state, { list, input, items, index: 0, choose });
  if (!items.length) return closeSuggest(state);
  list.hidden = false;
  drawSuggest(state);
}

export function drawSuggest(state) {
  state.list.replaceChildren(...state.items.map((item, i) => h(
    "li",
    { role: "option", id: `${state.list.id}-${i}`, "aria-selected": String(i === state.index), class: i === state.index ? "active" : "", on: { mousedown: (e) => { e.preventDefault(); state.choose(item); } } },
    h("span.label", item.label), item.detail ? h("span.detail", item.detail) : null,
  )));
  state.input.setAttribute("aria-activedescendant", `${state.list.id}-${state.index}`);
}

export function closeSuggest(state) {
  if (!state.list) return;
  state.items = [];
  state.list.hidden = true;
  state.input.removeAttribute("aria-activedescendant");
}

export function suggestionKeys(event, state) {
  if (!state.items.length) return false;
  if (event.key === "ArrowDown" || event.key === "ArrowUp") {
    state.index = (state.index + (event.key === "ArrowDown" ? 1 : -1) + state.items.length) % state.items.length;
    drawSuggest(state);
  } else if (event.key === "Enter" || event.key === "Tab") {
    state.choose(state.items[state.index]);
  } else if (event.key === "Escape") {
    closeSuggest(state); // and the page's Escape leaves the box too
    return true;
  } else return false;
  event.preventDefault();
  return true;
}

export function suggestPeople() {
  const query = C.els.to.value.trim().toLowerCase();
  if (!query) return closeSuggest(peopleSuggest);
  const chosen = new Set(C.target?.type === "direct" ? C.target.to : []);
  const items = [...model.users.values()]
    .filter((u) => u.is_active !== false && !chosen.has(u.user_id)
      && (u.full_name.toLowerCase().split(/\s+/).some((w) => w.startsWith(query)) || u.full_name.toLowerCase().startsWith(query) || u.email.toLowerCase().startsWith(query)))
    .sort((a, b) => a.full_name.localeCompare(b.full_name))
    .slice(0, 8)
    .map((u) => ({ label: u.full_name, detail: u.email, id: u.user_id }));
  showSuggest(peopleSuggest, C.els.peopleList, C.els.to, items, (item) => addRecipient(item.id));
}

export function onToKeyDown(event) {
  if (suggestionKeys(event, peopleSuggest)) return;
  if (event.key === "Backspace" && !C.els.to.value && C.target?.to?.length) {
    removeRecipient(C.target.to[C.target.to.length - 1]);
    event.preventDefault();
  } else if ((event.key === "Enter" || event.key === ",") && C.els.to.value.trim()) {
    readRecipients();
    event.preventDefault();
  } else if (event.key === "Enter" && C.target?.to?.length) {
    C.els.textarea.focus();
    event.preventDefault();
  }
}

// Topic suggestions: the channel's topics (newest first) that contain the typed text.
export const topicCache = new Map(); // stream id -> Promise of topic names

export function forgetTopicSuggestions(streamId) {
  topicCache.delete(streamId);
}

export async function suggestTopics() {
  if (C.target?.type !== "stream" || document.activeElement !== C.els.topic) return;
  const streamId = C.target.stream_id;
  if (!topicCache.has(streamId)) {
    topicCache.set(streamId, api.get(`users/me/${streamId}/topics`).then(({ topics }) => topics.map((t) => t.name), () => {
      topicCache.delete(streamId);
      return [];
    }));
  }
  const names = await topicCache.get(streamId);
  if (C.target?.type !== "stream" || C.target.stream_id !== streamId || document.activeElement !== C.els.topic) return;
  const query = C.els.topic.value.toLowerCase();
  const items = names.filter((n) => n.toLowerCase().includes(query) && n.toLowerCase() !== query).slice(0, 8).map((n) => ({ label: n || "(no topic)", name: n }));
  showSuggest(topicSuggest, C.els.topicList, C.els.topic, items, (item) => {
    C.els.topic.value = item.name;
    C.target.topic = item.name;
    closeSuggest(topicSuggest);
    C.els.textarea.focus();
  });
}
