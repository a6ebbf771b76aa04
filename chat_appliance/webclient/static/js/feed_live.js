// Live updates of the feed: messages arriving, edited, moved, deleted; reactions, widgets, flags.
import { model } from "./model.js";
import { matches } from "./narrow.js";
import { S, TAIL, messageEl } from "./feed_state.js";
import { appendWindow, keepPosition, reframe, scrollToEnd, select, trim } from "./feed_window.js";
import { renderAll, rerender } from "./feed_draw.js";
import { dropEcho } from "./feed_echo.js";

export function addMessage(message, localId = null) {
  if (localId !== null) dropEcho(localId);
  if (S.arrivedWhileFetching !== null && matches(S.view, message)) {
    S.arrivedWhileFetching.push(message);
    return false;
  }
  if (!S.foundNewest || !matches(S.view, message) || S.byId.has(message.id)) return false;
  const mineSent = message.sender_id === model.myId;
  const atEnd = S.hi === S.messages.length;
  const stick = atEnd && (S.feedEl.scrollHeight - S.feedEl.scrollTop - S.feedEl.clientHeight < 80 || mineSent);
  S.messages.push(message);
  S.byId.set(message.id, message);
  if (atEnd) {
    appendWindow(S.messages.length);
    if (stick) trim("bottom");
    else keepPosition(() => trim("bottom"));
  } else if (mineSent) {
    // Your own message shows at once, even when the page holds older messages: jump to the end.
    S.lo = Math.max(0, S.messages.length - TAIL);
    S.hi = S.messages.length;
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
    const message = S.byId.get(id);
    if (!message) continue;
    if (event.rendered_content !== undefined && id === event.message_id) {
      message.content = event.rendered_content;
      // A rendering-only update (a thumbnail made, a website preview added) is no edit.
      if (!event.rendering_only) message.last_edit_timestamp = event.edit_timestamp;
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
    const firstShown = S.messages[S.lo];
    S.messages = S.messages.filter((m) => S.view.kind !== "narrow" || matches(S.view, m) || !ids.includes(m.id));
    keepPosition(() => reframe(firstShown));
  } else for (const id of ids) rerender(id);
}

export function deleteMessages(ids) {
  let changed = false;
  for (const id of ids) {
    // A deleted message waiting to be marked read would fail the whole flags request (400).
    S.readQueue.delete(id);
    if (S.byId.delete(id)) changed = true;
  }
  if (changed) {
    const firstShown = S.messages.slice(S.lo).find((m) => S.byId.has(m.id));
    S.messages = S.messages.filter((m) => S.byId.has(m.id));
    keepPosition(() => reframe(firstShown));
  }
}

export function reactionEvent(event) {
  const message = S.byId.get(event.message_id);
  if (!message) return;
  if (event.op === "add") {
    message.reactions.push({ emoji_name: event.emoji_name, emoji_code: event.emoji_code, reaction_type: event.reaction_type, user_id: event.user_id });
  } else {
    message.reactions = message.reactions.filter((r) => !(r.user_id === event.user_id && r.emoji_code === event.emoji_code && r.reaction_type === event.reaction_type));
  }
  rerender(message.id);
}

export function submessageEvent(event) {
  const message = S.byId.get(event.message_id);
  if (!message) return;
  message.submessages = [...(message.submessages || []), { id: event.submessage_id, message_id: event.message_id, sender_id: event.sender_id, msg_type: event.msg_type, content: event.content }];
  rerender(message.id);
}

export function flagsEvent(event) {
  const ids = event.all ? [...S.byId.keys()] : event.messages;
  for (const id of ids) {
    const message = S.byId.get(id);
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
