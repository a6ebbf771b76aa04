// The people of the organization (active, deactivated, cross-realm bots), who "I" am, and each
// one's status (away, text, emoji): the only copy of user_status in the page.
export const users = new Map();
export const statuses = new Map(); // user id -> {status_text, emoji_name, emoji_code, away}
export const me = { id: null };

export function load(state) {
  me.id = state.user_id;
  users.clear();
  for (const user of [...state.realm_users, ...(state.realm_non_active_users || []), ...(state.cross_realm_bots || [])]) {
    users.set(user.user_id, user);
  }
  statuses.clear();
  for (const [id, status] of Object.entries(state.user_status || {})) statuses.set(Number(id), status);
  delete state.user_status; // statuses holds it from now on
}

// realm_user: a person joined, changed (name, role, avatar, a custom profile field) or left.
export function apply(event) {
  const user = users.get(event.person.user_id);
  if (event.op === "add") users.set(event.person.user_id, event.person);
  else if (event.op === "update" && user) {
    const { custom_profile_field: field, new_email: newEmail, ...changed } = event.person;
    Object.assign(user, changed);
    if (newEmail !== undefined) user.email = newEmail; // the API email (Zulip's field for it)
    if (changed.role !== undefined) Object.assign(user, { is_admin: changed.role <= 200, is_owner: changed.role === 100 });
    if (field) {
      user.profile_data ||= {};
      if (field.value === null || field.value === undefined) delete user.profile_data[String(field.id)];
      else user.profile_data[String(field.id)] = field.rendered_value === undefined ? { value: field.value } : { value: field.value, rendered_value: field.rendered_value };
    }
  } else if (event.op === "remove" && user) user.is_active = false;
}

// user_status: only the parts that changed.
export function applyStatus(event) {
  const { type, id, user_id: userId, ...status } = event;
  statuses.set(userId, { ...(statuses.get(userId) || {}), ...status });
}
