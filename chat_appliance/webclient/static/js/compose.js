// The compose box: recipients, Markdown, Enter to send. Its parts: recipients and their
// suggestions (compose_recipients), drafts on the server (compose_drafts), typing notifications
// (compose_typing), preview, uploads and @/#/: autocomplete (compose_extras).
import * as api from "./api.js";
import { openPicker } from "./emoji.js";
import { currentQueueId } from "./events.js";
import { dropEcho, localEcho } from "./feed.js";
import { model } from "./model.js";
import { opOf } from "./narrow.js";
import { h, toast } from "./util.js";
import { C } from "./compose_state.js";
import { closeSuggest, onToKeyDown, peopleSuggest, readRecipients, renderPills, suggestPeople, suggestTopics, suggestionKeys, topicSuggest } from "./compose_recipients.js";
import { conversationKey, draftKey, saveDraft } from "./compose_drafts.js";
import { showTyping, stopTyping, typing } from "./compose_typing.js";
// The parts the rest of the page calls, from here like the rest of the compose box.
export { flushDraft } from "./compose_drafts.js";
export { forgetTopicSuggestions } from "./compose_recipients.js";
export { showTyping } from "./compose_typing.js";
import { sendOptionsButton } from "./compose_send_options.js";
import { accept, closeCompletion, closePreview, complete, insertText, onDrop, noteIfOutsideView, onPaste, renderCompletion, togglePreview, uploadFile, videoCallButton } from "./compose_extras.js";

export function mountCompose(container) {
  C.els.channel = h("select.channel-select", { "aria-label": "Channel", on: { change: () => retarget({ type: "stream", stream_id: Number(C.els.channel.value), topic: C.els.topic.value }) } });
  C.els.topicList = h("ul.completion.suggest#topic-suggestions", { role: "listbox", "aria-label": "Topics", hidden: true });
  C.els.topic = h("input.topic", {
    type: "text", "aria-label": "Topic", placeholder: "Topic", maxlength: "60", autocomplete: "off", "aria-autocomplete": "list", "aria-controls": "topic-suggestions",
    on: { input: () => { if (C.target?.type === "stream") C.target.topic = C.els.topic.value; suggestTopics(); }, focus: suggestTopics, keydown: (e) => suggestionKeys(e, topicSuggest), blur: () => setTimeout(() => { if (document.activeElement !== C.els.topic) closeSuggest(topicSuggest); }, 150) },
  });
  C.els.peopleList = h("ul.completion.suggest#people-suggestions", { role: "listbox", "aria-label": "People", hidden: true });
  C.els.to = h("input.to", {
    type: "text", "aria-label": "To", placeholder: "Add people", autocomplete: "off", "aria-autocomplete": "list", "aria-controls": "people-suggestions",
    on: { input: suggestPeople, keydown: onToKeyDown, blur: () => setTimeout(() => { if (document.activeElement !== C.els.to) closeSuggest(peopleSuggest); }, 150) },
  });
  C.els.pills = h("span.pills");
  C.els.streamRow = h("div.recipient-row.stream-row", C.els.channel, h("span.sep", ">"), h("div.suggest-box", C.els.topic, C.els.topicList));
  C.els.dmRow = h("div.recipient-row.dm-row", h("span.label", "To:"), h("div.suggest-box.pill-box", C.els.pills, C.els.to, C.els.peopleList));
  C.els.textarea = h("textarea.message-box", { "aria-label": "Message", placeholder: "Message", rows: 2, on: { input: onInput, keydown: onKeyDown, paste: onPaste, blur: () => setTimeout(closeCompletion, 150) } });
  C.els.preview = h("div.preview.rendered", { hidden: true, "aria-label": "Preview", role: "region" });
  C.els.file = h("input", { type: "file", multiple: true, hidden: true, on: { change: () => { for (const f of C.els.file.files) uploadFile(f); C.els.file.value = ""; } } });
  C.els.previewButton = h("button.icon-text", { type: "button", "aria-pressed": "false", on: { click: togglePreview } }, "Preview");
  C.els.send = h("button.primary.send", { type: "submit" }, "Send");
  C.els.typing = h("div.typing-notice", { "aria-live": "polite" });
  C.els.completion = h("ul.completion", { role: "listbox", "aria-label": "Suggestions", hidden: true });
  C.els.form = h(
    "form.compose",
    { "aria-label": "Compose", on: { submit: (event) => { event.preventDefault(); send(); }, dragover: (e) => e.preventDefault(), drop: onDrop } },
    C.els.typing,
    C.els.streamRow,
    C.els.dmRow,
    h("div.box", C.els.textarea, C.els.preview, C.els.completion),
    h("div.compose-buttons", h("button.icon-text", { type: "button", on: { click: () => C.els.file.click() } }, "Attach files"), C.els.file,
      videoCallButton(),
      h("button.icon-text.add-emoji.text-icon", { type: "button", "aria-label": "Add emoji", title: "Add emoji", on: { click: (event) => openPicker(event.currentTarget, (name) => { insertText(`:${name}: `); C.els.textarea.focus(); }) } }, "\u263a"), C.els.previewButton, h("span.spacer"), h("span.hint", "Enter to send, Shift+Enter for a new line"), C.els.send,
      sendOptionsButton(pendingMessage, () => {
        cleared(conversationKey(C.target), C.els.textarea.value);
        saveDraft.cancel();
      })),
  );
  container.append(C.els.form);
  for (const draft of model.drafts.values()) C.draftIds.set(draftKey(draft), draft.id);
  // Aimed from the start, so that one kind of recipient shows (channel and topic, or people) even
  // when the first view has no conversation of its own (Inbox, Recent conversations, Drafts).
  C.target = targetForView({ kind: "feed", ops: [] });
  renderTarget();
}

