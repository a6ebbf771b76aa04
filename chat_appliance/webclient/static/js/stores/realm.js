// The organization and the user's own settings: the rest of /register's state (realm_*,
// user_settings, user groups, bots, custom emoji, linkifiers, playgrounds, profile fields...).
export const realm = { state: null };

export function load(state) {
  realm.state = state;
}

const state = () => realm.state;

// realm: one setting (update), or several of a group (update_dict).
export function apply(event) {
  if (event.op === "update") state()[`realm_${event.property}`] = event.value;
  else if (event.op === "update_dict") for (const [k, v] of Object.entries(event.data)) state()[`realm_${k}`] = v;
}

export function applyUserSettings(event) {
  if (event.op === "update") (state().user_settings ||= {})[event.property] = event.value;
}

export function applyBot(event) {
  const bots = (state().realm_bots ||= []);
  const index = bots.findIndex((b) => b.user_id === (event.bot?.user_id ?? event.bot_id));
  if (event.op === "add" && index < 0) bots.push(event.bot);
  else if (event.op === "update" && index >= 0) Object.assign(bots[index], event.bot);
  else if ((event.op === "remove" || event.op === "delete") && index >= 0) bots.splice(index, 1);
}

export function applyGroup(event) {
  const groups = (state().realm_user_groups ||= []);
  const group = groups.find((g) => g.id === (event.group_id ?? event.group?.id));
  if (event.op === "add" && !group) groups.push(event.group);
  else if (event.op === "update" && group) Object.assign(group, event.data);
  else if (event.op === "remove") state().realm_user_groups = groups.filter((g) => g.id !== event.group_id);
  else if (event.op === "add_members" && group) group.members = [...new Set([...(group.members || []), ...event.user_ids])];
  else if (event.op === "remove_members" && group) group.members = (group.members || []).filter((id) => !event.user_ids.includes(id));
  else if (event.op === "add_subgroups" && group) group.direct_subgroup_ids = [...new Set([...(group.direct_subgroup_ids || []), ...event.direct_subgroup_ids])];
  else if (event.op === "remove_subgroups" && group) group.direct_subgroup_ids = (group.direct_subgroup_ids || []).filter((id) => !event.direct_subgroup_ids.includes(id));
}

// Lists the server always sends whole.
export const applyEmoji = (event) => { if (event.op === "update") state().realm_emoji = event.realm_emoji; };
export const applyLinkifiers = (event) => { state().realm_linkifiers = event.realm_linkifiers; };
export const applyPlaygrounds = (event) => { state().realm_playgrounds = event.realm_playgrounds; };
export const applyProfileFields = (event) => { state().custom_profile_fields = event.fields; };
export const applyDefaultStreams = (event) => { state().realm_default_streams = event.default_streams.map((s) => s.stream_id ?? s); };
export const applyMutedUsers = (event) => { state().muted_users = event.muted_users; };
export const applyAlertWords = (event) => { state().alert_words = event.alert_words; };
