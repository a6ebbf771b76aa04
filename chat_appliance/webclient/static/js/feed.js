// The message feed of the current view: fetch with anchors, render, page, mark read, act.
import * as api from "./api.js";
import { closePicker, glyphFor, openPicker, placeNear, showEmojiGlyphs } from "./emoji.js";
import { model } from "./model.js";
import { apiNarrow, channelView, dmView, matches, messageLink, nearId, viewHash } from "./narrow.js";
import { renderWidget } from "./widgets.js";
import { clear, confirmDialog, promptDialog, formatFullTime, formatTime, h, hue, initials, toast } from "./util.js";

const PAGE = 50;
// Older and newer pages are bigger than the first: fewer round trips when scrolling far.
const FETCH = 400;
// The page holds at most WINDOW messages; beyond, the far end leaves the page (and comes back
// from memory, or from the server when it was never fetched). Everything fetched stays in memory.
const WINDOW = 600;
// Jumping to the end (your own message sent from far back): this many, more come back on scrolling.
const TAIL = 60;
let view = { kind: "feed", ops: [] };
let messages = []; // sorted by id: everything fetched for this view
let fetched = 0; // pages fetched beyond the first: the first one is small, the next ones FETCH
let lo = 0; // messages[lo..hi) are in the page
let hi = 0;
const byId = new Map();
let foundOldest = false;
let foundNewest = false;
let loadingOlder = false;
let generation = 0;
// Messages of the view that arrived (their events) while a fetch that may reach its newest
// message was under way (opening it, or loading newer messages): the fetch's answer may have
// been made before they existed. Null when no such fetch is pending.
let arrivedWhileFetching = null;
let selectedId = null;
// At the end of the view and meant to stay there: scrolled to the end for a message that just
// came in (yours, or any while you were at the end). A windowed page lays each block out at a
// placeholder height until it is first drawn (content-visibility: auto, app.css), so a block
// drawn just after a jump to the end grows, and the end it showed moves out of view. While
// stuck, every change of the list's size (a ResizeObserver, after layout) scrolls to the end
// again; scrolling up, away from the end, unsticks. Only a scroll up counts: growth above the
// end leaves scrollTop where it was, and its scroll event may come before the observer's call.
let stuckToEnd = false;
let lastScrollTop = 0;
let feedEl;
let listEl;
let observer;
const readQueue = new Set();
let readTimer = null;
let readingPaused = false; // after "Mark as unread", until the next view: no marking read on sight
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
  const wantActions = (event) => ensureActions(event.target.closest?.(".message"));
  listEl.addEventListener("pointerover", wantActions);
  listEl.addEventListener("focusin", wantActions);
  feedEl.addEventListener("scroll", onScroll, { passive: true });
  new ResizeObserver(() => {
    if (stuckToEnd) jumpToEnd();
  }).observe(listEl);
  observer = new IntersectionObserver(onVisible, { root: feedEl, threshold: 0.5 });
  readTimer = setInterval(flushRead, 700);
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
  readingPaused = false;
  stuckToEnd = false;
  fetched = 0;
  listEl.classList.remove("windowed");
  const mine = ++generation;
  messages = [];
  byId.clear();
  selectedId = null;
  foundOldest = foundNewest = false;
  clear(listEl, h("div.loading", "Loading messages\u2026"));
  const near = nearId(view);
  const arrived = (arrivedWhileFetching = []);
  let data;
  try {
    data = await (prefetched || api.get("messages", openingParams(view)));
  } catch (error) {
    if (mine === generation) {
      arrivedWhileFetching = null;
      clear(listEl, h("div.empty", `Could not load messages: ${error.message}`));
    }
    return;
  }
  if (mine !== generation) return;
  arrivedWhileFetching = null;
  foundOldest = data.found_oldest;
  foundNewest = data.found_newest;
  messages = data.messages;
  for (const message of messages) byId.set(message.id, message);
  if (foundNewest) messages = withArrived(messages, arrived);
  lo = 0;
  hi = messages.length;
  renderAll();
  const firstUnread = messages.find((m) => !(m.flags || []).includes("read"));
  if (near && byId.has(near)) scrollToMessage(near, "center");
  else if (firstUnread) scrollToMessage(firstUnread.id, "start");
  else feedEl.scrollTop = feedEl.scrollHeight;
  select(near && byId.has(near) ? near : firstUnread ? firstUnread.id : messages.length ? messages[messages.length - 1].id : null, false);
}

