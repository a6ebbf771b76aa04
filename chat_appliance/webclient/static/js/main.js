// Boot: the sign-in screen without a session; with one, register, lay out and follow events.
import * as admin from "./admin.js";
import * as api from "./api.js";
import * as compose from "./compose.js";
import { pollLoop, register, stopPolling } from "./events.js";
import { loadEmoji } from "./emoji.js";
import * as feed from "./feed.js";
import { model } from "./model.js";
import { parseHash, parseSearch, searchText, viewHash, viewTitle } from "./narrow.js";
import { forgetTopics, mountSidebars, noteDm, noteTopic, renderSidebars, renderUsers, setCurrentView } from "./sidebar.js";
import { clear, h, toast } from "./util.js";
// Views, view actions, status, notifications: modules of their own.
import { renderViewActions } from "./view_actions.js";
import { notificationsFor, playSound } from "./notify.js";

// Recent conversations and Drafts load when first shown (not on the way to the first message).
let recent = null;
const loadRecent = () => import("./recent.js").then((m) => (recent = m));

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
      h("button.icon", { type: "button", "aria-label": "Settings", title: "Settings", on: { click: () => openSettings() } }, "\u2699"),
      h("button.icon-text", { type: "button", on: { click: logout } }, "Log out"),
    ),
    h("div.layout", els.left, h("main.middle", h("div.view-head", els.title, els.viewHeader, els.viewActions), els.feed, els.compose), els.right),
  );
  mountSidebars(els.left, els.right, { onBrowseChannels: () => openSettings("channels"), onSetStatus: () => import("./status.js").then((m) => m.openStatusDialog()) });
  feed.mountFeed(els.feed, { reply: (message, quote) => compose.replyTo(message, quote) });
  compose.mountCompose(els.compose);
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
    const view = parseSearch(els.search.value);
    location.hash = viewHash(view);
  } catch (error) {
    toast(error.message, "error");
  }
}

let currentHash = null;

async function route(prefetched = null) {
  const view = parseHash(location.hash);
  if (view.kind === "inbox") return showInbox();
  if (view.kind === "recent" || view.kind === "drafts") return showListView(view);
  currentHash = location.hash;
  els.title.textContent = viewTitle(view);
  els.search.value = searchText(view);
  setCurrentView(view);
  compose.retarget(compose.targetForView(view));
  renderViewActions(els.viewActions, view);
  updateTitle();
  admin.onView(view);
  await feed.openView(view, prefetched && prefetched.hash === location.hash ? prefetched.request : null);
}

// Recent conversations and Drafts: views of their own in the feed's place.
function showListView(view) {
  currentHash = location.hash;
  feed.closeView();
  els.title.textContent = viewTitle(view);
  els.search.value = "";
  setCurrentView(view);
  renderViewActions(els.viewActions, view);
  admin.onView(view);
  updateTitle();
  const list = els.feed.querySelector(".message-list");
  if (view.kind === "recent") loadRecent().then((m) => m.showRecent(list, () => parseHash(location.hash).kind === "recent"));
  else import("./drafts_view.js").then((m) => m.showDrafts(list, { restore: (draft, href) => { location.hash = href; } }));
}

function showInbox() {
  const view = { kind: "inbox", ops: [] };
  feed.closeView();
  els.title.textContent = "Inbox";
  els.search.value = "";
  setCurrentView(view);
  admin.onView(view);
  renderViewActions(els.viewActions, view);
  const groups = new Map();
  for (const [key, conversation] of model.unreadTopics) {
    if (!conversation.dm && model.isTopicMuted(conversation.stream_id, conversation.topic)) continue;
    const n = model.unreadCount((k) => k === key);
    if (n) groups.set(key, { conversation, n });
  }
  const list = [...groups.values()].map(({ conversation, n }) => {
    const href = conversation.dm
      ? viewHash({ kind: "narrow", ops: [{ operator: "dm", operand: conversation.dm }] })
      : viewHash({ kind: "narrow", ops: [{ operator: "channel", operand: conversation.stream_id }, { operator: "topic", operand: conversation.topic }] });
    const label = conversation.dm ? conversation.dm.map((id) => model.userName(id)).join(", ") : `#${model.streamName(conversation.stream_id)} > ${conversation.topic}`;
    return h("li", h("a", { href }, h("span.name", label), h("span.unread-count", ` ${n}`)));
  });
  const feedList = els.feed.querySelector(".message-list");
  clear(feedList, list.length ? h("ul.inbox", list) : h("div.empty", "You have no unread messages."));
  updateTitle();
}

function updateTitle() {
  const unread = model.totalUnread();
  const view = parseHash(location.hash);
  if (view.kind !== "inbox") els.title.textContent = viewTitle(view); // a renamed channel or person
  document.title = `${unread ? `(${unread}) ` : ""}${viewTitle(view)} - ${model.state.realm_name}`;
}

// --- events --------------------------------------------------------------------------------

