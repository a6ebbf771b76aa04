// Drawing the feed: recipient blocks, messages, their reactions and action buttons.
import { glyphFor, openPicker, showEmojiGlyphs } from "./emoji.js";
import { model } from "./model.js";
import { channelView, dmView, messageLink, viewHash } from "./narrow.js";
import { renderWidget } from "./widgets.js";
import { clear, formatFullTime, formatTime, h, hue, initials } from "./util.js";
import { S, WINDOW, continues, conversationKey, messageEl } from "./feed_state.js";
import { select } from "./feed_window.js";
import { openMenu, toggleReaction, toggleStar } from "./feed_menu.js";

// Redraw the window messages[lo..hi) (only when its contents changed wholesale: a move, a deletion).
export function renderAll() {
  S.lo = Math.max(0, Math.min(S.lo, S.messages.length));
  S.hi = Math.max(S.lo, Math.min(Math.max(S.hi, S.lo + 1), S.messages.length, S.lo + WINDOW));
  if (!S.messages.length) {
    clear(S.listEl, h("div.empty", "No messages here yet."));
    return;
  }
  const { lead, blocks } = renderRun(S.messages.slice(S.lo, S.hi), null);
  clear(S.listEl, ...lead, ...blocks);
}

// Messages grouped by conversation: each group a block with its recipient header (sticky within
// its own block, so only one header sticks at a time). Messages continuing `previous`'s
// conversation come back in `lead`, for the block already in the page.
export function renderRun(list, previous) {
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

export function renderHeader(message) {
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

export function renderMessage(message, continued) {
  const flags = message.flags || [];
  // A muted sender's message shows neither who sent it nor what it says until "Show message", as in Zulip.
  const hidden = model.isMutedUser(message.sender_id) && !S.revealed.has(message.id);
  const senderName = hidden ? "Muted user" : model.users.get(message.sender_id)?.full_name || message.sender_full_name;
  const marks = [];
  if (message.last_moved_timestamp) marks.push(h("span.mark", { title: `Moved ${formatFullTime(message.last_moved_timestamp)}` }, "moved"));
  if (message.last_edit_timestamp) marks.push(h("span.mark", { title: `Edited ${formatFullTime(message.last_edit_timestamp)}` }, "edited"));
  const content = h("div.content.rendered");
  // sanitised by the server; the page's CSP runs no inline script. A search's answer carries the
  // content with its matches marked (match_content): shown as <mark>.
  content.innerHTML = message.match_content ?? message.content;
  if (message.match_content) markMatches(content);
  if (message.content.includes("spoiler-block")) wireSpoilers(content);
  // (each only when the HTML has what it looks for: a long page renders hundreds at a time)
  if (message.content.includes("emoji")) showEmojiGlyphs(content);
  if (message.content.includes("<a ")) fixLinks(content);
  // A /poll or /todo message shows its widget in place of its text, as Zulip's clients do.
  const widget = hidden ? mutedNote(message) : renderWidget(message);
  const article = h(
    "div.message",
    {
      role: "article",
      "aria-label": `${senderName}, ${formatTime(message.timestamp)}`,
      tabindex: "-1",
      dataset: { id: message.id },
      class: `message${continued ? " continued" : ""}${flags.includes("read") ? "" : " unread"}${flags.includes("starred") ? " starred" : ""}${flags.some((f) => /mentioned/.test(f) || f === "has_alert_word") ? " mentioned" : ""}`,
      on: { click: (event) => onMessageClick(event, message) },
    },
    continued ? h("span.avatar-space") : hidden ? h("span.avatar", { "aria-hidden": "true" }, "?") : avatar(message.sender_id),
    h(
      "div.body",
      continued
        ? null
        : h("div.meta", hidden ? h("span.sender", senderName) : h("button.sender", { type: "button", dataset: { profileUser: message.sender_id } }, senderName), h("a.time", { href: messageLink(message), title: formatFullTime(message.timestamp) }, formatTime(message.timestamp))),
      widget || content,
      marks.length ? h("div.marks", marks) : null,
      renderReactions(message),
    ),
    flags.includes("starred") ? renderActions(message) : null,
  );
  if (!flags.includes("read")) S.observer.observe(article);
  return article;
}

function mutedNote(message) {
  const show = () => {
    S.revealed.add(message.id);
    rerender(message.id);
  };
  return h("div.muted-note", "This message was hidden because you have muted the sender. ",
    h("button.link-button", { type: "button", on: { click: show } }, "Show message"));
}

// A message's action buttons, made when first wanted (pointer over it, focus in it, selected,
// starred): three buttons fewer per message in the page.
export function renderActions(message) {
  const flags = message.flags || [];
  return h(
      "div.actions",
      h("button.icon.star", { type: "button", title: flags.includes("starred") ? "Unstar" : "Star", "aria-label": flags.includes("starred") ? "Unstar" : "Star", "aria-pressed": String(flags.includes("starred")), on: { click: () => toggleStar(message) } }, flags.includes("starred") ? "\u2605" : "\u2606"),
      h("button.icon.text-icon", { type: "button", title: "Add reaction", "aria-label": "Add reaction", on: { click: (event) => openPicker(event.currentTarget, (name) => toggleReaction(message, name)) } }, "\u263a"),
      h("button.icon", { type: "button", title: "Message actions", "aria-label": "Message actions", "aria-haspopup": "menu", on: { click: (event) => openMenu(event.currentTarget, message) } }, "\u22ef"),
  );
}

export function ensureActions(el) {
  if (!el || el.querySelector(":scope > .actions") || el.classList.contains("local-echo")) return;
  const message = S.byId.get(Number(el.dataset.id));
  if (message) el.append(renderActions(message));
}

// Links leave the app in a new tab; the app's own links (#narrow/...) stay in it.
export function fixLinks(content) {
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
    if (img.classList.contains("image-loading-placeholder")) sizePlaceholder(img);
  }
}

// An uploaded image whose thumbnail the server is still making: a box of the thumbnail's size
// (from its data-original-dimensions, fitted as .message_inline_image img is) with the spinner
// in its middle, so that nothing moves when the update_message event brings the thumbnail.
const PREVIEW_BOX = [300, 200];
function sizePlaceholder(img) {
  const [width, height] = (img.dataset.originalDimensions || "").split("x").map(Number);
  if (width > 0 && height > 0) {
    const scale = Math.min(1, PREVIEW_BOX[0] / width, PREVIEW_BOX[1] / height);
    img.width = Math.max(48, Math.round(width * scale));
    img.height = Math.max(48, Math.round(height * scale));
    // Kept when a narrow screen shrinks the box (the spinner's own 1:1 would win otherwise).
    img.style.aspectRatio = `${img.width} / ${img.height}`;
  }
  img.alt = `${img.alt} (loading)`;
}

export function onMessageClick(event, message) {
  const inline = event.target.closest(".message_inline_image");
  if (inline) {
    event.preventDefault();
    import("./lightbox.js").then((m) => m.openLightbox(inline.querySelector("a"), inline.querySelector("img")));
    return;
  }
  if (!event.target.closest("a,button")) select(message.id, false);
}

export function renderReactions(message) {
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

export function rerender(id) {
  const message = S.byId.get(id);
  const old = messageEl(id);
  if (!message || !old) return;
  const index = S.messages.indexOf(message);
  const fresh = renderMessage(message, index > S.lo && continues(S.messages[index - 1], message));
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

// The server's <span class="highlight"> around each search match, as <mark> (what the match is).
function markMatches(content) {
  for (const span of content.querySelectorAll("span.highlight")) {
    const mark = document.createElement("mark");
    mark.append(...span.childNodes);
    span.replaceWith(mark);
  }
}

// Spoilers, as Zulip's: the header shows, the content stays hidden until the header (or its
// button) is clicked, and hides again on a second click.
function wireSpoilers(content) {
  for (const block of content.querySelectorAll(".spoiler-block")) {
    const header = block.querySelector(".spoiler-header");
    const body = block.querySelector(".spoiler-content");
    if (!header || !body) continue;
    if (!header.textContent.trim()) header.append(h("p", "Spoiler"));
    const button = h("button.spoiler-toggle", { type: "button", "aria-expanded": "false", "aria-label": "Show spoiler" });
    header.prepend(button);
    header.addEventListener("click", (event) => {
      if (event.target.closest("a")) return;
      const open = !block.classList.contains("spoiler-open");
      block.classList.toggle("spoiler-open", open);
      body.setAttribute("aria-hidden", String(!open));
      button.setAttribute("aria-expanded", String(open));
      button.setAttribute("aria-label", open ? "Hide spoiler" : "Show spoiler");
    });
  }
}
