// The compose box: recipients, Markdown with preview, Enter to send, drafts on the server,
// typing notifications, uploads (picker, paste, drop) and @/#/: autocomplete.
import * as api from "./api.js";
import { emojiLoaded, glyphFor, loadEmoji, openPicker, searchEmoji, showEmojiGlyphs } from "./emoji.js";
import { currentQueueId } from "./events.js";
import { dropEcho, localEcho } from "./feed.js";
import { model } from "./model.js";
import { opOf } from "./narrow.js";
import { debounce, h, toast } from "./util.js";

let target = null; // {type: "stream", stream_id, topic} | {type: "direct", to: [ids]}
let els = {};
let draftIds = new Map(); // conversation key -> draft id
const localText = new Map(); // conversation key -> text left there this visit (drafts save asynchronously)
let lastTypingStart = 0;
let typingStopTimer = null;
let typingKey = null;
let completion = null; // {start, end, items, index}

export function mountCompose(container) {
  els.channel = h("select.channel-select", { "aria-label": "Channel", on: { change: () => retarget({ type: "stream", stream_id: Number(els.channel.value), topic: els.topic.value }) } });
  els.topicList = h("ul.completion.suggest#topic-suggestions", { role: "listbox", "aria-label": "Topics", hidden: true });
  els.topic = h("input.topic", {
    type: "text", "aria-label": "Topic", placeholder: "Topic", maxlength: "60", autocomplete: "off", "aria-autocomplete": "list", "aria-controls": "topic-suggestions",
    on: { input: () => { if (target?.type === "stream") target.topic = els.topic.value; suggestTopics(); }, focus: suggestTopics, keydown: (e) => suggestionKeys(e, topicSuggest), blur: () => setTimeout(() => { if (document.activeElement !== els.topic) closeSuggest(topicSuggest); }, 150) },
  });
  els.peopleList = h("ul.completion.suggest#people-suggestions", { role: "listbox", "aria-label": "People", hidden: true });
  els.to = h("input.to", {
    type: "text", "aria-label": "To", placeholder: "Add people", autocomplete: "off", "aria-autocomplete": "list", "aria-controls": "people-suggestions",
    on: { input: suggestPeople, keydown: onToKeyDown, blur: () => setTimeout(() => { if (document.activeElement !== els.to) closeSuggest(peopleSuggest); }, 150) },
  });
  els.pills = h("span.pills");
  els.streamRow = h("div.recipient-row.stream-row", els.channel, h("span.sep", ">"), h("div.suggest-box", els.topic, els.topicList));
  els.dmRow = h("div.recipient-row.dm-row", h("span.label", "To:"), h("div.suggest-box.pill-box", els.pills, els.to, els.peopleList));
  els.textarea = h("textarea.message-box", { "aria-label": "Message", placeholder: "Message", rows: 2, on: { input: onInput, keydown: onKeyDown, paste: onPaste, blur: () => setTimeout(closeCompletion, 150) } });
  els.preview = h("div.preview.rendered", { hidden: true, "aria-label": "Preview", role: "region" });
  els.file = h("input", { type: "file", multiple: true, hidden: true, on: { change: () => { for (const f of els.file.files) uploadFile(f); els.file.value = ""; } } });
  els.previewButton = h("button.icon-text", { type: "button", "aria-pressed": "false", on: { click: togglePreview } }, "Preview");
  els.send = h("button.primary.send", { type: "submit" }, "Send");
  els.typing = h("div.typing-notice", { "aria-live": "polite" });
  els.completion = h("ul.completion", { role: "listbox", "aria-label": "Suggestions", hidden: true });
  els.form = h(
    "form.compose",
    { "aria-label": "Compose", on: { submit: (event) => { event.preventDefault(); send(); }, dragover: (e) => e.preventDefault(), drop: onDrop } },
    els.typing,
    els.streamRow,
    els.dmRow,
    h("div.box", els.textarea, els.preview, els.completion),
    h("div.compose-buttons", h("button.icon-text", { type: "button", on: { click: () => els.file.click() } }, "Attach files"), els.file,
      h("button.icon-text.add-emoji", { type: "button", "aria-label": "Add emoji", title: "Add emoji", on: { click: (event) => openPicker(event.currentTarget, (name) => { insertText(`:${name}: `); els.textarea.focus(); }) } }, "\u263a"), els.previewButton, h("span.spacer"), h("span.hint", "Enter to send, Shift+Enter for a new line"), els.send),
  );
  container.append(els.form);
  for (const draft of model.drafts.values()) draftIds.set(draftKey(draft), draft.id);
  fillChannels();
}

