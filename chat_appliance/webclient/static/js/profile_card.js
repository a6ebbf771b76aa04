// A person's profile card, from any sender name or avatar: name, role, email (as far as the
// organization's email visibility lets this viewer see it), local time, status, custom profile
// fields, "Send direct message", "Mute this user" (or "Unmute this user"), and for administrators
// "Manage user" (role, deactivate; for owners, the address).
import * as api from "./api.js";
import { attempt, field, openDialog } from "./dialog.js";
import { avatar } from "./feed.js";
import { model } from "./model.js";
import { dmView, viewHash } from "./narrow.js";
import { setMuted } from "./settings_lists.js";
import { clear, confirmDialog, h, toast } from "./util.js";

export const ROLES = [[100, "Owner"], [200, "Administrator"], [300, "Moderator"], [400, "Member"], [600, "Guest"]];
export const roleName = (user) => (user.is_bot ? "Bot" : (ROLES.find(([value]) => value === user.role) || [0, "Member"])[1]);

let redraw = null;

// The open card follows these changes (subscribed once, when this module loads).
for (const type of ["realm_user", "user_status", "custom_profile_fields", "muted_users"]) model.on(type, () => redraw?.());

function localTime(zone) {
  if (!zone) return null;
  try {
    return new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", timeZone: zone, timeZoneName: "short" }).format(new Date());
  } catch {
    return null;
  }
}

function statusLine(userId) {
  const status = model.statuses.get(userId);
  if (!status) return null;
  const parts = [];
  if (status.away) parts.push("Away");
  if (status.status_text) parts.push(status.status_text);
  return parts.length ? parts.join(": ") : null;
}

function fieldValue(definition, entry) {
  if (!entry || entry.value === undefined || entry.value === null || entry.value === "") return null;
  if (entry.rendered_value) {
    const el = h("div.rendered");
    el.innerHTML = entry.rendered_value; // sanitised by the server's renderer
    return el;
  }
  if (definition.type === 3) { // a choice: its stored value is the option's key
    try {
      const options = typeof definition.field_data === "string" ? JSON.parse(definition.field_data) : definition.field_data;
      return options?.[entry.value]?.text ?? entry.value;
    } catch {
      return entry.value;
    }
  }
  if (definition.type === 6) { // users
    try {
      return JSON.parse(entry.value).map((id) => model.userName(id)).join(", ");
    } catch {
      return entry.value;
    }
  }
  return String(entry.value);
}

export function openProfileCard(userId) {
  const content = h("div.profile-card");
  let user = model.users.get(userId);
  if (!user) return;
  let details = null; // GET /users/{id}, for the custom profile fields
  const dialog = openDialog(user.full_name, () => content, { className: "profile-dialog" });
  dialog.closed.then(() => {
    redraw = null;
  });

  function draw() {
    user = model.users.get(userId) || user;
    const time = localTime(user.timezone);
    const status = statusLine(userId);
    const email = user.delivery_email || user.email;
    const fields = (model.state.custom_profile_fields || [])
      .map((definition) => [definition, fieldValue(definition, (details || user).profile_data?.[String(definition.id)])])
      .filter(([, value]) => value !== null);
    clear(
      content,
      h("div.profile-head", plainAvatar(userId), h("div", h("div.profile-name", user.full_name), h("div.detail", roleName(user), user.is_active === false ? " (deactivated)" : ""))),
      h(
        "dl.profile-facts",
        email && !/^user\d+@/.test(email) ? [h("dt", "Email"), h("dd", email)] : null,
        time ? [h("dt", "Local time"), h("dd", time)] : null,
        status ? [h("dt", "Status"), h("dd", status)] : null,
        fields.map(([definition, value]) => [h("dt", definition.name), h("dd", value)]),
        [h("dt", "Joined"), h("dd", user.date_joined ? new Date(user.date_joined).toLocaleDateString() : "")],
      ),
      h(
        "div.row",
        userId !== model.myId && !user.is_system_bot
          ? h("button.primary", { type: "button", on: { click: () => { dialog.close(); location.hash = viewHash(dmView([userId])); } } }, "Send direct message")
          : null,
        userId !== model.myId && !user.is_system_bot
          ? h("button", { type: "button", on: { click: () => setMuted(userId, !model.isMutedUser(userId)) } }, model.isMutedUser(userId) ? "Unmute this user" : "Mute this user")
          : null,
        model.isAdmin() && userId !== model.myId && !user.is_system_bot ? h("button", { type: "button", "aria-expanded": "false", on: { click: (e) => toggleManage(e.currentTarget) } }, "Manage user") : null,
      ),
      manage,
    );
  }

  const manage = h("div.manage-user", { hidden: true });
  function toggleManage(button) {
    const open = manage.hidden;
    manage.hidden = !open;
    button.setAttribute("aria-expanded", String(open));
    if (!open) return;
    const role = h("select", { "aria-label": `Role of ${user.full_name}` }, ROLES.map(([value, label]) => h("option", { value: String(value), selected: user.role === value }, label)));
    const newEmail = h("input", { type: "email", required: true, maxlength: "254", "aria-label": `New email for ${user.full_name}` });
    clear(
      manage,
      h(
        "form.inline-form",
        { on: { submit: async (event) => { event.preventDefault(); await attempt(() => api.patch(`users/${userId}`, { role: Number(role.value) }), "Role changed."); } } },
        field("Role", role),
        h("button.primary", { type: "submit" }, "Change role"),
      ),
      // Zulip's rule: only an owner holding the can_change_user_emails permission (granted on the
      // server: `chat-appliance set-permission`) changes someone else's address; it changes at once.
      model.me()?.is_owner && !user.is_bot ? h(
        "form.inline-form",
        { on: { submit: async (event) => { event.preventDefault(); if (await attempt(() => api.patch(`users/${userId}`, { new_email: newEmail.value.trim() }), "Email changed.")) newEmail.value = ""; } } },
        field("New email", newEmail),
        h("p.detail", "Owners with the server's can_change_user_emails permission (chat-appliance set-permission) change it at once."),
        h("button", { type: "submit" }, "Change email"),
      ) : null,
      user.is_active === false
        ? h("button", { type: "button", on: { click: () => attempt(() => api.post(`users/${userId}/reactivate`), "User reactivated.") } }, "Reactivate user")
        : h("button.danger", {
            type: "button",
            on: {
              click: async () => {
                if (!(await confirmDialog(`Deactivate ${user.full_name}? They are signed out and cannot sign in again.`, "Deactivate"))) return;
                if (await attempt(() => api.del(`users/${userId}`), "User deactivated.")) dialog.close();
              },
            },
          }, "Deactivate user"),
    );
  }

  // The custom profile fields come from GET /users/{id}, asked again after each change.
  const refresh = () => {
    if (user.is_bot) return;
    api.get(`users/${userId}`, { include_custom_profile_fields: true }).then((data) => {
      details = data.user;
      if (redraw === update) draw();
    }).catch(() => {});
  };
  const update = () => {
    draw();
    refresh();
  };
  redraw = update;
  update();
}