// `list` (fetched, reaching the view's newest message) with the messages that arrived while it
// was fetched and are not in it: they are newer. In id order; each noted in byId.
function withArrived(list, arrived) {
  const added = arrived.filter((message) => !byId.has(message.id));
  if (!added.length) return list;
  for (const message of added) byId.set(message.id, message);
  return [...list, ...added].sort((a, b) => a.id - b.id);
}

// Redraw the window messages[lo..hi) (only when its contents changed wholesale: a move, a deletion).
function renderAll() {
  lo = Math.max(0, Math.min(lo, messages.length));
  hi = Math.max(lo, Math.min(Math.max(hi, lo + 1), messages.length, lo + WINDOW));
  if (!messages.length) {
    clear(listEl, h("div.empty", "No messages here yet."));
    return;
  }
  const { lead, blocks } = renderRun(messages.slice(lo, hi), null);
  clear(listEl, ...lead, ...blocks);
}

const continues = (prev, message) =>
  Boolean(prev) && conversationKey(prev) === conversationKey(message) && prev.sender_id === message.sender_id && message.timestamp - prev.timestamp < 300;

// Messages grouped by conversation: each group a block with its recipient header (sticky within
// its own block, so only one header sticks at a time). Messages continuing `previous`'s
// conversation come back in `lead`, for the block already in the page.
function renderRun(list, previous) {
  const lead = [];
  const blocks = [];
  let block = null;
  let prev = previous;
  for (const message of list) {
    const same = prev && conversationKey(prev) === conversationKey(message);
    const el = renderMessage(message, continues(prev, message));
    if (!same) {
      block = h("div.recipient-block", { dataset: { key: conversationKey(message) } }, renderHeader(message));
      blocks.push(block);
    }
    (block || { append: (x) => lead.push(x) }).append(el);
    prev = message;
  }
  return { lead, blocks };
}

const messageEl = (id) => listEl.querySelector(`.message[data-id="${id}"]`);

// Append messages[hi..upTo) to the page.
function appendWindow(upTo) {
  if (upTo <= hi) return;
  listEl.querySelector(".empty")?.remove();
  const { lead, blocks } = renderRun(messages.slice(hi, upTo), hi > lo ? messages[hi - 1] : null);
  listEl.lastElementChild?.append(...lead);
  listEl.append(...blocks);
  hi = upTo;
}

// Prepend messages[from..lo) to the page, joining the first block when the conversation continues.
function prependWindow(from) {
  if (from >= lo) return;
  const { blocks } = renderRun(messages.slice(from, lo), null);
  const first = listEl.querySelector(".recipient-block");
  const last = blocks[blocks.length - 1];
  if (first && last && last.dataset.key === first.dataset.key) {
    const moved = [...last.querySelectorAll(":scope > .message")];
    first.querySelector(".recipient-header").after(...moved);
    blocks.pop();
  }
  listEl.querySelector(".empty")?.remove();
  listEl.prepend(...blocks);
  const oldFirst = messages[lo];
  lo = from;
  if (oldFirst) rerender(oldFirst.id); // it may now continue the message before it
}

// Drop messages from the far end until the page holds at most WINDOW.
function trim(keepEnd) {
  while (hi - lo > WINDOW) {
    const id = keepEnd === "top" ? messages[--hi].id : messages[lo++].id;
    const el = messageEl(id);
    if (!el) continue;
    observer.unobserve(el);
    const block = el.parentElement;
    el.remove();
    if (!block.querySelector(".message")) block.remove();
  }
  if (keepEnd !== "top" && messages[lo]) rerender(messages[lo].id);
}

// Keep the same content under the eyes while the page above it changes. The message at the top
// may be drawn again meanwhile (the old first one, now continuing the message before it): then
// its new element holds the place. Losing it left the feed at the top, where the next scroll
// check fetched another page, and so on through the whole history.
function keepPosition(change) {
  const top = feedEl.getBoundingClientRect().top;
  const anchor = [...listEl.querySelectorAll(".message")].find((el) => el.getBoundingClientRect().bottom > top);
  const before = anchor ? anchor.getBoundingClientRect().top : 0;
  change();
  const now = anchor && (anchor.isConnected ? anchor : messageEl(anchor.dataset.id));
  if (now) feedEl.scrollTop += now.getBoundingClientRect().top - before;
}

