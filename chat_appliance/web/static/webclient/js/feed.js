// The message feed of the current view: fetch with anchors, render, page, mark read, act.
import * as api from "./api.js";
import { closePicker, glyphFor, openPicker, placeNear, showEmojiGlyphs } from "./emoji.js";
import { model } from "./model.js";
import { apiNarrow, channelView, dmView, matches, messageLink, nearId, viewHash } from "./narrow.js";
import { renderWidget } from "./widgets.js";
import { clear, confirmDialog, promptDialog, formatFullTime, formatTime, h, hue, initials, toast } from "./util.js";

const PAGE = 50;
let view = { kind: "feed", ops: [] };
let messages = []; // sorted by id
const byId = new Map();
let foundOldest = false;
let foundNewest = false;
let loadingOlder = false;
let generation = 0;
let selectedId = null;
let feedEl;
let listEl;
let observer;
const readQueue = new Set();
let hooks = { reply: () => {}, edit: () => {} };

export const currentView = () => view;
export const selectedMessage = () => byId.get(selectedId) || null;
export const messageById = (id) => byId.get(id);
export const isAtNewest = () => foundNewest;

export function mountFeed(element, callbacks) {
  feedEl = element;
  hooks = callbacks;
  listEl = h("div.message-list", { "aria-live": "off" });
  feedEl.append(listEl);
  feedEl.addEventListener("scroll", onScroll, { passive: true });
  observer = new IntersectionObserver(onVisible, { root: feedEl, threshold: 0.5 });
  setInterval(flushRead, 700);
  window.addEventListener("focus", () => {
    for (const el of listEl.querySelectorAll(".message.unread")) observer.unobserve(el), observer.observe(el);
  });
}

// The GET /messages parameters that open a view.
export function openingParams(forView) {
  const near = nearId(forView);
  return {
    anchor: near ? String(near) : "first_unread",
    num_before: PAGE,
    num_after: PAGE,
    narrow: apiNarrow(forView),
    apply_markdown: true,
    client_gravatar: true,
  };
}

// `prefetched`: the same request already under way (started beside /register at boot).
export async function openView(newView, prefetched = null) {
  view = newView;
  const mine = ++generation;
  messages = [];
  byId.clear();
  selectedId = null;
  foundOldest = foundNewest = false;
  clear(listEl, h("div.loading", "Loading messages\u2026"));
  const near = nearId(view);
  let data;
  try {
    data = await (prefetched || api.get("messages", openingParams(view)));
  } catch (error) {
    if (mine === generation) clear(listEl, h("div.empty", `Could not load messages: ${error.message}`));
    return;
  }
  if (mine !== generation) return;
  foundOldest = data.found_oldest;
  foundNewest = data.found_newest;
  messages = data.messages;
  for (const message of messages) byId.set(message.id, message);
  renderAll();
  const firstUnread = messages.find((m) => !(m.flags || []).includes("read"));
  if (near && byId.has(near)) scrollToMessage(near, "center");
  else if (firstUnread) scrollToMessage(firstUnread.id, "start");
  else feedEl.scrollTop = feedEl.scrollHeight;
  select(near && byId.has(near) ? near : firstUnread ? firstUnread.id : messages.length ? messages[messages.length - 1].id : null, false);
}

function renderAll() {
  if (!messages.length) {
    clear(listEl, h("div.empty", "No messages here yet."));
    return;
  }
  clear(listEl, ...renderRun(messages, null));
}

// Messages with recipient headers between conversations.
function renderRun(list, previous) {
  const out = [];
  let prev = previous;
  for (const message of list) {
    if (!prev || conversationKey(prev) !== conversationKey(message)) out.push(renderHeader(message));
    out.push(renderMessage(message, prev && conversationKey(prev) === conversationKey(message) && prev.sender_id === message.sender_id && message.timestamp - prev.timestamp < 300));
    prev = message;
  }
  return out;
}

const conversationKey = (message) => model.conversationKey(model.conversationOf(message));