function notify(message) {
  const wanted = notificationsFor(message);
  if (wanted.sound) playSound();
  if (!wanted.desktop || !("Notification" in window) || Notification.permission !== "granted") return;
  if (document.visibilityState === "visible" && document.hasFocus()) return;
  const text = message.content.replace(/<[^>]*>/g, "").slice(0, 200);
  const title = message.type === "private" ? message.sender_full_name : `${message.sender_full_name} (#${message.display_recipient} > ${message.subject})`;
  const note = new Notification(title, { body: text, tag: String(message.id) });
  note.onclick = () => {
    window.focus();
    location.hash = viewHash({ kind: "narrow", ops: [{ operator: "near", operand: message.id }] });
  };
}

function handleEvent(event) {
  switch (event.type) {
    case "message": {
      const message = { ...event.message, flags: event.flags || [] };
      const conversation = model.conversationOf(message);
      if (!message.flags.includes("read") && message.sender_id !== model.myId) model.setUnread(message.id, conversation);
      if (message.flags.some((f) => /mentioned/.test(f))) model.mentions.add(message.id);
      if (conversation.dm) noteDm(conversation);
      else noteTopic(message.stream_id, message.subject, message.id);
      model.typing.get(model.conversationKey(conversation))?.delete(message.sender_id);
      feed.addMessage(message, event.local_message_id ?? null);
      recent?.noteMessage(message); // (before it loads, its first fetch includes this message)
      notify(message);
      compose.showTyping();
      break;
    }
    case "update_message":
      if (event.rendered_content === undefined && event.subject === undefined && event.new_stream_id === undefined) break;
      if (event.subject !== undefined || event.new_stream_id !== undefined) {
        for (const id of event.message_ids || []) {
          if (model.unread.has(id)) model.setUnread(id, { stream_id: event.new_stream_id ?? event.stream_id, topic: event.subject ?? event.orig_subject });
        }
        forgetTopics(event.stream_id);
        if (event.new_stream_id) forgetTopics(event.new_stream_id);
      }
      feed.updateMessage(event);
      break;
    case "delete_message": {
      const ids = event.message_ids || [event.message_id];
      model.markRead(ids);
      feed.deleteMessages(ids);
      break;
    }
    case "reaction":
      feed.reactionEvent(event);
      break;
    case "submessage":
      feed.submessageEvent(event);
      break;
    case "update_message_flags":
      if (event.flag === "read") {
        if (event.op === "add") model.markRead(event.all ? [...model.unread.keys()] : event.messages);
        else for (const id of event.messages) {
          const d = event.message_details?.[id];
          if (d) model.setUnread(id, d.type === "stream" ? { stream_id: d.stream_id, topic: d.topic } : { dm: d.user_ids?.length ? d.user_ids : [model.myId] });
        }
      }
      feed.flagsEvent(event);
      break;
    case "typing": {
      const conversation = event.message_type === "stream"
        ? { stream_id: event.stream_id, topic: event.topic }
        : { dm: event.recipients.map((r) => r.user_id).filter((id) => id !== model.myId) };
      const key = model.conversationKey(conversation.dm && !conversation.dm.length ? { dm: [model.myId] } : conversation);
      if (!model.typing.has(key)) model.typing.set(key, new Map());
      if (event.op === "start") model.typing.get(key).set(event.sender.user_id, Date.now() + 15000);
      else model.typing.get(key).delete(event.sender.user_id);
      compose.showTyping();
      break;
    }
    case "subscription":
      if (event.op === "add") for (const sub of event.subscriptions) {
        model.subs.set(sub.stream_id, sub);
        model.streams.set(sub.stream_id, { ...model.streams.get(sub.stream_id), ...sub });
      }
      else if (event.op === "remove") for (const sub of event.subscriptions) model.subs.delete(sub.stream_id);
      else if (event.op === "update") {
        const sub = model.subs.get(event.stream_id);
        if (sub) sub[event.property === "in_home_view" ? "is_muted" : event.property] = event.property === "in_home_view" ? !event.value : event.value;
      }
      compose.fillChannels();
      break;
    case "stream":
      if (event.op === "create") for (const s of event.streams) model.streams.set(s.stream_id, s);
      else if (event.op === "delete") for (const s of event.streams) {
        model.streams.delete(s.stream_id);
        model.subs.delete(s.stream_id);
      }
      else if (event.op === "update") {
        for (const map of [model.streams, model.subs]) {
          const s = map.get(event.stream_id);
          if (s) s[event.property] = event.value;
        }
      }
      compose.fillChannels();
      break;
    case "realm_user":
      if (event.op === "add") model.users.set(event.person.user_id, event.person);
      else if (event.op === "update") {
        const user = model.users.get(event.person.user_id);
        if (user) Object.assign(user, event.person);
        if (user && event.person.role !== undefined) Object.assign(user, { is_admin: event.person.role <= 200, is_owner: event.person.role === 100 });
        feed.refreshAll();
      } else if (event.op === "remove") {
        const user = model.users.get(event.person.user_id);
        if (user) user.is_active = false;
      }
      break;
    case "presence": {
      const previous = model.presence.get(event.user_id) || {};
      const stamp = event.server_timestamp;
      model.presence.set(event.user_id, { ...previous, active_timestamp: stamp, idle_timestamp: stamp });
      renderUsers();
      return;
    }
    case "drafts":
      if (event.op === "add") for (const d of event.drafts) model.drafts.set(d.id, d);
      else if (event.op === "update") model.drafts.set(event.draft.id, event.draft);
      else if (event.op === "remove") model.drafts.delete(event.draft_id);
      compose.onDraftsReloaded();
      if (parseHash(location.hash).kind === "drafts") showListView(parseHash(location.hash));
      return;
    case "user_settings":
      if (event.op === "update") (model.state.user_settings ||= {})[event.property] = event.value;
      return;
    case "realm_bot": {
      const bots = (model.state.realm_bots ||= []);
      const index = bots.findIndex((b) => b.user_id === (event.bot?.user_id ?? event.bot_id));
      if (event.op === "add" && index < 0) bots.push(event.bot);
      else if (event.op === "update" && index >= 0) Object.assign(bots[index], event.bot);
      else if ((event.op === "remove" || event.op === "delete") && index >= 0) bots.splice(index, 1);
      return;
    }
    case "realm":
      if (event.op === "update") model.state[`realm_${event.property}`] = event.value;
      else if (event.op === "update_dict") for (const [k, v] of Object.entries(event.data)) model.state[`realm_${k}`] = v;
      break;
    case "user_topic":
      model.setTopicPolicy(event.stream_id, event.topic_name, event.visibility_policy);
      break;
    case "user_status": {
      const { type, id, user_id: userId, ...status } = event;
      model.statuses.set(userId, { ...(model.statuses.get(userId) || {}), ...status });
      break;
    }
    default:
      return;
  }
  renderSidebars();
  updateTitle();
  const shown = parseHash(location.hash);
  if (shown.kind === "inbox") showInbox();
  else if (shown.kind === "recent") recent?.refreshRecent();
  else if (shown.kind === "drafts" && event.type === "drafts") showListView(shown);
  else if (event.type === "user_topic" || event.type === "subscription") renderViewActions(els.viewActions, shown);
}

