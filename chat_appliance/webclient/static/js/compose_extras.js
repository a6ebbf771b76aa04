// The compose box's helpers: Markdown preview, uploads (picker, paste, drop) and @/#/: autocomplete.
import * as api from "./api.js";
import { emojiLoaded, glyphFor, loadEmoji, searchEmoji, showEmojiGlyphs } from "./emoji.js";
import { model } from "./model.js";
import { channelView, dmView, matches, parseHash, viewHash } from "./narrow.js";
import { h, toast } from "./util.js";
import { C } from "./compose_state.js";
import { fitHeight } from "./compose.js";
import { saveDraft } from "./compose_drafts.js";

// --- preview ----------------------------------------------------------------------------------

export async function togglePreview() {
  if (!C.els.preview.hidden) return closePreview();
  try {
    const { rendered } = await api.post("messages/render", { content: C.els.textarea.value || " " });
    C.els.preview.innerHTML = rendered;
    showEmojiGlyphs(C.els.preview);
    C.els.preview.hidden = false;
    C.els.textarea.hidden = true;
    C.els.previewButton.setAttribute("aria-pressed", "true");
    C.els.previewButton.textContent = "Write";
  } catch (error) {
    toast(error.message, "error");
  }
}

export function closePreview() {
  C.els.preview.hidden = true;
  C.els.textarea.hidden = false;
  C.els.previewButton.setAttribute("aria-pressed", "false");
  C.els.previewButton.textContent = "Preview";
}

// --- uploads ----------------------------------------------------------------------------------

export function insertText(text, replace = null) {
  const box = C.els.textarea;
  if (replace && box.value.includes(replace)) {
    box.value = box.value.replace(replace, text);
  } else {
    const start = box.selectionStart;
    box.value = box.value.slice(0, start) + text + box.value.slice(box.selectionEnd);
    box.setSelectionRange(start + text.length, start + text.length);
  }
  fitHeight();
  saveDraft();
}

export async function uploadFile(file) {
  const placeholder = `[Uploading ${file.name || "file"}\u2026]()`;
  // Each file on a line of its own (two uploaded together must not run into one link).
  const box = C.els.textarea;
  const before = box.value.slice(0, box.selectionStart);
  const after = box.value.slice(box.selectionEnd);
  insertText(`${before && !before.endsWith("\n") ? "\n" : ""}${placeholder}${after.startsWith("\n") ? "" : "\n"}`);
  try {
    const { url, filename } = await api.upload(file);
    insertText(`[${filename || file.name}](${url})`, placeholder);
  } catch (error) {
    insertText("", placeholder);
    toast(`Upload failed: ${error.message}`, "error");
  }
}

export function onPaste(event) {
  const files = [...(event.clipboardData?.files || [])];
  if (!files.length) return;
  event.preventDefault();
  for (const file of files) uploadFile(file);
}

export function onDrop(event) {
  const files = [...(event.dataTransfer?.files || [])];
  if (!files.length) return;
  event.preventDefault();
  for (const file of files) uploadFile(file);
}

// --- autocomplete -------------------------------------------------------------------------------

// Zulip's wildcard mentions: who each notifies in a channel.
const WILDCARDS = [["all", "Notify channel"], ["everyone", "Notify channel"], ["channel", "Notify channel"], ["topic", "Notify topic"]];

