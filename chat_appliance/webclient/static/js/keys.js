// Zulip's keyboard shortcuts (listed by shortcuts.js, shown with ?): j/k or the arrows move,
// n/p go to the next unread topic or direct message, r/Enter reply, c new topic, x new direct
// message, e edit, i actions, + thumbs up, * star, : react, Shift+A/D previous/next channel,
// q/w search people/channels, / search, Esc leaves a box or closes a popup.
import * as compose from "./compose.js";
import { closePicker } from "./emoji.js";
import * as feed from "./feed.js";
import { model } from "./model.js";
import { channelView, dmView, opOf, parseHash, viewHash } from "./narrow.js";
import { focusChannelFilter, focusPeopleSearch } from "./sidebar.js";

const typingInto = (el) => el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));

// The next conversation with unread messages after the current one (muted topics skipped).
function nextUnread(dm) {
  const view = parseHash(location.hash);
  const keys = [];
  for (const [key, conversation] of model.unreadTopics) {
    if (Boolean(conversation.dm) !== dm || !model.unreadCount((k) => k === key)) continue;
    if (!dm && (!model.subs.has(conversation.stream_id) || model.isTopicMuted(conversation.stream_id, conversation.topic))) continue;
    keys.push([key, conversation]);
  }
  if (!dm) {
    const order = new Map(model.sortedSubs().map((s, i) => [s.stream_id, i]));
    keys.sort((a, b) => order.get(a[1].stream_id) - order.get(b[1].stream_id) || a[1].topic.localeCompare(b[1].topic));
  }
  if (!keys.length) return null;
  const channel = opOf(view, "channel");
  const topic = opOf(view, "topic");
  const dmOp = opOf(view, "dm");
  const current = dmOp ? model.conversationKey({ dm: dmOp.operand }) : channel && topic ? model.conversationKey({ stream_id: channel.operand, topic: topic.operand }) : null;
  const index = keys.findIndex(([key]) => key === current);
  const [, conversation] = keys[(index + 1) % keys.length];
  return conversation.dm ? dmView(conversation.dm) : channelView(conversation.stream_id, conversation.topic);
}

function cycleChannel(delta) {
  const subs = model.sortedSubs();
  if (!subs.length) return;
  const channel = opOf(parseHash(location.hash), "channel");
  const index = channel ? subs.findIndex((s) => s.stream_id === channel.operand) : -1;
  const next = subs[(index + delta + subs.length) % subs.length];
  location.hash = viewHash(channelView(next.stream_id));
}

export function installShortcuts({ search }) {
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "Escape") {
      closePicker();
      document.getElementById("message-menu")?.remove();
      if (typingInto(document.activeElement)) document.activeElement.blur();
      return;
    }
    // (event.target too: a key that closed the box it was typed in, as Enter in the emoji search does)
    if (typingInto(document.activeElement) || typingInto(event.target) || document.querySelector("dialog[open]")) return;
    if (document.activeElement?.closest?.("#message-menu, #emoji-picker")) return;
    const selected = feed.selectedMessage();
    switch (event.key) {
      case "j":
      case "ArrowDown":
        feed.moveSelection(1);
        break;
      case "k":
      case "ArrowUp":
        feed.moveSelection(-1);
        break;
      case "r":
      case "Enter":
        if (!selected) return;
        compose.replyTo(selected, false);
        break;
      case "c":
        compose.newTopic();
        break;
      case "x":
        compose.newDirect();
        break;
      case "e":
        feed.editSelected();
        break;
      case "i":
        feed.menuForSelected();
        break;
      case "+":
        if (selected) feed.toggleReaction(selected, "thumbs_up");
        break;
      case "*":
        if (selected) feed.toggleStarOf(selected);
        break;
      case ":":
        feed.reactToSelected();
        break;
      case "n":
      case "p": {
        const next = nextUnread(event.key === "p");
        if (next) location.hash = viewHash(next);
        break;
      }
      case "A":
        cycleChannel(-1);
        break;
      case "D":
        cycleChannel(1);
        break;
      case "q":
        focusPeopleSearch();
        break;
      case "w":
        focusChannelFilter();
        break;
      case "?":
        import("./shortcuts.js").then((m) => m.openShortcuts());
        break;
      case "/":
        search.focus();
        search.select();
        break;
      default:
        return;
    }
    event.preventDefault();
  });
}
