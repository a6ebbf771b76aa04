// Settings > Groups, as Zulip's user group settings: the organization's user groups (the system
// role groups left out), "Create user group" (name, description, members), and each group's own
// settings, where members are added and removed. Changes go through the API; the list follows
// user_group events.
import * as api from "./api.js";
import { attempt, field, openDialog, suggestBox } from "./dialog.js";
import { model } from "./model.js";
import { clear, h } from "./util.js";

const groups = () => (model.state.realm_user_groups || []).filter((g) => !g.is_system_group && !g.deactivated)
  .sort((a, b) => a.name.localeCompare(b.name));
const groupById = (id) => (model.state.realm_user_groups || []).find((g) => g.id === id);

let redraw = new Set(); // the open list and group dialog, redrawn after user_group events
model.on("user_group", () => {
  redraw = new Set([...redraw].filter((entry) => entry.element.isConnected));
  for (const entry of redraw) entry.draw();
});
const follow = (element, draw) => redraw.add({ element, draw });

// People to suggest for `text`, leaving out `excluded` ids.
const people = (text, excluded) => {
  const lowered = text.toLowerCase();
  return [...model.users.values()]
    .filter((u) => u.is_active !== false && !u.is_bot && !excluded.has(u.user_id)
      && (u.full_name.toLowerCase().includes(lowered) || u.email.toLowerCase().includes(lowered)))
    .sort((a, b) => a.full_name.localeCompare(b.full_name))
    .map((u) => ({ label: `${u.full_name} (${u.email})`, value: u.user_id }));
};

export function groupsPanel(root) {
  const list = h("ul.group-list", { "aria-label": "User groups" });
  const draw = () => {
    const all = groups();
    clear(list, all.length
      ? all.map((g) => h("li", h("button.link-button", { type: "button", on: { click: () => openGroup(g.id) } }, g.name),
        h("span.detail", ` ${(g.members || []).length} ${(g.members || []).length === 1 ? "member" : "members"}`)))
      : h("li.detail", "No user groups yet."));
  };
  draw();
  follow(list, draw);
  root.append(h("div.row", h("button.primary", { type: "button", on: { click: openCreate } }, "Create user group")), list);
}

// The chosen people of a form: a list with a Remove button each.
function chosenList(label, chosen, onChange) {
  const list = h("ul.chosen-members", { "aria-label": label });
  const draw = () => clear(list, [...chosen].map((id) => h("li", h("span", model.userName(id)),
    h("button.icon", { type: "button", "aria-label": `Remove ${model.userName(id)}`, on: { click: () => { chosen.delete(id); draw(); onChange?.(); } } }, "\u2715"))));
  draw();
  return { list, draw };
}

function openCreate() {
  openDialog("Create user group", (dialog) => {
    const name = h("input", { type: "text", required: true, maxlength: "100", "aria-label": "User group name" });
    const description = h("input", { type: "text", maxlength: "1024", "aria-label": "User group description" });
    const chosen = new Set();
    const members = chosenList("Members to add", chosen);
    const adder = suggestBox("Add members", (text) => people(text, chosen), (item, input) => {
      chosen.add(item.value);
      input.value = "";
      members.draw();
    });
    const form = h("form.inline-form", {
      on: {
        submit: async (event) => {
          event.preventDefault();
          const created = await attempt(() => api.post("user_groups/create", {
            name: name.value.trim(), description: description.value.trim(), members: [...chosen],
          }), `Group ${name.value.trim()} created.`);
          if (created) dialog.close();
        },
      },
    },
    field("User group name", name),
    field("User group description", description),
    h("div.field", h("span", "Members"), adder.element, members.list),
    h("div.row", h("button.primary", { type: "submit" }, "Create"), h("button", { type: "button", on: { click: () => dialog.close() } }, "Cancel")));
    setTimeout(() => name.focus(), 0);
    return form;
  });
}

function openGroup(groupId) {
  const group = groupById(groupId);
  if (!group) return;
  openDialog(`User group settings: ${group.name}`, (dialog) => {
    const current = h("ul.group-members", { "aria-label": "Members" });
    const drawMembers = () => {
      const g = groupById(groupId);
      if (!g) return dialog.close();
      clear(current, (g.members || []).map((id) => h("li", h("span", model.userName(id)),
        h("button.icon", { type: "button", "aria-label": `Remove ${model.userName(id)} from the group`,
          on: { click: () => attempt(() => api.post(`user_groups/${groupId}/members`, { delete: [id] })) } }, "\u2715"))));
    };
    drawMembers();
    follow(current, drawMembers);
    const pending = new Set();
    const picked = chosenList("Members to add", pending);
    const members = () => new Set(groupById(groupId)?.members || []);
    const adder = suggestBox("Add members", (text) => people(text, new Set([...members(), ...pending])), (item, input) => {
      pending.add(item.value);
      input.value = "";
      picked.draw();
    });
    const add = async () => {
      if (!pending.size) return;
      const done = await attempt(() => api.post(`user_groups/${groupId}/members`, { add: [...pending] }), "Members added.");
      if (done) {
        pending.clear();
        picked.draw();
      }
    };
    return [
      group.description ? h("p.detail", group.description) : null,
      h("h3", "Members"),
      current,
      h("div.field", h("span", "Add members"), adder.element, picked.list),
      h("div.row", h("button.primary", { type: "button", on: { click: add } }, "Add")),
    ];
  });
}