// Show a message that is fetched but outside the page: the window around it.
function showIndex(index) {
  lo = Math.max(0, index - Math.floor(WINDOW / 2));
  hi = Math.min(messages.length, lo + WINDOW);
  renderAll();
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
  // (each only when the HTML has what it looks for: a long page renders hundreds at a time)
  if (message.content.includes("emoji")) showEmojiGlyphs(content);
  if (message.content.includes("<a ")) fixLinks(content);
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
      on: { click: (event) => onMessageClick(event, message) },
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
    flags.includes("starred") ? renderActions(message) : null,
  );
  if (!flags.includes("read")) observer.observe(article);
  return article;
}

// A message's action buttons, made when first wanted (pointer over it, focus in it, selected,
// starred): three buttons fewer per message in the page.
function renderActions(message) {
  const flags = message.flags || [];
  return h(
      "div.actions",
      h("button.icon.star", { type: "button", title: flags.includes("starred") ? "Unstar" : "Star", "aria-label": flags.includes("starred") ? "Unstar" : "Star", "aria-pressed": String(flags.includes("starred")), on: { click: () => toggleStar(message) } }, flags.includes("starred") ? "\u2605" : "\u2606"),
      h("button.icon", { type: "button", title: "Add reaction", "aria-label": "Add reaction", on: { click: (event) => openPicker(event.currentTarget, (name) => toggleReaction(message, name)) } }, "\u263a"),
      h("button.icon", { type: "button", title: "Message actions", "aria-label": "Message actions", "aria-haspopup": "menu", on: { click: (event) => openMenu(event.currentTarget, message) } }, "\u22ef"),
  );
}

function ensureActions(el) {
  if (!el || el.querySelector(":scope > .actions") || el.classList.contains("local-echo")) return;
  const message = byId.get(Number(el.dataset.id));
  if (message) el.append(renderActions(message));
}

// Links leave the app in a new tab; the app's own links (#narrow/...) stay in it.
function fixLinks(content) {
  for (const a of content.querySelectorAll("a[href]")) {
    const href = a.getAttribute("href");
    let url;
    try {
      url = new URL(href, location.href);
    } catch {
      continue;
    }
    const internal = href.startsWith("#") || (url.origin === location.origin && url.pathname === "/" && url.hash.startsWith("#"));
    if (internal) a.removeAttribute("target");
    else {
      a.target = "_blank";
      a.rel = "noopener noreferrer";
    }
  }
  for (const img of content.querySelectorAll(".message_inline_image img")) {
    img.loading = "lazy";
    if (!img.hasAttribute("alt")) img.alt = img.closest("a")?.getAttribute("title") || "Image";
  }
}