export function fillChannels() {
  const current = target?.type === "stream" ? target.stream_id : null;
  els.channel.replaceChildren(...model.sortedSubs().map((sub) => h("option", { value: String(sub.stream_id), selected: sub.stream_id === current }, `#${sub.name}`)));
}

export function onDraftsReloaded() {
  draftIds = new Map([...model.drafts.values()].map((d) => [draftKey(d), d.id]));
}

// The compose target that fits a view: its channel and topic, or its people.
export function targetForView(view) {
  const channel = opOf(view, "channel");
  const dm = opOf(view, "dm");
  if (dm) return { type: "direct", to: [...dm.operand] };
  if (channel) return { type: "stream", stream_id: channel.operand, topic: opOf(view, "topic")?.operand ?? "" };
  const first = target?.type === "stream" ? target.stream_id : model.sortedSubs()[0]?.stream_id;
  return first ? { type: "stream", stream_id: first, topic: target?.type === "stream" ? target.topic : "" } : { type: "direct", to: [] };
}

export function retarget(next, { focus = false, keepText = false } = {}) {
  const text = els.textarea.value;
  if (target && !keepText) {
    if (target.type === "stream") target.topic = els.topic.value;
    localText.set(conversationKey(target), text);
    saveDraft.flush();
  }
  target = next;
  renderTarget();
  if (!keepText) {
    const key = conversationKey(target);
    const id = draftIds.get(key);
    const draft = id !== undefined ? model.drafts.get(id) : null;
    els.textarea.value = localText.has(key) ? localText.get(key) : draft ? draft.content : "";
  } else els.textarea.value = text;
  closePreview();
  fitHeight();
  showTyping();
  if (focus) (target.type === "stream" && !target.topic ? els.topic : els.textarea).focus();
}

function renderTarget() {
  const stream = target.type === "stream";
  els.streamRow.hidden = !stream;
  els.dmRow.hidden = stream;
  if (stream) {
    fillChannels();
    els.channel.value = String(target.stream_id);
    els.topic.value = target.topic;
  } else {
    els.to.value = "";
    renderPills();
  }
}

// --- recipients: pills with people suggestions ------------------------------------------------

function renderPills() {
  els.pills.replaceChildren(...target.to.map((id) => h(
    "span.pill",
    h("span.pill-name", model.userName(id)),
    h("button.pill-remove", { type: "button", "aria-label": `Remove ${model.userName(id)}`, on: { click: () => removeRecipient(id) } }, "\u00d7"),
  )));
}

function addRecipient(id) {
  if (target?.type !== "direct") target = { type: "direct", to: [] };
  if (!target.to.includes(id)) target.to = [...target.to, id];
  els.to.value = "";
  closeSuggest(peopleSuggest);
  renderPills();
  els.to.focus();
}

function removeRecipient(id) {
  target.to = target.to.filter((x) => x !== id);
  renderPills();
  els.to.focus();
}

// Typed text that names people (emails or full names, comma-separated) becomes pills.
function readRecipients() {
  for (const part of els.to.value.split(",").map((p) => p.trim()).filter(Boolean)) {
    // An email, a full name, or the start of exactly one person's name.
    const lowered = part.toLowerCase();
    const starting = [...model.users.values()].filter((u) => u.is_active !== false && u.full_name.toLowerCase().startsWith(lowered));
    const user = model.userByEmailOrName(part) || (starting.length === 1 ? starting[0] : null);
    if (!user) {
      toast(`No user "${part}".`, "error");
      return null;
    }
    if (!target.to.includes(user.user_id)) target.to = [...target.to, user.user_id];
  }
  els.to.value = "";
  renderPills();
  return target.to;
}

