// Left: views, channels with unread counts, topics of the selected channel, direct messages.
// Right: users with presence.
import * as api from "./api.js";
import { avatar } from "./feed.js";
import { model } from "./model.js";
import { channelView, dmView, opOf, viewHash } from "./narrow.js";
import { clear, emojiGlyph, h } from "./util.js";

let els = {};
let current = { kind: "feed", ops: [] };
const topicsCache = new Map(); // stream id -> [{name, max_id}]

export function mountSidebars(left, right, { onBrowseChannels, onSetStatus }) {
  // Landmarks: every heading and control of the sidebars sits inside one.
  left.setAttribute("role", "region");
  left.setAttribute("aria-label", "Sidebar");
  els.channelFilter = h("input.sidebar-filter", { type: "search", "aria-label": "Filter channels", placeholder: "Filter channels", on: { input: () => renderSidebars(), keydown: filterKeys } });
  els.peopleFilter = h("input.sidebar-filter", { type: "search", "aria-label": "Search people", placeholder: "Search people", on: { input: () => renderUsers(), keydown: filterKeys } });
  els.views = h("nav.views", { "aria-label": "Views" });
  els.channels = h("nav.channels", { "aria-label": "Channels" });
  els.topics = h("nav.topics", { "aria-label": "Topics" });
  els.dms = h("nav.dms", { "aria-label": "Direct messages" });
  clear(
    left,
    els.views,
    h("div.section-head", h("h2", "Channels"), h("button.icon", { type: "button", title: "Browse and create channels", "aria-label": "Browse channels", on: { click: onBrowseChannels } }, "+")),
    els.channelFilter,
    els.channels,
    els.topics,
    h("div.section-head", h("h2", "Direct messages")),
    els.dms,
  );
  els.users = h("ul.user-list");
  els.myStatus = h("button.icon-text.set-status", { type: "button", on: { click: onSetStatus } }, "Set status");
  clear(right, h("div.section-head", h("h2", "Users"), els.myStatus), els.peopleFilter, els.users);
}

const count = (n) => (n ? h("span.unread-count", { "aria-label": `${n} unread` }, ` ${n}`) : null);

function link(href, active, ...children) {
  return h("a", { href, "aria-current": active ? "page" : null, class: active ? "active" : "" }, ...children);
}

export function setCurrentView(view) {
  current = view;
  renderSidebars();
}

export function renderSidebars() {
  if (!els.views) return;
  const hash = viewHash(current);
  const mentionCount = model.unreadCount() && [...model.unread.keys()].filter((id) => model.mentions?.has(id)).length;
  clear(
    els.views,
    h(
      "ul",
      h("li", link("#inbox", hash === "#inbox", h("span.name", "Inbox"), count(model.totalUnread()))),
      h("li", link("#recent", hash === "#recent", h("span.name", "Recent conversations"))),
      h("li", link("#feed", hash === "#feed", h("span.name", "Combined feed"))),
      h("li", link("#narrow/is/starred", hash === "#narrow/is/starred", h("span.name", "Starred messages"))),
      h("li", link("#narrow/is/mentioned", hash === "#narrow/is/mentioned", h("span.name", "Mentions"), count(mentionCount))),
      h("li", link("#drafts", hash === "#drafts", h("span.name", "Drafts"))),
      h("li", link("#scheduled", hash === "#scheduled", h("span.name", "Scheduled messages"), count(model.scheduled.size))),
    ),
  );
  const filter = els.channelFilter.value.trim().toLowerCase();
  const channel = opOf(current, "channel");
  const topic = opOf(current, "topic");
  const item = (sub) => {
    const active = channel && channel.operand === sub.stream_id;
    return h(
      "li",
      { style: `--channel-color: ${sub.color || "#888"}`, class: sub.is_muted ? "muted" : "" },
      link(viewHash(channelView(sub.stream_id)), active && !topic, sub.name, count(model.unreadInStream(sub.stream_id))),
    );
  };
  const shown = model.sortedSubs().filter((sub) => !filter || sub.name.toLowerCase().includes(filter));
  const pinned = shown.filter((sub) => sub.pin_to_top);
  // Pinned channels stand in a group of their own above the others, as in Zulip.
  clear(
    els.channels,
    pinned.length ? h("ul.pinned", { "aria-label": "Pinned channels" }, pinned.map(item)) : null,
    h("ul", shown.filter((sub) => !sub.pin_to_top).map(item)),
  );
  renderTopics(channel ? channel.operand : null, topic ? topic.operand : null);
  renderDms();
  renderUsers();
}

