// Zulip's common keyboard shortcuts: j/k (or arrows) move, r reply, c new topic, x new direct
// message, / search, Esc leaves a box or closes a popup, * stars.
import * as compose from "./compose.js";
import { closePicker } from "./emoji.js";
import * as feed from "./feed.js";

const typingInto = (el) => el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));

export function installShortcuts({ search }) {
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "Escape") {
      closePicker();
      document.getElementById("message-menu")?.remove();
      if (typingInto(document.activeElement)) document.activeElement.blur();
      return;
    }
    if (typingInto(document.activeElement) || document.querySelector("dialog[open]")) return;
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
