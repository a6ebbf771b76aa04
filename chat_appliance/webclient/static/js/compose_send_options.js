// The compose box's "Send options": schedule the message for later (POST /scheduled_messages),
// at one of the times Zulip's scheduling popover offers, named as Zulip names them.
import * as api from "./api.js";
import { model } from "./model.js";
import { closePopupMenu, showPopupMenu } from "./popup_menu.js";
import { h, toast } from "./util.js";

// Zulip's choices: today at 9 AM or 4 PM while still ahead, tomorrow at both, Monday at 9 AM.
export function scheduleChoices(now = new Date()) {
  const at = (days, hour) => {
    const d = new Date(now);
    d.setDate(d.getDate() + days);
    d.setHours(hour, 0, 0, 0);
    return d;
  };
  const twentyFour = Boolean(model.state?.user_settings?.twenty_four_hour_time);
  const time = (d) => d.toLocaleTimeString(twentyFour ? "en-GB" : "en-US", { hour: "numeric", minute: "2-digit", hour12: !twentyFour });
  const choices = [];
  for (const hour of [9, 16]) {
    const d = at(0, hour);
    if (d - now > 5 * 60 * 1000) choices.push({ label: `Today at ${time(d)}`, when: d });
  }
  for (const hour of [9, 16]) choices.push({ label: `Tomorrow at ${time(at(1, hour))}`, when: at(1, hour) });
  const toMonday = ((8 - now.getDay()) % 7) || 7;
  if (toMonday > 1) choices.push({ label: `Monday at ${time(at(toMonday, 9))}`, when: at(toMonday, 9) });
  return choices;
}

const MENU = "send-options-menu";
const closeMenu = () => closePopupMenu(MENU);
const showMenu = (anchor, items) => showPopupMenu(MENU, "Send options", anchor, items, ".send-options");

// `message()`: the compose box's message as POST /messages takes it, or null (it said why);
// `sent()`: clears the box once scheduled.
export function sendOptionsButton(message, sent) {
  const schedule = async (choice) => {
    closeMenu();
    const params = message();
    if (!params) return;
    try {
      await api.post("scheduled_messages", {
        type: params.type === "private" ? "direct" : params.type, to: params.to, content: params.content,
        ...(params.type === "stream" ? { topic: params.topic } : {}),
        scheduled_delivery_timestamp: Math.floor(choice.when.getTime() / 1000),
      });
      sent();
      toast(`Message scheduled for ${choice.label.replace(/^./, (c) => c.toLowerCase())}.`);
    } catch (error) {
      toast(error.message, "error");
    }
  };
  const button = h("button.icon-text.send-options", {
    type: "button", "aria-haspopup": "menu", "aria-label": "Send options", title: "Send options",
    on: {
      click: (event) => {
        const anchor = event.currentTarget;
        showMenu(anchor, [["Schedule message", () => showMenu(anchor, scheduleChoices().map((choice) => [choice.label, () => schedule(choice)]))]]);
      },
    },
  }, "\u25be");
  return button;
}