// The card's own picture opens nothing.
function plainAvatar(userId) {
  const picture = avatar(userId, ".large");
  delete picture.dataset.profileUser;
  return picture;
}

// Settings > Profile: one's own answers to the organization's custom profile fields.
export async function ownProfileFields(root) {
  const definitions = (model.state.custom_profile_fields || []).filter((f) => f.type !== 6);
  if (!definitions.length) return;
  let mine = {};
  try {
    mine = (await api.get(`users/${model.myId}`, { include_custom_profile_fields: true })).user.profile_data || {};
  } catch {
    /* the inputs start empty */
  }
  const inputs = definitions.map((definition) => {
    const value = mine[String(definition.id)]?.value ?? "";
    const locked = definition.editable_by_user === false && !model.isAdmin();
    let input;
    if (definition.type === 3) {
      let options = {};
      try {
        options = typeof definition.field_data === "string" ? JSON.parse(definition.field_data) : definition.field_data || {};
      } catch {
        options = {};
      }
      input = h("select", h("option", { value: "" }, "(none)"), Object.entries(options).sort((a, b) => Number(a[1].order) - Number(b[1].order))
        .map(([key, option]) => h("option", { value: key, selected: key === value }, option.text)));
    } else if (definition.type === 2) {
      input = h("textarea", { rows: 2 }, value);
    } else {
      input = h("input", { type: definition.type === 4 ? "date" : definition.type === 5 ? "url" : "text", value });
    }
    input.setAttribute("aria-label", definition.name);
    if (definition.hint) input.setAttribute("placeholder", definition.hint);
    input.disabled = locked;
    return [definition, input, value];
  });
  root.append(h(
    "form.inline-form",
    {
      on: {
        submit: async (event) => {
          event.preventDefault();
          const changed = inputs.filter(([, input, value]) => !input.disabled && input.value !== value);
          if (!changed.length) return;
          const set = changed.filter(([, input]) => input.value !== "").map(([definition, input]) => ({ id: definition.id, value: input.value }));
          const cleared = changed.filter(([, input]) => input.value === "").map(([definition]) => definition.id);
          const done = (!set.length || await attempt(() => api.patch("users/me/profile_data", { data: set })))
            && (!cleared.length || await attempt(() => api.del("users/me/profile_data", { data: cleared })));
          if (done) {
            for (const entry of changed) entry[2] = entry[1].value;
            toast("Profile fields saved.");
          }
        },
      },
    },
    h("h4", "About you"),
    inputs.map(([definition, input]) => field(definition.name, input)),
    h("button.primary", { type: "submit" }, "Save profile fields"),
  ));
}