// A small listbox under an input: {list, input, items, index, choose}.
const peopleSuggest = { items: [], index: 0 };
const topicSuggest = { items: [], index: 0 };

function showSuggest(state, list, input, items, choose) {
  Object.assign(state, { list, input, items, index: 0, choose });
  if (!items.length) return closeSuggest(state);
  list.hidden = false;
  drawSuggest(state);
}

function drawSuggest(state) {
  state.list.replaceChildren(...state.items.map((item, i) => h(
    "li",
    { role: "option", id: `${state.list.id}-${i}`, "aria-selected": String(i === state.index), class: i === state.index ? "active" : "", on: { mousedown: (e) => { e.preventDefault(); state.choose(item); } } },
    h("span.label", item.label), item.detail ? h("span.detail", item.detail) : null,
  )));
  state.input.setAttribute("aria-activedescendant", `${state.list.id}-${state.index}`);
}

function closeSuggest(state) {
  if (!state.list) return;
  state.items = [];
  state.list.hidden = true;
  state.input.removeAttribute("aria-activedescendant");
}

function suggestionKeys(event, state) {
  if (!state.items.length) return false;
  if (event.key === "ArrowDown" || event.key === "ArrowUp") {
    state.index = (state.index + (event.key === "ArrowDown" ? 1 : -1) + state.items.length) % state.items.length;
    drawSuggest(state);
  } else if (event.key === "Enter" || event.key === "Tab") {
    state.choose(state.items[state.index]);
  } else if (event.key === "Escape") {
    closeSuggest(state); // and the page's Escape leaves the box too
    return true;
  } else return false;
  event.preventDefault();
  return true;
}

function suggestPeople() {
  const query = els.to.value.trim().toLowerCase();
  if (!query) return closeSuggest(peopleSuggest);
  const chosen = new Set(target?.type === "direct" ? target.to : []);
  const items = [...model.users.values()]
    .filter((u) => u.is_active !== false && !chosen.has(u.user_id)
      && (u.full_name.toLowerCase().split(/\s+/).some((w) => w.startsWith(query)) || u.full_name.toLowerCase().startsWith(query) || u.email.toLowerCase().startsWith(query)))
    .sort((a, b) => a.full_name.localeCompare(b.full_name))
    .slice(0, 8)
    .map((u) => ({ label: u.full_name, detail: u.email, id: u.user_id }));
  showSuggest(peopleSuggest, els.peopleList, els.to, items, (item) => addRecipient(item.id));
}

function onToKeyDown(event) {
  if (suggestionKeys(event, peopleSuggest)) return;
  if (event.key === "Backspace" && !els.to.value && target?.to?.length) {
    removeRecipient(target.to[target.to.length - 1]);
    event.preventDefault();
  } else if ((event.key === "Enter" || event.key === ",") && els.to.value.trim()) {
    readRecipients();
    event.preventDefault();
  } else if (event.key === "Enter" && target?.to?.length) {
    els.textarea.focus();
    event.preventDefault();
  }
}

// Topic suggestions: the channel's topics (newest first) that contain the typed text.
const topicCache = new Map(); // stream id -> Promise of topic names

export function forgetTopicSuggestions(streamId) {
  topicCache.delete(streamId);
}

async function suggestTopics() {
  if (target?.type !== "stream" || document.activeElement !== els.topic) return;
  const streamId = target.stream_id;
  if (!topicCache.has(streamId)) {
    topicCache.set(streamId, api.get(`users/me/${streamId}/topics`).then(({ topics }) => topics.map((t) => t.name), () => {
      topicCache.delete(streamId);
      return [];
    }));
  }
  const names = await topicCache.get(streamId);
  if (target?.type !== "stream" || target.stream_id !== streamId || document.activeElement !== els.topic) return;
  const query = els.topic.value.toLowerCase();
  const items = names.filter((n) => n.toLowerCase().includes(query) && n.toLowerCase() !== query).slice(0, 8).map((n) => ({ label: n || "(no topic)", name: n }));
  showSuggest(topicSuggest, els.topicList, els.topic, items, (item) => {
    els.topic.value = item.name;
    target.topic = item.name;
    closeSuggest(topicSuggest);
    els.textarea.focus();
  });
}