function renderHeader(message) {
  if (message.type === "stream") {
    const stream = model.streams.get(message.stream_id);
    return h(
      "div.recipient-header.stream",
      { style: `--channel-color: ${stream?.color || "#888"}`, dataset: { key: conversationKey(message) } },
      h("a.channel-name", { href: viewHash(channelView(message.stream_id)) }, `#${message.display_recipient}`),
      h("span.sep", " > "),
      h("a.topic-name", { href: viewHash(channelView(message.stream_id, message.subject)) }, message.subject || "(no topic)"),
    );
  }
  const others = message.display_recipient.filter((r) => r.id !== model.myId);
  const names = others.length ? others.map((r) => r.full_name).join(", ") : "yourself";
  return h(
    "div.recipient-header.dm",
    { dataset: { key: conversationKey(message) } },
    h("a", { href: viewHash(dmView(model.conversationOf(message).dm)) }, `You and ${names}`),
  );
}

export function avatar(userId, size = "") {
  const user = model.users.get(userId);
  const url = user && user.avatar_url;
  // data-profile-user: a click opens the person's profile card (admin.js).
  if (url && url.startsWith("/")) return h(`img.avatar${size}`, { src: url, alt: "", loading: "lazy", dataset: { profileUser: userId } });
  return h(`span.avatar${size}`, { style: `--hue: ${hue(userId)}`, "aria-hidden": "true", dataset: { profileUser: userId } }, initials(user ? user.full_name : "?"));
}

function renderMessage(message, continued) {
  const flags = message.flags || [];
  const senderName = model.users.get(message.sender_id)?.full_name || message.sender_full_name;
  const marks = [];
  if (message.last_moved_timestamp) marks.push(h("span.mark", { title: `Moved ${formatFullTime(message.last_moved_timestamp)}` }, "moved"));
  if (message.last_edit_timestamp) marks.push(h("span.mark", { title: `Edited ${formatFullTime(message.last_edit_timestamp)}` }, "edited"));
  const content = h("div.content.rendered");
  content.innerHTML = message.content; // sanitised by the server; the page's CSP runs no inline script
  showEmojiGlyphs(content);
  // A /poll or /todo message shows its widget in place of its text, as Zulip's clients do.
  const widget = renderWidget(message);
  const article = h(
    "div.message",
    {
      role: "article",
      "aria-label": `${senderName}, ${formatTime(message.timestamp)}`,
      tabindex: "-1",
      dataset: { id: message.id },
      class: `message${continued ? " continued" : ""}${flags.includes("read") ? "" : " unread"}${flags.includes("starred") ? " starred" : ""}${flags.some((f) => /mentioned/.test(f)) ? " mentioned" : ""}`,
      on: { click: (event) => { if (!event.target.closest("a,button")) select(message.id, false); } },
    },
    continued ? h("span.avatar-space") : avatar(message.sender_id),
    h(
      "div.body",
      continued
        ? null
        : h("div.meta", h("button.sender", { type: "button", dataset: { profileUser: message.sender_id } }, senderName), h("a.time", { href: messageLink(message), title: formatFullTime(message.timestamp) }, formatTime(message.timestamp))),
      widget || content,
      marks.length ? h("div.marks", marks) : null,
      renderReactions(message),
    ),
    h(
      "div.actions",
      h("button.icon.star", { type: "button", title: flags.includes("starred") ? "Unstar" : "Star", "aria-label": flags.includes("starred") ? "Unstar" : "Star", "aria-pressed": String(flags.includes("starred")), on: { click: () => toggleStar(message) } }, flags.includes("starred") ? "\u2605" : "\u2606"),
      h("button.icon", { type: "button", title: "Add reaction", "aria-label": "Add reaction", on: { click: (event) => openPicker(event.currentTarget, (name) => toggleReaction(message, name)) } }, "\u263a"),
      h("button.icon", { type: "button", title: "Message actions", "aria-label": "Message actions", "aria-haspopup": "menu", on: { click: (event) => openMenu(event.currentTarget, message) } }, "\u22ef"),
    ),
  );
  if (!flags.includes("read")) observer.observe(article);
  return article;
}