function onReset(state) {
  // A new queue: reload the state and the feed. The compose box (text, recipients) stays.
  model.load(state);
  compose.onDraftsReloaded();
  compose.fillChannels();
  renderSidebars();
  const view = parseHash(location.hash);
  if (view.kind === "inbox") showInbox();
  else if (view.kind === "recent" || view.kind === "drafts") showListView(view);
  else feed.openView(view);
  updateTitle();
}

// The direct-message conversations of the sidebar: the latest ones, newest first.
async function loadRecentDms() {
  try {
    const { messages } = await api.get("messages", {
      anchor: "newest", num_before: 200, num_after: 0, apply_markdown: false, client_gravatar: true,
      narrow: [{ operator: "is", operand: "dm" }],
    });
    for (const message of messages.reverse()) noteDm(model.conversationOf(message));
    renderSidebars();
  } catch {
    /* the sidebar still lists unread conversations */
  }
}

async function reportPresence() {
  try {
    const data = await api.post("users/me/presence", { status: document.hidden ? "idle" : "active", slim_presence: true, new_user_input: !document.hidden });
    for (const [id, info] of Object.entries(data.presences || {})) model.presence.set(Number(id), info);
    renderUsers();
  } catch {
    /* next time */
  }
}

async function start() {
  // The email-change link works signed in or not: the person changing their address usually is.
  const confirm = /^\/accounts\/confirm_new_email\/([^/]+)\/?$/.exec(location.pathname);
  if (!api.csrfToken() || confirm) {
    const join = /^\/join\/([^/]+)\/?$/.exec(location.pathname);
    const reset = /^\/accounts\/password\/reset(?:\/([^/]+))?\/?$/.exec(location.pathname);
    root.removeAttribute("aria-busy");
    const { showJoin, showLogin, showResetRequest, showNewPassword, showConfirmEmail } = await import("./login.js");
    if (join) showJoin(root, decodeURIComponent(join[1]));
    else if (confirm) showConfirmEmail(root, decodeURIComponent(confirm[1]));
    else if (reset && reset[1]) showNewPassword(root, decodeURIComponent(reset[1]));
    else if (reset) showResetRequest(root);
    else showLogin(root);
    return;
  }
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
  layout();
  admin.install(els.viewHeader);
  root.removeAttribute("aria-busy");
  window.addEventListener("hashchange", () => {
    if (location.hash !== currentHash || parseHash(location.hash).kind === "inbox") route();
  });
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
  pollLoop((event) => {
    handleEvent(event);
    admin.onEvent(event);
  }, onReset, () => location.replace("/"));
  reportPresence();
  setInterval(reportPresence, 60000);
  setInterval(() => compose.showTyping(), 3000);
}

start();