export function composeText() {
  return els.textarea.value;
}

export function focusMessage() {
  els.textarea.focus();
}

export function replyTo(message, quote) {
  const conversation = model.conversationOf(message);
  retarget(conversation.dm ? { type: "direct", to: conversation.dm } : { type: "stream", stream_id: conversation.stream_id, topic: conversation.topic }, { keepText: true });
  if (quote) {
    api.get(`messages/${message.id}`, { apply_markdown: false }).then(({ message: raw }) => {
      const fence = raw.content.includes("```") ? "````" : "```";
      const quoted = `@_**${message.sender_full_name}|${message.sender_id}** said:\n${fence}quote\n${raw.content}\n${fence}\n`;
      const box = els.textarea;
      box.value = (box.value ? `${box.value}\n` : "") + quoted;
      box.focus();
      box.setSelectionRange(box.value.length, box.value.length);
    }, (error) => toast(error.message, "error"));
  }
  els.textarea.focus();
}

export function newTopic() {
  const t = targetForView({ kind: "feed", ops: [] });
  const current = target?.type === "stream" ? target.stream_id : t.stream_id;
  retarget({ type: "stream", stream_id: current, topic: "" });
  els.topic.focus();
}

export function newDirect() {
  retarget({ type: "direct", to: [] });
  els.to.focus();
}

// --- sending -------------------------------------------------------------------------------

async function send() {
  const content = els.textarea.value;
  if (!content.trim()) return;
  if (target.type === "direct" && !readRecipients()?.length) {
    toast("Say whom the message is to.", "error");
    els.to.focus();
    return;
  }
  if (target.type === "stream") target.topic = els.topic.value;
  const params = target.type === "stream"
    ? { type: "stream", to: target.stream_id, topic: target.topic, content }
    : { type: "direct", to: target.to, content };
  const key = conversationKey(target);
  // Local echo: the message shows in the feed at once; the server's event replaces it.
  const queueId = currentQueueId();
  const localId = queueId ? `${Date.now()}.${Math.floor(Math.random() * 1e6)}` : null;
  if (localId) {
    Object.assign(params, { queue_id: queueId, local_id: localId });
    localEcho(localId, target.type === "stream"
      ? { type: "stream", stream_id: target.stream_id, subject: target.topic, display_recipient: model.streamName(target.stream_id), sender_id: model.myId, content, flags: ["read"] }
      : { type: "private", display_recipient: [...new Set([...target.to, model.myId])].map((id) => ({ id, full_name: model.userName(id) })), sender_id: model.myId, content, flags: ["read"] });
    if (els.textarea.value === content) els.textarea.value = "";
  }
  // Back to the box when the send is done, unless the person left it meanwhile (Escape, a click
  // elsewhere): the answer may come after the message's own event, and taking the focus back then
  // would type their next key (a shortcut such as e) into the box.
  let left = false;
  const onLeave = () => { left = true; };
  els.textarea.addEventListener("blur", onLeave);
  els.send.disabled = true;
  try {
    saveDraft.cancel();
    await api.post("messages", params);
    // Should the event never come (the view changed meanwhile), the echo goes after a while.
    if (localId) setTimeout(() => dropEcho(localId), 15000);
    if (els.textarea.value === content) els.textarea.value = "";
    localText.delete(key);
    fitHeight();
    closePreview();
    stopTyping();
    const id = draftIds.get(key);
    if (id !== undefined) {
      draftIds.delete(key);
      model.drafts.delete(id);
      api.del(`drafts/${id}`).catch(() => {});
    }
  } catch (error) {
    if (localId) {
      dropEcho(localId);
      if (!els.textarea.value) els.textarea.value = content; // not sent: the text comes back
    }
    toast(error.message, "error");
  } finally {
    els.textarea.removeEventListener("blur", onLeave);
    els.send.disabled = false;
    if (!left) els.textarea.focus();
  }
}