function renderReactions(message) {
  if (!message.reactions || !message.reactions.length) return null;
  const groups = new Map();
  for (const reaction of message.reactions) {
    const key = `${reaction.reaction_type}:${reaction.emoji_code}`;
    if (!groups.has(key)) groups.set(key, { ...reaction, users: [] });
    groups.get(key).users.push(reaction.user_id);
  }
  return h(
    "div.reactions",
    [...groups.values()].map((group) => {
      const mine = group.users.includes(model.myId);
      const names = group.users.map((id) => model.userName(id)).join(", ");
      return h(
        "button.reaction",
        {
          type: "button",
          class: `reaction${mine ? " mine" : ""}`,
          "aria-pressed": String(mine),
          "aria-label": `${group.emoji_name}: ${group.users.length}`,
          title: `${names} reacted with :${group.emoji_name}:`,
          on: { click: () => toggleReaction(message, group.emoji_name) },
        },
        h("span.glyph", glyphFor(group.emoji_name, group.emoji_code)),
        h("span.count", String(group.users.length)),
      );
    }),
    h("button.reaction.add", { type: "button", "aria-label": "Add reaction", title: "Add reaction", on: { click: (event) => openPicker(event.currentTarget, (name) => toggleReaction(message, name)) } }, "+"),
  );
}

function rerender(id) {
  const message = byId.get(id);
  const old = listEl.querySelector(`.message[data-id="${id}"]`);
  if (!message || !old) return;
  const index = messages.indexOf(message);
  const prev = messages[index - 1];
  const continued = prev && conversationKey(prev) === conversationKey(message) && prev.sender_id === message.sender_id && message.timestamp - prev.timestamp < 300;
  const fresh = renderMessage(message, continued);
  if (old.classList.contains("selected")) fresh.classList.add("selected");
  // An edit in progress survives a re-render (a reaction or flag change arriving meanwhile).
  const editing = old.querySelector(".edit-form");
  if (editing) {
    const content = fresh.querySelector(".content");
    content.hidden = true;
    content.after(editing);
  }
  const focused = old.contains(document.activeElement) ? document.activeElement : null;
  old.replaceWith(fresh);
  if (focused && fresh.contains(focused)) focused.focus();
}

// --- paging ------------------------------------------------------------------------------

async function onScroll() {
  if (feedEl.scrollTop < 300 && !foundOldest && !loadingOlder && messages.length) {
    loadingOlder = true;
    const mine = generation;
    try {
      const data = await api.get("messages", {
        anchor: String(messages[0].id), num_before: PAGE, num_after: 0, include_anchor: false,
        narrow: apiNarrow(view), apply_markdown: true, client_gravatar: true,
      });
      if (mine !== generation) return;
      foundOldest = data.found_oldest;
      const older = data.messages.filter((m) => !byId.has(m.id));
      if (older.length) {
        for (const m of older) byId.set(m.id, m);
        const height = feedEl.scrollHeight;
        const top = feedEl.scrollTop;
        messages = [...older, ...messages];
        renderAll();
        feedEl.scrollTop = top + (feedEl.scrollHeight - height);
      }
    } catch (error) {
      toast(`Could not load older messages: ${error.message}`, "error");
    } finally {
      loadingOlder = false;
    }
  }
  if (!foundNewest && !loadingOlder && messages.length && feedEl.scrollHeight - feedEl.scrollTop - feedEl.clientHeight < 300) {
    loadingOlder = true;
    const mine = generation;
    try {
      const data = await api.get("messages", {
        anchor: String(messages[messages.length - 1].id), num_before: 0, num_after: PAGE, include_anchor: false,
        narrow: apiNarrow(view), apply_markdown: true, client_gravatar: true,
      });
      if (mine !== generation) return;
      foundNewest = data.found_newest;
      const newer = data.messages.filter((m) => !byId.has(m.id));
      for (const m of newer) byId.set(m.id, m);
      if (newer.length) {
        const last = messages[messages.length - 1];
        messages = [...messages, ...newer];
        listEl.querySelector(".empty")?.remove();
        listEl.append(...renderRun(newer, last));
      }
    } finally {
      loadingOlder = false;
    }
  }
}