export function fillChannels() {
  const current = C.target?.type === "stream" ? C.target.stream_id : null;
  C.els.channel.replaceChildren(...model.sortedSubs().map((sub) => h("option", { value: String(sub.stream_id), selected: sub.stream_id === current }, `#${sub.name}`)));
}

export function onDraftsReloaded() {
  C.draftIds = new Map([...model.drafts.values()].map((d) => [draftKey(d), d.id]));
}

// The compose target that fits a view: its channel and topic, or its people.
export function targetForView(view) {
  const channel = opOf(view, "channel");
  const dm = opOf(view, "dm");
  if (dm) return { type: "direct", to: [...dm.operand] };
  if (channel) return { type: "stream", stream_id: channel.operand, topic: opOf(view, "topic")?.operand ?? "" };
  const first = C.target?.type === "stream" ? C.target.stream_id : model.sortedSubs()[0]?.stream_id;
  return first ? { type: "stream", stream_id: first, topic: C.target?.type === "stream" ? C.target.topic : "" } : { type: "direct", to: [] };
}

export function retarget(next, { focus = false, keepText = false } = {}) {
  const text = C.els.textarea.value;
  if (C.target && !keepText) {
    if (C.target.type === "stream") C.target.topic = C.els.topic.value;
    C.localText.set(conversationKey(C.target), text);
    saveDraft.flush();
  }
  C.target = next;
  renderTarget();
  if (!keepText) {
    const key = conversationKey(C.target);
    const id = C.draftIds.get(key);
    const draft = id !== undefined ? model.drafts.get(id) : null;
    C.els.textarea.value = C.localText.has(key) ? C.localText.get(key) : draft ? draft.content : "";
  } else C.els.textarea.value = text;
  closePreview();
  fitHeight();
  showTyping();
  if (focus) (C.target.type === "stream" && !C.target.topic ? C.els.topic : C.els.textarea).focus();
}

export function renderTarget() {
  const stream = C.target.type === "stream";
  C.els.streamRow.hidden = !stream;
  C.els.dmRow.hidden = stream;
  if (stream) {
    fillChannels();
    C.els.channel.value = String(C.target.stream_id);
    C.els.topic.value = C.target.topic;
  } else {
    C.els.to.value = "";
    renderPills();
  }
}

export function composeText() {
  return C.els.textarea.value;
}

export function focusMessage() {
  C.els.textarea.focus();
}

export function replyTo(message, quote) {
  const conversation = model.conversationOf(message);
  retarget(conversation.dm ? { type: "direct", to: conversation.dm } : { type: "stream", stream_id: conversation.stream_id, topic: conversation.topic }, { keepText: true });
  if (quote) {
    api.get(`messages/${message.id}`, { apply_markdown: false }).then(({ message: raw }) => {
      const fence = raw.content.includes("```") ? "````" : "```";
      const quoted = `@_**${message.sender_full_name}|${message.sender_id}** said:\n${fence}quote\n${raw.content}\n${fence}\n`;
      const box = C.els.textarea;
      box.value = (box.value ? `${box.value}\n` : "") + quoted;
      box.focus();
      box.setSelectionRange(box.value.length, box.value.length);
    }, (error) => toast(error.message, "error"));
  }
  C.els.textarea.focus();
}

export function newTopic() {
  const t = targetForView({ kind: "feed", ops: [] });
  const current = C.target?.type === "stream" ? C.target.stream_id : t.stream_id;
  retarget({ type: "stream", stream_id: current, topic: "" });
  C.els.topic.focus();
}

export function newDirect() {
  retarget({ type: "direct", to: [] });
  C.els.to.focus();
}