async function renderTopics(streamId, activeTopic) {
  if (streamId === null || !model.subs.has(streamId)) {
    els.topics.hidden = true;
    return;
  }
  els.topics.hidden = false;
  els.topics.setAttribute("aria-label", `Topics in #${model.streamName(streamId)}`);
  const draw = (topics) =>
    clear(
      els.topics,
      h(
        "ul",
        topics.slice(0, 15).map((t) =>
          h("li", { class: model.isTopicMuted(streamId, t.name) ? "muted" : model.policyOf(streamId, t.name) === 3 ? "followed" : "" },
            link(viewHash(channelView(streamId, t.name)), activeTopic !== null && activeTopic.toLowerCase() === t.name.toLowerCase(), h("span.name", t.name || "(no topic)"),
              model.isTopicMuted(streamId, t.name) ? h("span.detail", " (muted)") : count(model.unreadInTopic(streamId, t.name)))),
        ),
      ),
    );
  if (topicsCache.has(streamId)) draw(topicsCache.get(streamId));
  try {
    const { topics } = await api.get(`users/me/${streamId}/topics`);
    topicsCache.set(streamId, topics);
    draw(topics);
  } catch {
    /* the channel list still works without its topics */
  }
}

export function noteTopic(streamId, topic, messageId) {
  const topics = topicsCache.get(streamId);
  if (!topics) return;
  const existing = topics.find((t) => t.name.toLowerCase() === topic.toLowerCase());
  if (existing) existing.max_id = messageId;
  else topics.push({ name: topic, max_id: messageId });
  topics.sort((a, b) => b.max_id - a.max_id);
}

export function forgetTopics(streamId) {
  topicsCache.delete(streamId);
}

function renderDms() {
  const conversations = new Map();
  for (const [key, conversation] of model.unreadTopics) {
    if (key.startsWith("d:")) conversations.set(key, conversation);
  }
  const dm = opOf(current, "dm");
  if (dm) conversations.set(model.conversationKey({ dm: dm.operand }), { dm: dm.operand });
  for (const key of recentDms) conversations.set(key, { dm: key.slice(2).split(",").map(Number) });
  clear(
    els.dms,
    h(
      "ul",
      [...conversations.entries()].slice(0, 20).map(([key, conversation]) => {
        const names = conversation.dm.map((id) => model.userName(id)).join(", ");
        const unread = model.unreadCount((k) => k === key);
        const active = dm && model.conversationKey({ dm: dm.operand }) === key;
        return h("li", link(viewHash(dmView(conversation.dm)), active, h("span.name", names), count(unread)));
      }),
    ),
  );
}

const recentDms = new Set();
export function noteDm(conversation) {
  recentDms.add(model.conversationKey(conversation));
}

function presenceOf(userId) {
  const info = model.presence.get(userId);
  if (!info) return "offline";
  const nowSeconds = Date.now() / 1000;
  if (info.active_timestamp && nowSeconds - info.active_timestamp < 140) return "active";
  if (info.idle_timestamp && nowSeconds - info.idle_timestamp < 140) return "idle";
  return "offline";
}

export function renderUsers() {
  if (!els.users) return;
  const order = { active: 0, idle: 1, offline: 2 };
  const query = els.peopleFilter.value.trim().toLowerCase();
  const people = [...model.users.values()]
    .filter((u) => u.is_active !== false && !u.is_bot && !u.is_system_bot)
    .filter((u) => !query || u.full_name.toLowerCase().includes(query) || u.email.toLowerCase().includes(query))
    .map((u) => ({ user: u, status: presenceOf(u.user_id) }))
    .sort((a, b) => order[a.status] - order[b.status] || a.user.full_name.localeCompare(b.user.full_name));
  clear(
    els.users,
    people.map(({ user, status }) =>
      h(
        "li",
        h(
          "a",
          { href: viewHash(dmView([user.user_id])), title: `${user.full_name} (${status})` },
          h(`span.presence.${status}`, { "aria-label": status, role: "img" }),
          avatar(user.user_id, ".small"),
          h("span.name", user.full_name),
          statusOf(user.user_id),
        ),
      ),
    ),
  );
}

// A person's status (emoji and text) as the user list shows it.
export function statusOf(userId) {
  const status = model.statuses.get(userId);
  if (!status || (!status.status_text && !status.emoji_name)) return null;
  const glyph = status.emoji_code ? (status.reaction_type === "unicode_emoji" || !status.reaction_type ? emojiGlyph(status.emoji_code) : `:${status.emoji_name}:`) : "";
  return h("span.status", { title: status.status_text || status.emoji_name }, glyph ? h("span.status-emoji", { "aria-hidden": "true" }, glyph) : null,
    status.status_text ? h("span.status-text", status.status_text) : null);
}

// Enter in a filter opens the first match; Esc clears it.
function filterKeys(event) {
  const list = event.target === els.channelFilter ? els.channels : els.users;
  if (event.key === "Enter") list.querySelector("a")?.click();
  else if (event.key === "Escape") {
    event.target.value = "";
    if (event.target === els.channelFilter) renderSidebars();
    else renderUsers();
  } else return;
  event.preventDefault();
}

export function focusChannelFilter() {
  document.getElementById("app").classList.add("left-open");
  els.channelFilter.focus();
}

export function focusPeopleSearch() {
  document.getElementById("app").classList.add("right-open");
  els.peopleFilter.focus();
}