// Messages fetched before the event queue existed can miss what arrived in between: fetch past
// the newest shown when the server's newest id is beyond it.
export async function catchUp(maxMessageId) {
  const newest = messages.length ? messages[messages.length - 1].id : 0;
  if (!foundNewest || maxMessageId <= newest) return;
  const mine = generation;
  const data = await api.get("messages", {
    anchor: String(newest), num_before: 0, num_after: PAGE, include_anchor: false,
    narrow: apiNarrow(view), apply_markdown: true, client_gravatar: true,
  });
  if (mine !== generation) return;
  foundNewest = data.found_newest;
  for (const message of data.messages) {
    foundNewest = true; // addMessage appends only at the newest end
    addMessage(message);
  }
  foundNewest = data.found_newest;
}

// --- reading -------------------------------------------------------------------------------

function onVisible(entries) {
  for (const entry of entries) {
    if (!entry.isIntersecting || !document.hasFocus()) continue;
    const id = Number(entry.target.dataset.id);
    observer.unobserve(entry.target);
    readQueue.add(id);
  }
}

async function flushRead() {
  if (!readQueue.size) return;
  const ids = [...readQueue];
  readQueue.clear();
  for (const id of ids) {
    const message = byId.get(id);
    if (message && !message.flags.includes("read")) message.flags.push("read");
    listEl.querySelector(`.message[data-id="${id}"]`)?.classList.remove("unread");
  }
  model.markRead(ids);
  try {
    await api.post("messages/flags", { messages: ids, op: "add", flag: "read" });
  } catch (error) {
    toast(`Could not mark messages as read: ${error.message}`, "error");
  }
}

// --- live updates --------------------------------------------------------------------------

export function addMessage(message) {
  if (!foundNewest || !matches(view, message) || byId.has(message.id)) return false;
  const stick = feedEl.scrollHeight - feedEl.scrollTop - feedEl.clientHeight < 80 || message.sender_id === model.myId;
  const last = messages[messages.length - 1];
  messages.push(message);
  byId.set(message.id, message);
  listEl.querySelector(".empty")?.remove();
  listEl.append(...renderRun([message], last));
  if (stick) feedEl.scrollTop = feedEl.scrollHeight;
  if (message.sender_id === model.myId) select(message.id, false);
  return true;
}

export function updateMessage(event) {
  const ids = event.message_ids || [event.message_id];
  let regroup = false;
  for (const id of ids) {
    const message = byId.get(id);
    if (!message) continue;
    if (event.rendered_content !== undefined && id === event.message_id) {
      message.content = event.rendered_content;
      message.last_edit_timestamp = event.edit_timestamp;
    }
    if (event.subject !== undefined || event.new_stream_id !== undefined) {
      if (event.subject !== undefined) message.subject = event.subject;
      if (event.new_stream_id !== undefined) {
        message.stream_id = event.new_stream_id;
        message.display_recipient = model.streamName(event.new_stream_id);
      }
      message.last_moved_timestamp = event.edit_timestamp;
      regroup = true;
    }
  }
  if (regroup) {
    messages = messages.filter((m) => view.kind !== "narrow" || matches(view, m) || !ids.includes(m.id));
    renderAll();
  } else for (const id of ids) rerender(id);
}

export function deleteMessages(ids) {
  let changed = false;
  for (const id of ids) {
    // A deleted message waiting to be marked read would fail the whole flags request (400).
    readQueue.delete(id);
    if (byId.delete(id)) changed = true;
  }
  if (changed) {
    messages = messages.filter((m) => byId.has(m.id));
    renderAll();
  }
}

export function reactionEvent(event) {
  const message = byId.get(event.message_id);
  if (!message) return;
  if (event.op === "add") {
    message.reactions.push({ emoji_name: event.emoji_name, emoji_code: event.emoji_code, reaction_type: event.reaction_type, user_id: event.user_id });
  } else {
    message.reactions = message.reactions.filter((r) => !(r.user_id === event.user_id && r.emoji_code === event.emoji_code && r.reaction_type === event.reaction_type));
  }
  rerender(message.id);
}

export function submessageEvent(event) {
  const message = byId.get(event.message_id);
  if (!message) return;
  message.submessages = [...(message.submessages || []), { id: event.submessage_id, message_id: event.message_id, sender_id: event.sender_id, msg_type: event.msg_type, content: event.content }];
  rerender(message.id);
}