function onKeyDown(event) {
  if (completion) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      completion.index = (completion.index + (event.key === "ArrowDown" ? 1 : -1) + completion.items.length) % completion.items.length;
      renderCompletion();
      event.preventDefault();
      return;
    }
    if (event.key === "Enter" || event.key === "Tab") {
      accept(completion.items[completion.index]);
      event.preventDefault();
      return;
    }
    if (event.key === "Escape") {
      closeCompletion();
      event.preventDefault();
      event.stopPropagation();
      return;
    }
  }
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing && !event.ctrlKey && !event.altKey) {
    event.preventDefault();
    send();
  }
}

// The box grows with its text up to the CSS max-height.
function fitHeight() {
  const box = els.textarea;
  box.style.height = "auto";
  box.style.height = `${box.scrollHeight + 2}px`;
}

function onInput() {
  fitHeight();
  saveDraft();
  typing();
  complete();
  if (!els.preview.hidden) closePreview();
}

// --- drafts (on the server) -----------------------------------------------------------------

function conversationKey(t) {
  if (t.type === "stream") return `stream:${t.stream_id}:${(t.topic || "").toLowerCase()}`;
  return `private:${[...t.to].sort((a, b) => a - b).join(",")}`;
}

function draftKey(draft) {
  if (draft.type === "stream") return `stream:${draft.to[0]}:${(draft.topic || "").toLowerCase()}`;
  return `private:${[...draft.to].sort((a, b) => a - b).join(",")}`;
}

const creating = new Map(); // conversation key -> the POST /drafts under way (one draft per conversation)

const saveDraft = debounce(async () => {
  if (!target) return;
  if (target.type === "stream") target.topic = els.topic.value;
  const key = conversationKey(target);
  const content = els.textarea.value;
  const draft = {
    type: target.type === "stream" ? "stream" : "private",
    to: target.type === "stream" ? [target.stream_id] : target.to,
    topic: target.type === "stream" ? target.topic : "",
    content,
    timestamp: Math.floor(Date.now() / 1000),
  };
  // A draft being created for this conversation: wait for its id rather than make a second one.
  if (creating.has(key)) await creating.get(key).catch(() => {});
  const id = draftIds.get(key);
  try {
    if (!content.trim()) {
      if (id !== undefined) {
        draftIds.delete(key);
        model.drafts.delete(id);
        await api.del(`drafts/${id}`);
      }
    } else if (id !== undefined) {
      model.drafts.set(id, { ...draft, id });
      await api.patch(`drafts/${id}`, { draft });
    } else {
      const request = api.post("drafts", { drafts: [draft] });
      creating.set(key, request);
      try {
        const { ids } = await request;
        draftIds.set(key, ids[0]);
        model.drafts.set(ids[0], { ...draft, id: ids[0] });
      } finally {
        creating.delete(key);
      }
    }
  } catch (error) {
    if (error.code !== "NETWORK") toast(`Draft not saved: ${error.message}`, "error");
  }
}, 600);

export function flushDraft() {
  saveDraft.flush();
}

// --- typing notifications ---------------------------------------------------------------------

function typingParams(op) {
  if (target.type === "stream") return { type: "stream", op, stream_id: target.stream_id, topic: els.topic.value };
  return target.to.length ? { type: "direct", op, to: target.to } : null;
}

function typing() {
  if (!target || !els.textarea.value.trim()) return stopTyping();
  const wait = model.state.server_typing_started_wait_period_milliseconds || 10000;
  const key = conversationKey(target);
  if (Date.now() - lastTypingStart > wait || typingKey !== key) {
    const params = typingParams("start");
    if (params) {
      lastTypingStart = Date.now();
      typingKey = key;
      api.post("typing", params).catch(() => {});
    }
  }
  clearTimeout(typingStopTimer);
  typingStopTimer = setTimeout(stopTyping, model.state.server_typing_stopped_wait_period_milliseconds || 5000);
}

function stopTyping() {
  clearTimeout(typingStopTimer);
  if (!typingKey || !target) return;
  const params = typingParams("stop");
  typingKey = null;
  lastTypingStart = 0;
  if (params) api.post("typing", params).catch(() => {});
}

