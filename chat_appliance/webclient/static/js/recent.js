// Recent conversations: one row per channel topic or direct-message conversation, newest first,
// with its participants, last message time and unread count; filters for unread, participated,
// direct messages, muted topics and a text filter.
import * as api from "./api.js";
import { avatar } from "./feed.js";
import { model } from "./model.js";
import { channelView, dmView, viewHash } from "./narrow.js";
import { clear, formatTime, h, toast } from "./util.js";

const conversations = new Map(); // conversation key -> {conversation, last_id, timestamp, senders: Set}
let loaded = null;
const filters = { unread: false, participated: false, dms: true, muted: false, text: "" };
let mounted = null;

export function noteMessage(message) {
  const conversation = model.conversationOf(message);
  const key = model.conversationKey(conversation);
  let row = conversations.get(key);
  if (!row) {
    row = { conversation, last_id: 0, timestamp: 0, senders: new Set() };
    conversations.set(key, row);
  }
  if (message.id > row.last_id) {
    row.last_id = message.id;
    row.timestamp = message.timestamp;
    if (conversation.topic !== undefined) row.conversation = conversation; // the latest spelling
  }
  row.senders.add(message.sender_id);
}

export function forget() {
  conversations.clear();
  loaded = null;
}

function load() {
  if (!loaded) {
    loaded = api.get("messages", { anchor: "newest", num_before: 1000, num_after: 0, apply_markdown: false, client_gravatar: true, narrow: [] })
      .then(({ messages }) => { for (const m of messages) noteMessage(m); })
      .catch((error) => {
        loaded = null;
        toast(`Could not load recent conversations: ${error.message}`, "error");
      });
  }
  return loaded;
}

export const kind = "recent";
export const hash = () => "#recent";
export const title = () => "Recent conversations";

// Before this module loads, its first fetch includes every message so far; after, each new one
// is noted as it arrives (and shown: this module subscribed after the router's redraw).
model.on("message", (event) => {
  noteMessage(event.message);
  refresh();
});

export async function show(view, { list }) {
  mounted = list;
  clear(list, h("div.loading", "Loading conversations\u2026"));
  await load();
  if (mounted === list) render();
}

export function close() {
  mounted = null;
}

// Redraw after a change, if the view is showing.
export function refresh() {
  if (mounted?.isConnected && mounted.querySelector(".recent")) render();
}

function toggle(name, label) {
  return h("button.filter", { type: "button", "aria-pressed": String(filters[name]), on: { click: () => { filters[name] = !filters[name]; render(); } } }, label);
}

function rows() {
  const text = filters.text.toLowerCase();
  return [...conversations.entries()]
    .sort((a, b) => b[1].last_id - a[1].last_id)
    .map(([key, row]) => ({ key, ...row, unread: model.unreadCount((k) => k === key) }))
    .filter((row) => {
      const c = row.conversation;
      if (c.dm && !filters.dms) return false;
      if (!c.dm && !model.streams.has(c.stream_id)) return false;
      if (!c.dm && !filters.muted && model.isTopicMuted(c.stream_id, c.topic)) return false;
      if (filters.unread && !row.unread) return false;
      if (filters.participated && !row.senders.has(model.myId)) return false;
      if (text) {
        const label = c.dm ? c.dm.map((id) => model.userName(id)).join(" ") : `${model.streamName(c.stream_id)} ${c.topic}`;
        if (!label.toLowerCase().includes(text)) return false;
      }
      return true;
    })
    .slice(0, 300);
}

function render() {
  const search = h("input.recent-search", { type: "search", "aria-label": "Filter conversations", placeholder: "Filter conversations", value: filters.text });
  search.addEventListener("input", () => {
    filters.text = search.value;
    const body = mounted.querySelector("tbody");
    body.replaceWith(tableBody());
  });
  clear(
    mounted,
    h("div.recent",
      h("div.recent-filters", { role: "group", "aria-label": "Filters" },
        search, toggle("unread", "Unread"), toggle("participated", "Participated"), toggle("dms", "Direct messages"), toggle("muted", "Muted")),
      h("table.recent-table", { "aria-label": "Recent conversations" },
        h("thead", h("tr", h("th", { scope: "col" }, "Channel"), h("th", { scope: "col" }, "Topic"), h("th", { scope: "col" }, "Unread"),
          h("th", { scope: "col" }, "Participants"), h("th", { scope: "col" }, "Time"))),
        tableBody())),
  );
  if (filters.text) {
    const input = mounted.querySelector(".recent-search");
    input.focus();
    input.setSelectionRange(input.value.length, input.value.length);
  }
}

function tableBody() {
  const list = rows();
  if (!list.length) return h("tbody", h("tr", h("td", { colspan: "5" }, "No conversations match.")));
  return h("tbody", list.map((row) => {
    const c = row.conversation;
    const href = c.dm ? viewHash(dmView(c.dm)) : viewHash(channelView(c.stream_id, c.topic));
    const people = [...row.senders].slice(-4);
    return h(
      "tr",
      h("td", c.dm ? "Direct message" : h("a", { href: viewHash(channelView(c.stream_id)) }, `#${model.streamName(c.stream_id)}`)),
      h("td", h("a", { href }, c.dm ? c.dm.map((id) => model.userName(id)).join(", ") : c.topic || "(no topic)")),
      h("td", row.unread ? h("span.unread-count", { "aria-label": `${row.unread} unread` }, String(row.unread)) : ""),
      h("td.participants", { "aria-label": people.map((id) => model.userName(id)).join(", ") }, people.map((id) => avatar(id, ".small"))),
      h("td", formatTime(row.timestamp)),
    );
  }));
}