function onMessageClick(event, message) {
  const inline = event.target.closest(".message_inline_image");
  if (inline) {
    event.preventDefault();
    import("./lightbox.js").then((m) => m.openLightbox(inline.querySelector("a"), inline.querySelector("img")));
    return;
  }
  if (!event.target.closest("a,button")) select(message.id, false);
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
  const old = messageEl(id);
  if (!message || !old) return;
  const index = messages.indexOf(message);
  const fresh = renderMessage(message, index > lo && continues(messages[index - 1], message));
  if (old.classList.contains("selected")) fresh.classList.add("selected");
  if (old.querySelector(":scope > .actions")) ensureActions(fresh);
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

// Where we scroll, we note where we left the view: several scrolls in one frame make one event.
function jumpToEnd() {
  feedEl.scrollTop = feedEl.scrollHeight;
  lastScrollTop = feedEl.scrollTop;
}

function scrollToEnd() {
  jumpToEnd();
  stuckToEnd = hi === messages.length && foundNewest;
}

function onScroll() {
  const up = feedEl.scrollTop < lastScrollTop;
  lastScrollTop = feedEl.scrollTop;
  if (stuckToEnd && up && feedEl.scrollHeight - feedEl.scrollTop - feedEl.clientHeight >= 80) stuckToEnd = false;
  if (feedEl.scrollTop < 400) loadOlder();
  if (feedEl.scrollHeight - feedEl.scrollTop - feedEl.clientHeight < 400) loadNewer();
}

async function loadOlder() {
  if (loadingOlder || !messages.length) return;
  listEl.classList.add("windowed");
  if (lo > 0) {
    keepPosition(() => {
      prependWindow(Math.max(0, lo - FETCH));
      trim("top");
    });
    return;
  }
  if (foundOldest) return;
  loadingOlder = true;
  const mine = generation;
  try {
    const data = await api.get("messages", {
      anchor: String(messages[0].id), num_before: fetched++ ? FETCH : PAGE, num_after: 0, include_anchor: false,
      narrow: apiNarrow(view), apply_markdown: true, client_gravatar: true,
    });
    if (mine !== generation) return;
    foundOldest = data.found_oldest;
    const older = data.messages.filter((m) => !byId.has(m.id));
    if (older.length) {
      for (const m of older) byId.set(m.id, m);
      messages = [...older, ...messages];
      lo += older.length;
      hi += older.length;
      keepPosition(() => {
        prependWindow(0);
        trim("top");
      });
    }
  } catch (error) {
    toast(`Could not load older messages: ${error.message}`, "error");
  } finally {
    loadingOlder = false;
  }
  if (mine === generation && feedEl.scrollTop < 400) loadOlder();
}

async function loadNewer() {
  if (loadingOlder || !messages.length) return;
  listEl.classList.add("windowed");
  if (hi < messages.length) {
    keepPosition(() => {
      appendWindow(Math.min(messages.length, hi + FETCH));
      trim("bottom");
    });
    return;
  }
  if (foundNewest) return;
  loadingOlder = true;
  const mine = generation;
  const arrived = (arrivedWhileFetching = []);
  try {
    const data = await api.get("messages", {
      anchor: String(messages[messages.length - 1].id), num_before: 0, num_after: fetched++ ? FETCH : PAGE, include_anchor: false,
      narrow: apiNarrow(view), apply_markdown: true, client_gravatar: true,
    });
    if (mine !== generation) return;
    arrivedWhileFetching = null;
    foundNewest = data.found_newest;
    let newer = data.messages.filter((m) => !byId.has(m.id));
    for (const m of newer) byId.set(m.id, m);
    if (foundNewest) newer = withArrived(newer, arrived);
    if (newer.length) {
      messages = [...messages, ...newer];
      keepPosition(() => {
        appendWindow(messages.length);
        trim("bottom");
      });
    }
  } catch (error) {
    if (mine === generation) arrivedWhileFetching = null;
    toast(`Could not load newer messages: ${error.message}`, "error");
  } finally {
    loadingOlder = false;
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

// Another view (Inbox, Recent conversations, Drafts) takes the list's place: no live messages here.
export function closeView() {
  view = { kind: "inbox", ops: [] };
  stuckToEnd = false;
  generation += 1;
  arrivedWhileFetching = null;
  messages = [];
  byId.clear();
  lo = hi = 0;
  selectedId = null;
}

function onVisible(entries) {
  if (readingPaused) return;
  for (const entry of entries) {
    if (!entry.isIntersecting || !document.hasFocus()) continue;
    const id = Number(entry.target.dataset.id);
    observer.unobserve(entry.target);
    readQueue.add(id);
  }
}

// Before the session ends (Log out): send what has been read so far, then send nothing more, so
// no request goes out after the session is gone.
export async function stopReading() {
  clearInterval(readTimer);
  readingPaused = true;
  await flushRead();
}

async function flushRead() {
  if (!readQueue.size) return;
  const ids = [...readQueue];
  readQueue.clear();
  for (const id of ids) {
    const message = byId.get(id);
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

// --- live updates --------------------------------------------------------------------------

// Local echo, as Zulip's: your message shows at the end of the view the moment you send it (its
// text, not yet rendered), and the server's message takes its place when its event arrives.
const echoes = new Map(); // local id -> element

export function localEcho(localId, fake) {
  if (!matches(view, fake)) return;
  if (hi < messages.length || !foundNewest) {
    // The page holds older messages: show the end of the view first.
    lo = Math.max(0, messages.length - TAIL);
    hi = messages.length;
    if (!foundNewest) return; // the newest are not even fetched: the message will show when they are
    renderAll();
  }
  const el = h(
    "div.message.local-echo",
    { role: "article", "aria-label": `${model.userName(model.myId)}, sending`, dataset: { local: localId } },
    avatar(model.myId),
    h("div.body", h("div.meta", h("span.sender", model.userName(model.myId)), h("span.time", "sending…")), h("div.content.rendered", h("p", fake.content))),
  );
  const last = listEl.lastElementChild;
  if (last?.classList.contains("recipient-block") && last.dataset.key === conversationKey(fake)) last.append(el);
  else {
    listEl.querySelector(".empty")?.remove();
    listEl.append(h("div.recipient-block.local-echo-block", { dataset: { key: conversationKey(fake) } }, renderHeader(fake), el));
  }
  echoes.set(localId, el);
  scrollToEnd();
}

export function dropEcho(localId) {
  const el = echoes.get(localId);
  echoes.delete(localId);
  if (!el) return;
  const block = el.parentElement;
  el.remove();
  if (block?.classList.contains("local-echo-block") && !block.querySelector(".message")) block.remove();
}

export function addMessage(message, localId = null) {
  if (localId !== null) dropEcho(localId);
  if (arrivedWhileFetching !== null && matches(view, message)) {
    arrivedWhileFetching.push(message);
    return false;
  }
  if (!foundNewest || !matches(view, message) || byId.has(message.id)) return false;
  const mineSent = message.sender_id === model.myId;
  const atEnd = hi === messages.length;
  const stick = atEnd && (feedEl.scrollHeight - feedEl.scrollTop - feedEl.clientHeight < 80 || mineSent);
  messages.push(message);
  byId.set(message.id, message);
  if (atEnd) {
    appendWindow(messages.length);
    if (stick) trim("bottom");
    else keepPosition(() => trim("bottom"));
  } else if (mineSent) {
    // Your own message shows at once, even when the page holds older messages: jump to the end.
    lo = Math.max(0, messages.length - TAIL);
    hi = messages.length;
    renderAll();
  }
  if (stick || (mineSent && !atEnd)) scrollToEnd();
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
    const firstShown = messages[lo];
    messages = messages.filter((m) => view.kind !== "narrow" || matches(view, m) || !ids.includes(m.id));
    keepPosition(() => reframe(firstShown));
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
    const firstShown = messages.slice(lo).find((m) => byId.has(m.id));
    messages = messages.filter((m) => byId.has(m.id));
    keepPosition(() => reframe(firstShown));
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
      messageEl(id)?.classList.toggle("unread", event.op !== "add");
    } else rerender(id);
  }
}

// After messages left the list: the same window, from the first message still there.
function reframe(firstShown) {
  const count = hi - lo;
  const index = firstShown ? messages.indexOf(firstShown) : -1;
  lo = index >= 0 ? index : Math.max(0, messages.length - count);
  hi = Math.min(messages.length, lo + Math.max(count, 1));
  renderAll();
}

export function refreshAll() {
  keepPosition(renderAll);
}

// --- selection and actions -----------------------------------------------------------------

export function select(id, scroll = true) {
  listEl.querySelector(".message.selected")?.classList.remove("selected");
  selectedId = id;
  if (id === null) return;
  const index = messages.findIndex((m) => m.id === id);
  if (index >= 0 && (index < lo || index >= hi)) showIndex(index);
  const el = messageEl(id);
  ensureActions(el);
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
  messageEl(id)?.scrollIntoView({ block });
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
    item("Mark as unread", () => markUnreadFrom(message)),
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

// As Zulip: this message and the later ones of the view become unread, and stay so while the
// view is open (seeing them does not mark them read again).
export async function markUnreadFrom(message) {
  readingPaused = true;
  for (const id of [...readQueue]) if (id >= message.id) readQueue.delete(id);
  try {
    await api.post("messages/flags/narrow", {
      anchor: String(message.id), include_anchor: true, num_before: 0, num_after: 5000,
      narrow: apiNarrow(view), op: "remove", flag: "read",
    });
  } catch (error) {
    toast(error.message, "error");
  }
}

export const toggleStarOf = (message) => toggleStar(message);

// Keyboard entry points on the selected message: its element, edit, actions menu, reaction picker.
export const selectedElement = () => (selectedId === null ? null : messageEl(selectedId));
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
