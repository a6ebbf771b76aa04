// Settings > Users (administrators): everyone in the organization with search, filters (role,
// active or deactivated, bots), role changes, deactivation and reactivation, and "Invite more".
import * as api from "./api.js";
import { attempt } from "./dialog.js";
import { model } from "./model.js";
import { ROLES, roleName } from "./profile_card.js";
import { clear, confirmDialog, h } from "./util.js";

export async function usersPanel(root, { showSection }) {
  const search = h("input", { type: "search", placeholder: "Search by name or email", "aria-label": "Search users" });
  const roleFilter = h("select", { "aria-label": "Filter by role" }, h("option", { value: "" }, "Any role"), ROLES.map(([value, label]) => h("option", { value: String(value) }, label)));
  const stateFilter = h("select", { "aria-label": "Filter by status" }, h("option", { value: "active" }, "Active"), h("option", { value: "deactivated" }, "Deactivated"), h("option", { value: "" }, "Active and deactivated"));
  const bots = h("input", { type: "checkbox", "aria-label": "Include bots" });
  const body = h("tbody");
  root.append(
    h("div.user-filters", search, roleFilter, stateFilter, h("label.check", bots, " Include bots"),
      h("button", { type: "button", on: { click: () => showSection("invites") } }, "Invite more")),
    h("table.user-table", h("thead", h("tr", h("th", { scope: "col" }, "Name"), h("th", { scope: "col" }, "Email"), h("th", { scope: "col" }, "Role"), h("th", { scope: "col" }, "Actions"))), body),
  );
  const data = await attempt(() => api.get("users", { client_gravatar: true }));
  if (!data) return;
  const people = data.members.sort((a, b) => a.full_name.localeCompare(b.full_name));
  const draw = () => {
    const text = search.value.trim().toLowerCase();
    const shown = people.filter((u) =>
      (bots.checked || !u.is_bot)
      && (!roleFilter.value || u.role === Number(roleFilter.value))
      && (!stateFilter.value || (stateFilter.value === "active") === (u.is_active !== false))
      && (!text || u.full_name.toLowerCase().includes(text) || (u.delivery_email || u.email).toLowerCase().includes(text)));
    clear(body, shown.length ? shown.map(row) : h("tr", h("td.detail", { colspan: "4" }, "Nobody matches.")));
  };
  for (const control of [search, roleFilter, stateFilter, bots]) control.addEventListener(control === search ? "input" : "change", draw);
  function row(user) {
    const self = user.user_id === model.myId;
    const role = user.is_bot
      ? h("span", roleName(user))
      : h("select", { "aria-label": `Role of ${user.full_name}`, disabled: self }, ROLES.map(([value, label]) => h("option", { value: String(value), selected: user.role === value }, label)));
    if (!user.is_bot) role.addEventListener("change", async () => {
      if (await attempt(() => api.patch(`users/${user.user_id}`, { role: Number(role.value) }), "Role changed.")) user.role = Number(role.value);
    });
    const toggle = h("button", {
      type: "button",
      disabled: self,
      on: {
        click: async () => {
          if (user.is_active) {
            if (!(await confirmDialog(`Deactivate ${user.full_name}?`, "Deactivate"))) return;
            if (await attempt(() => api.del(`users/${user.user_id}`), "User deactivated.")) user.is_active = false;
          } else if (await attempt(() => api.post(`users/${user.user_id}/reactivate`), "User reactivated.")) user.is_active = true;
          toggle.textContent = user.is_active ? "Deactivate" : "Reactivate";
        },
      },
    }, user.is_active ? "Deactivate" : "Reactivate");
    return h("tr", h("td", h("button.link-like", { type: "button", dataset: { profileUser: user.user_id } }, user.full_name)), h("td", user.delivery_email || user.email), h("td", role), h("td", toggle));
  }
  draw();
}
