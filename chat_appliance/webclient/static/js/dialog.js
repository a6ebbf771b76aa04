// Modal dialogs of the administration screens (channel settings, profile cards, the
// organization's name step): one builder, a close button, Escape, and removal on close.
import { model } from "./model.js";
import { h, toast } from "./util.js";

// A modal dialog named `label`; `build(dialog)` returns its content. Resolves when it closes.
export function openDialog(label, build, { className = "" } = {}) {
  const dialog = h(`dialog.admin-dialog${className ? `.${className}` : ""}`, { "aria-label": label });
  const close = h("button.icon.dialog-close", { type: "button", "aria-label": "Close", title: "Close", on: { click: () => dialog.close() } }, "\u2715");
  const body = h("div.admin-dialog-body");
  dialog.append(h("div.admin-dialog-head", h("h2", label), close), body);
  document.body.append(dialog);
  const closed = new Promise((resolve) => dialog.addEventListener("close", () => {
    dialog.remove();
    resolve();
  }));
  dialog.closed = closed;
  const content = build(dialog);
  if (content) body.append(...[content].flat().filter(Boolean));
  dialog.showModal();
  return dialog;
}

export const field = (label, input) => h("label.field", h("span", label), input);

// Run an API call; a toast says it worked (if `success`) or what went wrong. Null on failure.
export async function attempt(fn, success) {
  try {
    const result = await fn();
    if (success) toast(success);
    return result;
  } catch (error) {
    toast(error.message, "error");
    return null;
  }
}

// A text input that suggests items as you type, in a listbox of `option`s.
// `suggest(text)` returns [{label, value}]; `choose(item)` is called on a pick.
export function suggestBox(label, suggest, choose) {
  const list = h("ul.suggestions", { role: "listbox", "aria-label": `${label} suggestions` });
  const listId = `sg-${Math.random().toString(36).slice(2)}`;
  list.id = listId;
  list.hidden = true;
  // A plain textbox (its role stays "textbox") that controls the list of suggestions.
  const input = h("input", { type: "text", "aria-label": label, "aria-autocomplete": "list", "aria-controls": listId, autocomplete: "off" });
  let items = [];
  let active = -1;
  const render = () => {
    list.replaceChildren(...items.map((item, i) => h("li", {
      role: "option", "aria-selected": String(i === active), class: i === active ? "active" : "",
      on: { mousedown: (event) => { event.preventDefault(); pick(item); } },
    }, item.label)));
    list.hidden = !items.length;
  };
  const pick = (item) => {
    items = [];
    active = -1;
    render();
    choose(item, input);
  };
  input.addEventListener("input", () => {
    const text = input.value.trim();
    items = text ? suggest(text).slice(0, 8) : [];
    active = items.length ? 0 : -1;
    render();
  });
  input.addEventListener("keydown", (event) => {
    if (!items.length) return;
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      active = (active + (event.key === "ArrowDown" ? 1 : items.length - 1)) % items.length;
      render();
    } else if (event.key === "Enter" && active >= 0) {
      event.preventDefault();
      pick(items[active]);
    } else if (event.key === "Escape") {
      event.stopPropagation();
      items = [];
      render();
    }
  });
  input.addEventListener("blur", () => setTimeout(() => { items = []; render(); }, 150));
  return { input, list, element: h("div.suggest-box", input, list) };
}

// Who may do what: the organization's system groups and user groups, as <option>s.
const GROUP_LABELS = {
  "role:nobody": "Nobody",
  "role:owners": "Owners",
  "role:administrators": "Administrators",
  "role:moderators": "Moderators",
  "role:fullmembers": "Full members",
  "role:members": "Members",
  "role:everyone": "Everyone, including guests",
  "role:internet": "Everyone on the internet",
};

const ORDER = Object.keys(GROUP_LABELS);
const rank = (group) => (group.is_system_group ? ORDER.indexOf(group.name) + 1 || 50 : 100);

export function groupOptions(groups, selected, { internet = false } = {}) {
  const sorted = [...(groups || [])]
    .filter((g) => !g.deactivated && (internet || g.name !== "role:internet"))
    .sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
  const options = sorted.map((g) => h("option", { value: String(g.id), selected: g.id === selected }, g.is_system_group ? GROUP_LABELS[g.name] || g.name : g.name));
  if (selected !== undefined && selected !== null && typeof selected !== "number") options.unshift(h("option", { value: "", selected: true, disabled: true }, "A custom group"));
  return options;
}

// Whether the signed-in person is in the group `groupId` (a system role group by role; another
// group by its members and subgroups). The server decides; this only spares offering what it refuses.
const ROLE_LIMITS = { "role:owners": 100, "role:administrators": 200, "role:moderators": 300, "role:fullmembers": 400, "role:members": 400, "role:everyone": 600, "role:internet": 600 };

export function inGroup(groupId, seen = new Set()) {
  const groups = model.state.realm_user_groups || [];
  const group = groups.find((g) => g.id === groupId);
  const me = model.me();
  if (!group || !me || seen.has(groupId)) return false;
  seen.add(groupId);
  if (group.is_system_group) return group.name in ROLE_LIMITS && me.role <= ROLE_LIMITS[group.name];
  return (group.members || []).includes(model.myId) || (group.direct_subgroup_ids || []).some((id) => inGroup(id, seen));
}
