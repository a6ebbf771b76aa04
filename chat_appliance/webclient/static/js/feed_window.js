// The message window of the current view: fetch with anchors, page older and newer, keep the page
// to WINDOW messages (trim), select.
import * as api from "./api.js";
import { apiNarrow, nearId, shownIn } from "./narrow.js";
import { clear, h, toast } from "./util.js";
import { FETCH, PAGE, S, WINDOW, messageEl } from "./feed_state.js";
import { ensureActions, renderAll, renderRun, rerender } from "./feed_draw.js";
import { flushRead, onVisible } from "./feed_read.js";
import { addMessage } from "./feed_live.js";

export const currentView = () => S.view;
export const selectedMessage = () => S.byId.get(S.selectedId) || null;
export const messageById = (id) => S.byId.get(id);
export const isAtNewest = () => S.foundNewest;

export function mountFeed(element, callbacks) {
  S.feedEl = element;
  S.hooks = callbacks;
  S.listEl = h("div.message-list", { "aria-live": "off" });
  S.feedEl.append(S.listEl);
  const wantActions = (event) => ensureActions(event.target.closest?.(".message"));
  S.listEl.addEventListener("pointerover", wantActions);
  S.listEl.addEventListener("focusin", wantActions);
  S.feedEl.addEventListener("scroll", onScroll, { passive: true });
  new ResizeObserver(() => {
    if (S.stuckToEnd) jumpToEnd();
  }).observe(S.listEl);
  // The feed itself gets shorter when the compose box grows with its text: if its end was in view
  // just before, keep it there, as the latest messages stay in sight while you write a long reply.
  new ResizeObserver(() => {
    const before = S.feedHeight;
    S.feedHeight = S.feedEl.clientHeight;
    const wasAtEnd = S.feedEl.scrollHeight - S.feedEl.scrollTop - before < 2;
    if (S.stuckToEnd || (S.feedHeight < before && wasAtEnd)) jumpToEnd();
  }).observe(S.feedEl);
  S.observer = new IntersectionObserver(onVisible, { root: S.feedEl, threshold: 0.5 });
  S.readTimer = setInterval(flushRead, 700);
  window.addEventListener("focus", () => {
    for (const el of S.listEl.querySelectorAll(".message.unread")) S.observer.unobserve(el), S.observer.observe(el);
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
  S.view = newView;
  S.readingPaused = false;
  S.stuckToEnd = false;
  S.fetched = 0;
  S.listEl.classList.remove("windowed");
  const mine = ++S.generation;
  S.messages = [];
  S.byId.clear();
  S.selectedId = null;
  S.foundOldest = S.foundNewest = false;
  clear(S.listEl, h("div.loading", "Loading messages\u2026"));
  const near = nearId(S.view);
  const arrived = (S.arrivedWhileFetching = []);
  let data;
  try {
    data = await (prefetched || api.get("messages", openingParams(S.view)));
  } catch (error) {
    if (mine === S.generation) {
      S.arrivedWhileFetching = null;
      clear(S.listEl, h("div.empty", `Could not load messages: ${error.message}`));
    }
    return;
  }
  if (mine !== S.generation) return;
  S.arrivedWhileFetching = null;
  S.foundOldest = data.found_oldest;
  S.foundNewest = data.found_newest;
  // Paging anchors on what the server answered, shown or not (a channel's view leaves its muted
  // topics out: a page of them alone must not be fetched again and again).
  S.edges = { oldest: data.messages[0]?.id, newest: data.messages[data.messages.length - 1]?.id };
  S.messages = shownIn(S.view, data.messages);
  for (const message of S.messages) S.byId.set(message.id, message);
  if (S.foundNewest) S.messages = withArrived(S.messages, arrived);
  S.lo = 0;
  S.hi = S.messages.length;
  renderAll();
  const firstUnread = S.messages.find((m) => !(m.flags || []).includes("read"));
  if (near && S.byId.has(near)) scrollToMessage(near, "center");
  else if (firstUnread) scrollToMessage(firstUnread.id, "start");
  else S.feedEl.scrollTop = S.feedEl.scrollHeight;
  select(near && S.byId.has(near) ? near : firstUnread ? firstUnread.id : S.messages.length ? S.messages[S.messages.length - 1].id : null, false);
}

// `list` (fetched, reaching the view's newest message) with the messages that arrived while it
// was fetched and are not in it: they are newer. In id order; each noted in byId.
export function withArrived(list, arrived) {
  const added = arrived.filter((message) => !S.byId.has(message.id));
  if (!added.length) return list;
  for (const message of added) S.byId.set(message.id, message);
  return [...list, ...added].sort((a, b) => a.id - b.id);
}

// Append messages[hi..upTo) to the page.
export function appendWindow(upTo) {
  if (upTo <= S.hi) return;
  S.listEl.querySelector(".empty")?.remove();
  const { lead, blocks } = renderRun(S.messages.slice(S.hi, upTo), S.hi > S.lo ? S.messages[S.hi - 1] : null);
  S.listEl.lastElementChild?.append(...lead);
  S.listEl.append(...blocks);
  S.hi = upTo;
}

// Prepend messages[from..lo) to the page, joining the first block when the conversation continues.
export function prependWindow(from) {
  if (from >= S.lo) return;
  const { blocks } = renderRun(S.messages.slice(from, S.lo), null);
  const first = S.listEl.querySelector(".recipient-block");
  const last = blocks[blocks.length - 1];
  if (first && last && last.dataset.key === first.dataset.key) {
    const moved = [...last.querySelectorAll(":scope > .message")];
    first.querySelector(".recipient-header").after(...moved);
    blocks.pop();
  }
  S.listEl.querySelector(".empty")?.remove();
  S.listEl.prepend(...blocks);
  const oldFirst = S.messages[S.lo];
  S.lo = from;
  if (oldFirst) rerender(oldFirst.id); // it may now continue the message before it
}

// Drop messages from the far end until the page holds at most WINDOW.
export function trim(keepEnd) {
  while (S.hi - S.lo > WINDOW) {
    const id = keepEnd === "top" ? S.messages[--S.hi].id : S.messages[S.lo++].id;
    const el = messageEl(id);
    if (!el) continue;
    S.observer.unobserve(el);
    const block = el.parentElement;
    el.remove();
    if (!block.querySelector(".message")) block.remove();
  }
  if (keepEnd !== "top" && S.messages[S.lo]) rerender(S.messages[S.lo].id);
}

// Keep the same content under the eyes while the page above it changes. The message at the top
// may be drawn again meanwhile (the old first one, now continuing the message before it): then
// its new element holds the place. Losing it left the feed at the top, where the next scroll
// check fetched another page, and so on through the whole history.
export function keepPosition(change) {
  const top = S.feedEl.getBoundingClientRect().top;
  const anchor = [...S.listEl.querySelectorAll(".message")].find((el) => el.getBoundingClientRect().bottom > top);
  const before = anchor ? anchor.getBoundingClientRect().top : 0;
  change();
  const now = anchor && (anchor.isConnected ? anchor : messageEl(anchor.dataset.id));
  if (now) S.feedEl.scrollTop += now.getBoundingClientRect().top - before;
}

// Show a message that is fetched but outside the page: the window around it.
export function showIndex(index) {
  S.lo = Math.max(0, index - Math.floor(WINDOW / 2));
  S.hi = Math.min(S.messages.length, S.lo + WINDOW);
  renderAll();
}

// --- paging ------------------------------------------------------------------------------

// Where we scroll, we note where we left the view: several scrolls in one frame make one event.
export function jumpToEnd() {
  S.feedEl.scrollTop = S.feedEl.scrollHeight;
  S.lastScrollTop = S.feedEl.scrollTop;
}

export function scrollToEnd() {
  jumpToEnd();
  S.stuckToEnd = S.hi === S.messages.length && S.foundNewest;
}

export function onScroll() {
  const up = S.feedEl.scrollTop < S.lastScrollTop;
  S.lastScrollTop = S.feedEl.scrollTop;
  if (S.stuckToEnd && up && S.feedEl.scrollHeight - S.feedEl.scrollTop - S.feedEl.clientHeight >= 80) S.stuckToEnd = false;
  if (S.feedEl.scrollTop < 400) loadOlder();
  if (S.feedEl.scrollHeight - S.feedEl.scrollTop - S.feedEl.clientHeight < 400) loadNewer();
}

export async function loadOlder() {
  if (S.loadingOlder || !S.messages.length) return;
  S.listEl.classList.add("windowed");
  if (S.lo > 0) {
    keepPosition(() => {
      prependWindow(Math.max(0, S.lo - FETCH));
      trim("top");
    });
    return;
  }
  if (S.foundOldest) return;
  S.loadingOlder = true;
  const mine = S.generation;
  try {
    const data = await api.get("messages", {
      anchor: String(S.edges?.oldest ?? S.messages[0].id), num_before: S.fetched++ ? FETCH : PAGE, num_after: 0, include_anchor: false,
      narrow: apiNarrow(S.view), apply_markdown: true, client_gravatar: true,
    });
    if (mine !== S.generation) return;
    S.foundOldest = data.found_oldest;
    if (data.messages.length && S.edges) S.edges.oldest = data.messages[0].id;
    const older = shownIn(S.view, data.messages).filter((m) => !S.byId.has(m.id));
    if (older.length) {
      for (const m of older) S.byId.set(m.id, m);
      S.messages = [...older, ...S.messages];
      S.lo += older.length;
      S.hi += older.length;
      keepPosition(() => {
        prependWindow(0);
        trim("top");
      });
    }
  } catch (error) {
    toast(`Could not load older messages: ${error.message}`, "error");
  } finally {
    S.loadingOlder = false;
  }
  if (mine === S.generation && S.feedEl.scrollTop < 400) loadOlder();
}

export async function loadNewer() {
  if (S.loadingOlder || !S.messages.length) return;
  S.listEl.classList.add("windowed");
  if (S.hi < S.messages.length) {
    keepPosition(() => {
      appendWindow(Math.min(S.messages.length, S.hi + FETCH));
      trim("bottom");
    });
    return;
  }
  if (S.foundNewest) return;
  S.loadingOlder = true;
  const mine = S.generation;
  const arrived = (S.arrivedWhileFetching = []);
  try {
    const data = await api.get("messages", {
      anchor: String(S.edges?.newest ?? S.messages[S.messages.length - 1].id), num_before: 0, num_after: S.fetched++ ? FETCH : PAGE, include_anchor: false,
      narrow: apiNarrow(S.view), apply_markdown: true, client_gravatar: true,
    });
    if (mine !== S.generation) return;
    S.arrivedWhileFetching = null;
    S.foundNewest = data.found_newest;
    if (data.messages.length && S.edges) S.edges.newest = data.messages[data.messages.length - 1].id;
    let newer = shownIn(S.view, data.messages).filter((m) => !S.byId.has(m.id));
    for (const m of newer) S.byId.set(m.id, m);
    if (S.foundNewest) newer = withArrived(newer, arrived);
    if (newer.length) {
      S.messages = [...S.messages, ...newer];
      keepPosition(() => {
        appendWindow(S.messages.length);
        trim("bottom");
      });
    }
  } catch (error) {
    if (mine === S.generation) S.arrivedWhileFetching = null;
    toast(`Could not load newer messages: ${error.message}`, "error");
  } finally {
    S.loadingOlder = false;
  }
}

// Messages fetched before the event queue existed can miss what arrived in between: fetch past
// the newest shown when the server's newest id is beyond it.
export async function catchUp(maxMessageId) {
  const newest = S.messages.length ? S.messages[S.messages.length - 1].id : 0;
  if (!S.foundNewest || maxMessageId <= newest) return;
  const mine = S.generation;
  const data = await api.get("messages", {
    anchor: String(newest), num_before: 0, num_after: PAGE, include_anchor: false,
    narrow: apiNarrow(S.view), apply_markdown: true, client_gravatar: true,
  });
  if (mine !== S.generation) return;
  S.foundNewest = data.found_newest;
  for (const message of data.messages) {
    S.foundNewest = true; // addMessage appends only at the newest end
    addMessage(message);
  }
  S.foundNewest = data.found_newest;
}

// --- closing -------------------------------------------------------------------------------

// Another view (Inbox, Recent conversations, Drafts) takes the list's place: no live messages here.
export function closeView() {
  S.view = { kind: "inbox", ops: [] };
  S.stuckToEnd = false;
  S.generation += 1;
  S.arrivedWhileFetching = null;
  S.messages = [];
  S.byId.clear();
  S.lo = S.hi = 0;
  S.selectedId = null;
}

// After messages left the list: the same window, from the first message still there.
export function reframe(firstShown) {
  const count = S.hi - S.lo;
  const index = firstShown ? S.messages.indexOf(firstShown) : -1;
  S.lo = index >= 0 ? index : Math.max(0, S.messages.length - count);
  S.hi = Math.min(S.messages.length, S.lo + Math.max(count, 1));
  renderAll();
}

export function refreshAll() {
  keepPosition(renderAll);
}

// --- selection and actions -----------------------------------------------------------------

export function select(id, scroll = true) {
  S.listEl.querySelector(".message.selected")?.classList.remove("selected");
  S.selectedId = id;
  if (id === null) return;
  const index = S.messages.findIndex((m) => m.id === id);
  if (index >= 0 && (index < S.lo || index >= S.hi)) showIndex(index);
  const el = messageEl(id);
  ensureActions(el);
  if (el) {
    el.classList.add("selected");
    if (scroll) el.scrollIntoView({ block: "nearest" });
  }
}

export function moveSelection(delta) {
  if (!S.messages.length) return;
  let index = S.messages.findIndex((m) => m.id === S.selectedId);
  index = index < 0 ? S.messages.length - 1 : Math.max(0, Math.min(S.messages.length - 1, index + delta));
  select(S.messages[index].id);
}

export function scrollToMessage(id, block) {
  messageEl(id)?.scrollIntoView({ block });
}