export function complete() {
  const box = C.els.textarea;
  const before = box.value.slice(0, box.selectionStart);
  const match = /(^|[\s(])([@#:])(\*{0,2})([^\s@#:*]*)$/.exec(before);
  if (!match || (match[2] === ":" && match[4].length < 1)) return closeCompletion();
  const [, , sigil, , query] = match;
  const lowered = query.toLowerCase();
  let items = [];
  if (sigil === "@") {
    const people = [...model.users.values()]
      .filter((u) => u.is_active !== false && (u.full_name.toLowerCase().split(/\s+/).some((w) => w.startsWith(lowered)) || u.email.toLowerCase().startsWith(lowered)))
      .slice(0, 8)
      .map((u) => ({ label: `${u.full_name}`, detail: u.email, text: `@**${u.full_name}** ` }));
    // As Zulip's: the wildcard mentions, and user groups (mentioned as @*name*).
    const wildcards = WILDCARDS.filter(([name]) => name.startsWith(lowered))
      .map(([name, detail]) => ({ label: name, detail: C.target?.type === "direct" ? "Notify recipients" : detail, text: `@**${name}** ` }));
    const groups = (model.state.realm_user_groups || [])
      .filter((g) => !g.is_system_group && !g.deactivated && g.name.toLowerCase().includes(lowered))
      .slice(0, 5)
      .map((g) => ({ label: g.name, detail: g.description || "User group", text: `@*${g.name}* ` }));
    items = [...people, ...wildcards, ...groups].slice(0, 12);
  } else if (sigil === "#") {
    items = model.sortedSubs().concat([...model.streams.values()].filter((s) => !model.subs.has(s.stream_id)))
      .filter((s) => s.name.toLowerCase().includes(lowered))
      .slice(0, 8)
      .map((s) => ({ label: `#${s.name}`, detail: s.description || "", text: `#**${s.name}** ` }));
  } else {
    if (!emojiLoaded()) {
      // The table arrives once; complete again when it does if the caret is still in the word.
      loadEmoji().then(() => { if (document.activeElement === box) complete(); });
      return closeCompletion();
    }
    items = searchEmoji(lowered).map((name) => ({ label: `:${name}:`, glyph: glyphFor(name), text: `:${name}: ` }));
  }
  if (!items.length) return closeCompletion();
  C.completion = { start: before.length - sigil.length - match[3].length - query.length, end: box.selectionStart, items, index: 0 };
  renderCompletion();
}

export function renderCompletion() {
  C.els.completion.hidden = false;
  C.els.completion.replaceChildren(
    ...C.completion.items.map((item, i) =>
      h("li", { role: "option", id: `completion-${i}`, "aria-selected": String(i === C.completion.index), class: i === C.completion.index ? "active" : "", on: { mousedown: (e) => { e.preventDefault(); accept(item); } } },
        item.glyph ? h("span.glyph", item.glyph) : null, h("span.label", item.label), item.detail ? h("span.detail", item.detail) : null),
    ),
  );
  C.els.textarea.setAttribute("aria-activedescendant", `completion-${C.completion.index}`);
}

export function accept(item) {
  const box = C.els.textarea;
  const { start, end } = C.completion;
  box.value = box.value.slice(0, start) + item.text + box.value.slice(end);
  const caret = start + item.text.length;
  box.setSelectionRange(caret, caret);
  closeCompletion();
  saveDraft();
}

export function closeCompletion() {
  C.completion = null;
  if (C.els.completion) {
    C.els.completion.hidden = true;
    C.els.textarea.removeAttribute("aria-activedescendant");
  }
}

// --- video calls --------------------------------------------------------------------------------

// Zulip's video call providers: 0 none, 1 Jitsi Meet (the default). A Jitsi call is a link to a new
// room (a random number) on the organization's Jitsi server, else the server's, else meet.jit.si.
const PROVIDER_DISABLED = 0;
const DEFAULT_JITSI = "https://meet.jit.si";

export function videoCallUrl() {
  const state = model.state || {};
  const server = state.realm_jitsi_server_url || state.jitsi_server_url || state.server_jitsi_server_url || DEFAULT_JITSI;
  const room = Array.from(crypto.getRandomValues(new Uint32Array(2)), (n) => String(n).padStart(10, "0")).join("").slice(0, 15);
  return `${server.replace(/\/+$/, "")}/${room}`;
}

export function addVideoCall() {
  insertText(`[Join video call.](${videoCallUrl()})`);
  C.els.textarea.focus();
}

export function videoCallButton() {
  if ((model.state?.realm_video_chat_provider ?? 1) === PROVIDER_DISABLED) return null;
  return h("button.icon-text", { type: "button", "aria-label": "Add video call", title: "Add video call", on: { click: addVideoCall } }, "\u{1F4F9}");
}

// --- where a message went -----------------------------------------------------------------------

// A message sent to a conversation the view shown does not include: say so, with a link there,
// as Zulip's compose banner does.
export function noteIfOutsideView(message) {
  const view = parseHash(location.hash);
  if ((view.kind !== "feed" && view.kind !== "narrow") || matches(view, message)) return;
  const there = message.type === "stream" ? channelView(message.stream_id, message.subject) : dmView(model.conversationOf(message).dm);
  const label = message.type === "stream"
    ? `#${model.streamName(message.stream_id)} > ${message.subject || "(no topic)"}`
    : model.conversationOf(message).dm.map((id) => model.userName(id)).join(", ");
  toast([h("span", "Sent! Your message is outside your current view. "), h("a", { href: viewHash(there) }, `Go to ${label}`)]);
}
