// Boot and layout: the sign-in screen without a session; with one, register, lay the page out,
// route to the first view and follow events. Views, stores and the dispatcher are modules of
// their own (views.js, stores/, dispatch.js).
import * as admin from "./admin.js";
import * as api from "./api.js";
import * as compose from "./compose.js";
import { dispatch } from "./dispatch.js";
import { pollLoop, register, releaseQueueOnLeave, stopPolling } from "./events.js";
import { loadEmoji } from "./emoji.js";
import * as feed from "./feed.js";
import { followChanges, loadRecentDms, reportPresence } from "./follow.js";
import { model } from "./model.js";
import { parseSearch, viewHash } from "./narrow.js";
import { mountRouter, resetView, route } from "./router.js";
import { mountSidebars, renderSidebars } from "./sidebar.js";
import { attachSearchSuggestions } from "./search_suggest.js";
import { applyTheme } from "./theme.js";
import { clear, h, toast } from "./util.js";

// Loaded when needed: neither is on the way to the first message.
const openSettings = (section) => import("./settings.js").then((m) => m.openSettings(section));

const root = document.getElementById("app");
const els = {};

function layout() {
  els.search = h("input.search", { type: "text", "aria-label": "Search", placeholder: "Search", autocomplete: "off", enterkeyhint: "search" });
  els.searchForm = h("form.search-form", { role: "search", on: { submit: onSearch } }, els.search);
  els.left = h("div.left-sidebar#left-sidebar");
  els.right = h("aside.right-sidebar", { "aria-label": "Users" });
  els.title = h("h1.view-title");
  els.viewHeader = h("div.view-header"); // the channel's description and settings (admin.js)
  els.viewActions = h("div.view-actions");
  els.feed = h("div.feed", { tabindex: "-1" });
  els.compose = h("div.compose-area");
  els.usersButton = h("button.icon.users-toggle", { type: "button", "aria-label": "Show users", "aria-expanded": "false", on: { click: () => toggleRight() } }, "\u{1F465}");
  els.menuButton = h("button.icon.menu-toggle", { type: "button", "aria-label": "Show channels", "aria-expanded": "false", "aria-controls": "left-sidebar", on: { click: () => toggleLeft() } }, "\u2630");
  clear(
    root,
    h(
      "header.topbar",
      els.menuButton,
      h("a.realm-name", { href: "#feed" }, model.state.realm_name),
      els.searchForm,
      els.usersButton,
      h("button.icon.text-icon", { type: "button", "aria-label": "Settings", title: "Settings", on: { click: () => openSettings() } }, "\u2699"),
      h("button.icon-text", { type: "button", on: { click: logout } }, "Log out"),
    ),
    h("div.layout", els.left, h("main.middle", h("div.view-head", els.title, els.viewHeader, els.viewActions), els.feed, els.compose), els.right),
  );
  mountSidebars(els.left, els.right, { onBrowseChannels: () => openSettings("channels"), onSetStatus: () => import("./status.js").then((m) => m.openStatusDialog()) });
  feed.mountFeed(els.feed, { reply: (message, quote) => compose.replyTo(message, quote) });
  compose.mountCompose(els.compose);
  mountRouter(els);
  attachSearchSuggestions(els.search, () => els.searchForm.requestSubmit());
  els.feed.parentElement.addEventListener("pointerdown", () => { toggleLeft(false); toggleRight(false); });
  els.right.addEventListener("click", (event) => {
    if (event.target.closest("a")) toggleRight(false);
  });
  els.left.addEventListener("click", (event) => {
    if (event.target.closest("a")) toggleLeft(false);
  });
}

function toggleLeft(open) {
  const show = open ?? !root.classList.contains("left-open");
  root.classList.toggle("left-open", show);
  els.menuButton.setAttribute("aria-expanded", String(show));
}

// On a phone the user list is a drawer from the right, behind the "Show users" button.
function toggleRight(open) {
  const show = open ?? !root.classList.contains("right-open");
  root.classList.toggle("right-open", show);
  els.usersButton.setAttribute("aria-expanded", String(show));
}

async function logout() {
  compose.flushDraft();
  stopPolling();
  await feed.stopReading();
  try {
    await api.post("/accounts/logout");
  } finally {
    location.replace("/");
  }
}

function onSearch(event) {
  event.preventDefault();
  try {
    location.hash = viewHash(parseSearch(els.search.value));
  } catch (error) {
    toast(error.message, "error");
  }
}

function onReset(state) {
  // A new queue: reload the state and the view. The compose box (text, recipients) stays.
  model.load(state);
  applyTheme();
  compose.onDraftsReloaded();
  compose.fillChannels();
  renderSidebars();
  resetView();
}

// Without a session: the sign-in page, or the page a link from an email opens.
async function signedOut() {
  const confirm = /^\/accounts\/confirm_new_email\/([^/]+)\/?$/.exec(location.pathname);
  const join = /^\/join\/([^/]+)\/?$/.exec(location.pathname);
  const reset = /^\/accounts\/password\/reset(?:\/([^/]+))?\/?$/.exec(location.pathname);
  root.removeAttribute("aria-busy");
  const { showJoin, showLogin, showResetRequest, showNewPassword, showConfirmEmail } = await import("./login.js");
  if (join) showJoin(root, decodeURIComponent(join[1]));
  else if (confirm) showConfirmEmail(root, decodeURIComponent(confirm[1]));
  else if (reset && reset[1]) showNewPassword(root, decodeURIComponent(reset[1]));
  else if (reset) showResetRequest(root);
  else showLogin(root);
}

async function start() {
  // The email-change link works signed in or not: the person changing their address usually is.
  if (!api.csrfToken() || /^\/accounts\/confirm_new_email\//.test(location.pathname)) return signedOut();
  // boot.js asked for the first view's messages beside /register, before the modules loaded.
  let prefetched = null;
  const boot = window.chatBoot;
  if (boot && boot.messages) {
    prefetched = {
      hash: boot.hash,
      request: boot.messages.then(({ status, body }) => {
        if (status === 200 && body.result === "success") return body;
        throw new api.ApiError(status, body);
      }),
    };
    prefetched.request.catch(() => {});
  }
  let state;
  try {
    state = await register();
  } catch (error) {
    if (error.status === 401) {
      location.replace("/");
      return;
    }
    clear(root, h("p.error", { role: "alert" }, `Cannot reach the server: ${error.message}`));
    return;
  }
  if (location.pathname !== "/") history.replaceState(null, "", `/${location.hash}`);
  model.load(state);
  applyTheme();
  layout();
  admin.install(els.viewHeader);
  followChanges();
  root.removeAttribute("aria-busy");
  window.addEventListener("beforeunload", () => compose.flushDraft());
  await route(prefetched);
  // The keyboard shortcuts load once the first view is up (not on the way to it).
  // body[data-shortcuts] says they answer (the browser tests wait for it before pressing keys).
  import("./keys.js").then((m) => {
    m.installShortcuts({ search: els.search });
    document.body.dataset.shortcuts = "ready";
  });
  if (prefetched) feed.catchUp(state.max_message_id).catch(() => {});
  // Reactions and autocomplete need the emoji names; fetch them once the first view is shown.
  setTimeout(loadEmoji, 500);
  loadRecentDms();
  pollLoop(dispatch, onReset, () => location.replace("/"));
  releaseQueueOnLeave();
  reportPresence();
  setInterval(reportPresence, 60000);
  setInterval(() => compose.showTyping(), 3000);
}

start();