// --- sending -------------------------------------------------------------------------------

// The message as the box holds it, as POST /messages takes it; null when it cannot go (empty, or
// to nobody: then it says so).
export function pendingMessage({ quiet = false } = {}) {
  const content = C.els.textarea.value;
  if (!content.trim()) {
    if (!quiet) toast("Write a message first.", "error");
    return null;
  }
  if (C.target.type === "direct" && !readRecipients()?.length) {
    toast("Say whom the message is to.", "error");
    C.els.to.focus();
    return null;
  }
  if (C.target.type === "stream") C.target.topic = C.els.topic.value;
  return C.target.type === "stream"
    ? { type: "stream", to: C.target.stream_id, topic: C.target.topic, content }
    : { type: "direct", to: C.target.to, content };
}

// The box after its message left (sent, or scheduled): empty, its draft gone.
function cleared(key, content) {
  if (C.els.textarea.value === content) C.els.textarea.value = "";
  C.localText.delete(key);
  fitHeight();
  closePreview();
  stopTyping();
  const id = C.draftIds.get(key);
  if (id !== undefined) {
    C.draftIds.delete(key);
    model.drafts.delete(id);
    api.del(`drafts/${id}`).catch(() => {});
  }
}

export async function send() {
  const params = pendingMessage({ quiet: true });
  if (!params) return;
  const content = params.content;
  const key = conversationKey(C.target);
  // Local echo: the message shows in the feed at once; the server's event replaces it.
  const queueId = currentQueueId();
  const localId = queueId ? `${Date.now()}.${Math.floor(Math.random() * 1e6)}` : null;
  const fake = C.target.type === "stream"
    ? { type: "stream", stream_id: C.target.stream_id, subject: C.target.topic, display_recipient: model.streamName(C.target.stream_id), sender_id: model.myId, content, flags: ["read"] }
    : { type: "private", display_recipient: [...new Set([...C.target.to, model.myId])].map((id) => ({ id, full_name: model.userName(id) })), sender_id: model.myId, content, flags: ["read"] };
  if (localId) {
    Object.assign(params, { queue_id: queueId, local_id: localId });
    localEcho(localId, fake);
    if (C.els.textarea.value === content) C.els.textarea.value = "";
  }
  // Back to the box when the send is done, unless the person left it meanwhile (Escape, a click
  // elsewhere): the answer may come after the message's own event, and taking the focus back then
  // would type their next key (a shortcut such as e) into the box.
  let left = false;
  const onLeave = () => { left = true; };
  C.els.textarea.addEventListener("blur", onLeave);
  C.els.send.disabled = true;
  try {
    saveDraft.cancel();
    await api.post("messages", params);
    // Should the event never come (the view changed meanwhile), the echo goes after a while.
    if (localId) setTimeout(() => dropEcho(localId), 15000);
    cleared(key, content);
    noteIfOutsideView(fake);
  } catch (error) {
    if (localId) {
      dropEcho(localId);
      if (!C.els.textarea.value) C.els.textarea.value = content; // not sent: the text comes back
    }
    toast(error.message, "error");
  } finally {
    C.els.textarea.removeEventListener("blur", onLeave);
    C.els.send.disabled = false;
    if (!left) C.els.textarea.focus();
  }
}

export function onKeyDown(event) {
  if (C.completion) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      C.completion.index = (C.completion.index + (event.key === "ArrowDown" ? 1 : -1) + C.completion.items.length) % C.completion.items.length;
      renderCompletion();
      event.preventDefault();
      return;
    }
    if (event.key === "Enter" || event.key === "Tab") {
      accept(C.completion.items[C.completion.index]);
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
export function fitHeight() {
  const box = C.els.textarea;
  box.style.height = "auto";
  box.style.height = `${box.scrollHeight + 2}px`;
}

export function onInput() {
  fitHeight();
  saveDraft();
  typing();
  complete();
  if (!C.els.preview.hidden) closePreview();
}

export function composeEnabled(enabled) {
  C.els.textarea.disabled = !enabled;
  C.els.send.disabled = !enabled;
}

// A topic moved with all its messages (resolved, renamed, to another channel): a compose box
// aimed at it follows it, as Zulip's does.
export function followTopicMove(event) {
  if (event.propagate_mode !== "change_all" || C.target?.type !== "stream") return;
  if (event.subject === undefined && event.new_stream_id === undefined) return;
  if (C.target.stream_id !== event.stream_id || C.target.topic.toLowerCase() !== String(event.orig_subject).toLowerCase()) return;
  C.target = { ...C.target, stream_id: event.new_stream_id ?? event.stream_id, topic: event.subject ?? C.target.topic };
  renderTarget();
}
