// The feed's shared state: the current view's messages, the page's window over them, and the
// selection. The feed_* modules read and change it through S.
import { model } from "./model.js";

export const PAGE = 50;
export const FETCH = 400;
export const WINDOW = 600;
export const TAIL = 60;
export const S = {
  view: { kind: "feed", ops: [] },
  messages: [], // sorted by id: everything fetched for this view
  fetched: 0, // pages fetched beyond the first: the first one is small, the next ones FETCH
  lo: 0, // messages[lo..hi) are in the page
  hi: 0,
  byId: new Map(),
  foundOldest: false,
  foundNewest: false,
  loadingOlder: false,
  generation: 0,
  edges: null, // {oldest, newest}: the ids the server's pages reached, the paging anchors
  // Messages of the view that arrived (their events) while a fetch that may reach its newest
  // message was under way (opening it, or loading newer messages): the fetch's answer may have
  // been made before they existed. Null when no such fetch is pending.
  arrivedWhileFetching: null,
  selectedId: null,
  // At the end of the view and meant to stay there: scrolled to the end for a message that just
  // came in (yours, or any while you were at the end). A windowed page lays each block out at a
  // placeholder height until it is first drawn (content-visibility: auto, app.css), so a block
  // drawn just after a jump to the end grows, and the end it showed moves out of view. While
  // stuck, every change of the list's size (a ResizeObserver, after layout) scrolls to the end
  // again; scrolling up, away from the end, unsticks. Only a scroll up counts: growth above the
  // end leaves scrollTop where it was, and its scroll event may come before the observer's call.
  stuckToEnd: false,
  lastScrollTop: 0,
  feedHeight: 0, // the feed's height when last observed (its ResizeObserver)
  feedEl: null,
  listEl: null,
  observer: null,
  readQueue: new Set(),
  readTimer: null,
  readingPaused: false, // after "Mark as unread", until the next view: no marking read on sight
  revealed: new Set(), // ids of muted senders' messages shown anyway ("Show message")
  hooks: { reply: () => {}, edit: () => {} },
};

export const continues = (prev, message) =>
  Boolean(prev) && conversationKey(prev) === conversationKey(message) && prev.sender_id === message.sender_id && message.timestamp - prev.timestamp < 300;

export const messageEl = (id) => S.listEl.querySelector(`.message[data-id="${id}"]`);

export const conversationKey = (message) => model.conversationKey(model.conversationOf(message));