// Show who is typing in the conversation the compose box is aimed at.
export function showTyping() {
  if (!target || !els.typing) return;
  const key = target.type === "stream"
    ? model.conversationKey({ stream_id: target.stream_id, topic: els.topic.value })
    : model.conversationKey({ dm: target.to.length ? target.to : [model.myId] });
  const ids = model.typingFor(key).filter((id) => id !== model.myId);
  const names = ids.map((id) => model.userName(id));
  els.typing.textContent = names.length === 0 ? "" : names.length === 1 ? `${names[0]} is typing\u2026` : `${names.join(", ")} are typing\u2026`;
}

// --- preview ----------------------------------------------------------------------------------

async function togglePreview() {
  if (!els.preview.hidden) return closePreview();
  try {
    const { rendered } = await api.post("messages/render", { content: els.textarea.value || " " });
    els.preview.innerHTML = rendered;
    showEmojiGlyphs(els.preview);
    els.preview.hidden = false;
    els.textarea.hidden = true;
    els.previewButton.setAttribute("aria-pressed", "true");
    els.previewButton.textContent = "Write";
  } catch (error) {
    toast(error.message, "error");
  }
}

function closePreview() {
  els.preview.hidden = true;
  els.textarea.hidden = false;
  els.previewButton.setAttribute("aria-pressed", "false");
  els.previewButton.textContent = "Preview";
}

// --- uploads ----------------------------------------------------------------------------------

function insertText(text, replace = null) {
  const box = els.textarea;
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

async function uploadFile(file) {
  const placeholder = `[Uploading ${file.name || "file"}\u2026]()`;
  // Each file on a line of its own (two uploaded together must not run into one link).
  const box = els.textarea;
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

function onPaste(event) {
  const files = [...(event.clipboardData?.files || [])];
  if (!files.length) return;
  event.preventDefault();
  for (const file of files) uploadFile(file);
}

function onDrop(event) {
  const files = [...(event.dataTransfer?.files || [])];
  if (!files.length) return;
  event.preventDefault();
  for (const file of files) uploadFile(file);
}

// --- autocomplete -------------------------------------------------------------------------------

function complete() {
  const box = els.textarea;
  const before = box.value.slice(0, box.selectionStart);
  const match = /(^|[\s(])([@#:])(\*{0,2})([^\s@#:*]*)$/.exec(before);
  if (!match || (match[2] === ":" && match[4].length < 1)) return closeCompletion();
  const [, , sigil, , query] = match;
  const lowered = query.toLowerCase();
  let items = [];
  if (sigil === "@") {
    items = [...model.users.values()]
      .filter((u) => u.is_active !== false && (u.full_name.toLowerCase().split(/\s+/).some((w) => w.startsWith(lowered)) || u.email.toLowerCase().startsWith(lowered)))
      .slice(0, 8)
      .map((u) => ({ label: `${u.full_name}`, detail: u.email, text: `@**${u.full_name}** ` }));
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
  completion = { start: before.length - sigil.length - match[3].length - query.length, end: box.selectionStart, items, index: 0 };
  renderCompletion();
}

function renderCompletion() {
  els.completion.hidden = false;
  els.completion.replaceChildren(
    ...completion.items.map((item, i) =>
      h("li", { role: "option", id: `completion-${i}`, "aria-selected": String(i === completion.index), class: i === completion.index ? "active" : "", on: { mousedown: (e) => { e.preventDefault(); accept(item); } } },
        item.glyph ? h("span.glyph", item.glyph) : null, h("span.label", item.label), item.detail ? h("span.detail", item.detail) : null),
    ),
  );
  els.textarea.setAttribute("aria-activedescendant", `completion-${completion.index}`);
}

function accept(item) {
  const box = els.textarea;
  const { start, end } = completion;
  box.value = box.value.slice(0, start) + item.text + box.value.slice(end);
  const caret = start + item.text.length;
  box.setSelectionRange(caret, caret);
  closeCompletion();
  saveDraft();
}

function closeCompletion() {
  completion = null;
  if (els.completion) {
    els.completion.hidden = true;
    els.textarea.removeAttribute("aria-activedescendant");
  }
}

export function composeEnabled(enabled) {
  els.textarea.disabled = !enabled;
  els.send.disabled = !enabled;
}
