// A popover menu of buttons beside the button that opened it, as the topic's actions and the
// compose box's send options show it: arrow keys move between the items, Escape closes it and
// gives the focus back, and a press outside it closes it (except on the button that opens it,
// whose own click does). One menu of each id at a time.
import { placeNear } from "./emoji.js";
import { h } from "./util.js";

const outsideHandlers = new Map();

export function closePopupMenu(id) {
  document.getElementById(id)?.remove();
  const outside = outsideHandlers.get(id);
  if (outside) document.removeEventListener("pointerdown", outside, true);
  outsideHandlers.delete(id);
}

// `items`: [label, onClick] pairs; `opener`: a selector matching the button that opens the menu.
export function showPopupMenu(id, label, anchor, items, opener) {
  closePopupMenu(id);
  const menu = h(`div.popover.menu#${id}`, { role: "menu", "aria-label": label },
    items.map(([text, fn]) => h("button.menu-item", { type: "button", role: "menuitem", on: { click: fn } }, text)));
  document.body.append(menu);
  placeNear(menu, anchor);
  menu.querySelector("button")?.focus();
  menu.addEventListener("keydown", (event) => {
    const buttons = [...menu.querySelectorAll("button")];
    const index = buttons.indexOf(document.activeElement);
    if (event.key === "ArrowDown") buttons[(index + 1) % buttons.length].focus();
    else if (event.key === "ArrowUp") buttons[(index - 1 + buttons.length) % buttons.length].focus();
    else if (event.key === "Escape") {
      closePopupMenu(id);
      anchor.focus();
    } else return;
    event.preventDefault();
  });
  const outside = (event) => {
    if (!menu.contains(event.target) && !event.target.closest(opener)) closePopupMenu(id);
  };
  outsideHandlers.set(id, outside);
  // After this click's own pointerdown has passed; not if the menu closed meanwhile.
  setTimeout(() => { if (outsideHandlers.get(id) === outside) document.addEventListener("pointerdown", outside, true); }, 0);
}