export function flagsEvent(event) {
  const ids = event.all ? [...byId.keys()] : event.messages;
  for (const id of ids) {
    const message = byId.get(id);
    if (!message) continue;
    const flags = new Set(message.flags);
    if (event.op === "add") flags.add(event.flag);
    else flags.delete(event.flag);
    message.flags = [...flags];
    if (event.flag === "read") {
      listEl.querySelector(`.message[data-id="${id}"]`)?.classList.toggle("unread", event.op !== "add");
    } else rerender(id);
  }
}

export function refreshAll() {
  renderAll();
}

// --- selection and actions -----------------------------------------------------------------

export function select(id, scroll = true) {
  listEl.querySelector(".message.selected")?.classList.remove("selected");
  selectedId = id;
  if (id === null) return;
  const el = listEl.querySelector(`.message[data-id="${id}"]`);
  if (el) {
    el.classList.add("selected");
    if (scroll) el.scrollIntoView({ block: "nearest" });
  }
}

export function moveSelection(delta) {
  if (!messages.length) return;
  let index = messages.findIndex((m) => m.id === selectedId);
  index = index < 0 ? messages.length - 1 : Math.max(0, Math.min(messages.length - 1, index + delta));
  select(messages[index].id);
}

function scrollToMessage(id, block) {
  listEl.querySelector(`.message[data-id="${id}"]`)?.scrollIntoView({ block });
}

async function toggleStar(message) {
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

function canEdit(message) {
  const realm = model.state;
  if (message.sender_id !== model.myId || !realm.realm_allow_message_editing) return false;
  const limit = realm.realm_message_content_edit_limit_seconds;
  return !limit || Date.now() / 1000 - message.timestamp < limit;
}

function closeMenu() {
  document.getElementById("message-menu")?.remove();
  document.removeEventListener("pointerdown", menuOutside, true);
}

function menuOutside(event) {
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
    item("Quote and reply", () => hooks.reply(message, true)),
    item("Reply", () => hooks.reply(message, false)),
    item("Add reaction", () => openPicker(anchor, (name) => toggleReaction(message, name))),
    item(message.flags.includes("starred") ? "Unstar" : "Star", () => toggleStar(message)),
    item("Copy link to message", () => copyLink(message)),
    item("Edit message", () => editMessage(message), canEdit(message)),
    item("Move topic", () => moveTopic(message), isStream && (message.sender_id === model.myId || model.isAdmin() || model.me()?.role <= 300)),
    item("View edit history", () => showHistory(message), Boolean(message.last_edit_timestamp || message.last_moved_timestamp)),
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

async function copyLink(message) {
  const link = messageLink(message);
  try {
    await navigator.clipboard.writeText(link);
    toast("Link copied.");
  } catch {
    toast(link);
  }
}

async function editMessage(message) {
  let raw;
  try {
    raw = (await api.get(`messages/${message.id}`, { apply_markdown: false })).message.content;
  } catch (error) {
    toast(error.message, "error");
    return;
  }
  const el = listEl.querySelector(`.message[data-id="${message.id}"] .content`);
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

async function deleteMessage(message) {
  if (!(await confirmDialog("Delete this message?", "Delete"))) return;
  try {
    await api.del(`messages/${message.id}`);
  } catch (error) {
    toast(error.message, "error");
  }
}

async function moveTopic(message) {
  const topic = await promptDialog("Move this topic to:", message.subject, "New topic name");
  if (topic === null || topic === message.subject) return;
  try {
    await api.patch(`messages/${message.id}`, { topic, propagate_mode: "change_all" });
  } catch (error) {
    toast(error.message, "error");
  }
}

async function showHistory(message) {
  let history;
  try {
    history = (await api.get(`messages/${message.id}/history`)).message_history;
  } catch (error) {
    toast(error.message, "error");
    return;
  }
  const dialog = h(
    "dialog.history",
    { "aria-label": "Edit history" },
    h("h2", "Edit history"),
    h("ol", history.map((entry) => {
      const content = h("div.rendered");
      content.innerHTML = entry.rendered_content || "";
      return h("li", h("div.meta", `${model.userName(entry.user_id)} \u00b7 ${formatFullTime(entry.timestamp)}`), entry.topic && entry.prev_topic ? h("div", `Topic: ${entry.prev_topic} \u2192 ${entry.topic}`) : null, content);
    })),
    h("form", { method: "dialog" }, h("button", "Close")),
  );
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}
