// The channel settings dialog, from a channel's view: name, description (with its Markdown
// preview), privacy, who may post and the other per-channel permission groups, archiving,
// members (list, add with suggestions, remove), and the viewer's own settings for the channel.
// Everything changes through the API; other pages follow through stream/subscription events.
import * as api from "./api.js";
import { attempt, field, groupOptions, openDialog, suggestBox } from "./dialog.js";
import { model } from "./model.js";
import { clear, confirmDialog, debounce, h, toast } from "./util.js";

// The per-channel permission groups Zulip offers, with what each one decides.
const GROUP_SETTINGS = [
  ["can_send_message_group", "Who can post"],
  ["can_add_subscribers_group", "Who can subscribe others"],
  ["can_remove_subscribers_group", "Who can unsubscribe others"],
  ["can_subscribe_group", "Who can subscribe themselves"],
  ["can_administer_channel_group", "Who can administer this channel"],
  ["can_move_messages_within_channel_group", "Who can move messages within this channel"],
  ["can_move_messages_out_of_channel_group", "Who can move messages out of this channel"],
  ["can_resolve_topics_group", "Who can resolve topics"],
  ["can_delete_any_message_group", "Who can delete any message"],
  ["can_delete_own_message_group", "Who can delete their own messages"],
];

const PRIVACY = [
  ["public", "Public: anyone can join and read its history"],
  ["private-shared", "Private, shared history: members see all of its history"],
  ["private-protected", "Private, protected history: members see only what arrives after they join"],
];

const privacyOf = (stream) => (!stream.invite_only ? "public" : stream.history_public_to_subscribers ? "private-shared" : "private-protected");

let refreshOpen = null; // redraws the open dialog after an event, if one is open

// The open dialog follows these changes (subscribed once, when this module loads).
for (const type of ["stream", "subscription", "realm_user", "user_group"]) {
  model.on(type, (event) => refreshOpen?.(type, event));
}

export function openChannelSettings(streamId) {
  const stream = () => model.streams.get(streamId) || {};
  const admin = model.isAdmin();
  const sections = h("div.channel-settings");
  const memberList = h("ul.member-list", { "aria-label": "Members" });
  let memberIds = [];
  const dialog = openDialog(`Channel settings: #${stream().name}`, () => sections, { className: "channel-settings-dialog" });
  dialog.closed.then(() => {
    refreshOpen = null;
  });

  // --- name and description
  const name = h("input", { type: "text", value: stream().name || "", maxlength: "60", required: true, "aria-label": "Channel name", disabled: !admin });
  const description = h("textarea", { rows: 3, maxlength: "1024", "aria-label": "Channel description", disabled: !admin }, stream().description || "");
  const preview = h("div.description-preview.rendered", { "aria-label": "Description preview", role: "region" });
  const showPreview = async () => {
    const text = description.value.trim();
    if (!text) return clear(preview, h("span.detail", "No description."));
    try {
      const { rendered } = await api.post("messages/render", { content: text });
      preview.innerHTML = rendered; // sanitised by the server's renderer
    } catch {
      /* the preview is a nicety */
    }
  };
  const previewSoon = debounce(showPreview, 300);
  description.addEventListener("input", previewSoon);
  showPreview();
  const general = h(
    "form.inline-form",
    {
      on: {
        submit: async (event) => {
          event.preventDefault();
          const changes = {};
          if (name.value.trim() !== stream().name) changes.new_name = name.value.trim();
          if (description.value !== (stream().description || "")) changes.description = description.value;
          if (!Object.keys(changes).length) return;
          await attempt(() => api.patch(`streams/${streamId}`, changes), "Channel saved.");
        },
      },
    },
    h("h3", "General"),
    field("Channel name", name),
    field("Channel description", description),
    h("div.field", h("span", "Preview"), preview),
    admin ? h("button.primary", { type: "submit" }, "Save changes") : null,
  );

  // --- privacy and permissions
  const privacy = h("select", { "aria-label": "Privacy" }, PRIVACY.map(([value, label]) => h("option", { value, selected: privacyOf(stream()) === value }, label)));
  const groupSelects = GROUP_SETTINGS.map(([key, label]) => [key, h("select", { "aria-label": label }, groupOptions(model.state.realm_user_groups, stream()[key]))]);
  const permissions = admin
    ? h(
        "form.inline-form",
        {
          on: {
            submit: async (event) => {
              event.preventDefault();
              const changes = {};
              if (privacy.value !== privacyOf(stream())) {
                changes.is_private = privacy.value !== "public";
                changes.history_public_to_subscribers = privacy.value !== "private-protected";
              }
              for (const [key, select] of groupSelects) {
                if (select.value && Number(select.value) !== stream()[key]) changes[key] = Number(select.value);
              }
              if (!Object.keys(changes).length) return;
              await attempt(() => api.patch(`streams/${streamId}`, changes), "Permissions saved.");
            },
          },
        },
        h("h3", "Privacy and permissions"),
        field("Privacy", privacy),
        groupSelects.map(([key, select]) => field(GROUP_SETTINGS.find(([k]) => k === key)[1], select)),
        h("button.primary", { type: "submit" }, "Save permissions"),
      )
    : null;

  // --- members
  const candidates = (text) => {
    const lowered = text.toLowerCase();
    return [...model.users.values()]
      .filter((u) => u.is_active !== false && !u.is_system_bot && !memberIds.includes(u.user_id))
      .filter((u) => u.full_name.toLowerCase().includes(lowered) || (u.email || "").toLowerCase().includes(lowered))
      .sort((a, b) => a.full_name.localeCompare(b.full_name))
      .map((u) => ({ label: u.full_name, value: u.user_id }));
  };
  let chosen = null;
  const adder = suggestBox("Add members", candidates, (item, input) => {
    chosen = item.value;
    input.value = item.label;
  });
  adder.input.placeholder = "Type a name or email";
  adder.input.addEventListener("input", () => {
    chosen = null;
  });
  const addMember = async (event) => {
    event.preventDefault();
    const text = adder.input.value.trim();
    // The suggestion picked; else the person named or addressed exactly; else the only match.
    const matches = text ? candidates(text) : [];
    const user = chosen !== null ? model.users.get(chosen)
      : (text && model.userByEmailOrName(text)) || (matches.length === 1 ? model.users.get(matches[0].value) : null);
    if (!user) {
      if (text) toast(matches.length ? "Pick one of the suggestions." : `Nobody called ${text}.`, "error");
      return;
    }
    const done = await attempt(() => api.post("users/me/subscriptions", { subscriptions: [{ name: stream().name }], principals: [user.user_id] }), `${user.full_name} added.`);
    if (done) {
      adder.input.value = "";
      chosen = null;
      fillMembers();
    }
  };
  const members = h(
    "section.members",
    { "aria-label": "Members", role: "region" },
    h("h3", "Members"),
    h("form.add-member", { on: { submit: addMember } }, adder.element, h("button.primary", { type: "submit" }, "Add")),
    memberList,
  );
  async function fillMembers() {
    const data = await attempt(() => api.get(`streams/${streamId}/members`));
    if (!data) return;
    memberIds = data.subscribers;
    drawMembers();
  }
  function drawMembers() {
    const people = memberIds.map((id) => model.users.get(id)).filter(Boolean).sort((a, b) => a.full_name.localeCompare(b.full_name));
    clear(
      memberList,
      people.length
        ? people.map((user) => h(
            "li",
            h("span.member-name", user.full_name),
            h("span.detail", user.email),
            h("button", {
              type: "button",
              "aria-label": `Remove ${user.full_name}`,
              on: {
                click: async () => {
                  const done = await attempt(() => api.del("users/me/subscriptions", { subscriptions: [stream().name], principals: [user.user_id] }), `${user.full_name} removed.`);
                  if (done) fillMembers();
                },
              },
            }, "Remove"),
          ))
        : h("li.detail", "No members."),
    );
  }
  fillMembers();

  // --- the viewer's own settings
  const personal = h("form.inline-form.personal");
  function drawPersonal() {
    const sub = model.subs.get(streamId);
    if (!sub) return clear(personal, h("h3", "Your settings"), h("p.detail", "Subscribe to the channel to set its colour and notifications."));
    const setProp = (property, value) => attempt(() => api.post("users/me/subscriptions/properties", { subscription_data: [{ stream_id: streamId, property, value }] }));
    const check = (property, label) => h("label.check", h("input", { type: "checkbox", checked: !!sub[property], on: { change: (e) => setProp(property, e.target.checked) } }), ` ${label}`);
    clear(
      personal,
      h("h3", "Your settings"),
      field("Colour", h("input", { type: "color", value: /^#[0-9a-f]{6}$/i.test(sub.color || "") ? sub.color : "#888888", on: { change: (e) => setProp("color", e.target.value) } })),
      check("is_muted", "Mute this channel"),
      check("pin_to_top", "Pin to the top of the channel list"),
      check("desktop_notifications", "Desktop notifications"),
      check("audible_notifications", "Sound"),
    );
  }
  drawPersonal();

  // --- archiving
  const archive = admin
    ? h(
        "div.danger-zone",
        h("h3", "Archive"),
        stream().is_archived
          ? h("button", { type: "button", on: { click: () => attempt(() => api.patch(`streams/${streamId}`, { is_archived: false }), "Channel unarchived.") } }, "Unarchive channel")
          : h("button.danger", {
              type: "button",
              on: {
                click: async () => {
                  if (!(await confirmDialog(`Archive #${stream().name}? Nobody can post in it afterwards; its messages stay.`, "Archive"))) return;
                  const done = await attempt(() => api.del(`streams/${streamId}`), "Channel archived.");
                  if (done) {
                    dialog.close();
                    location.hash = "#feed";
                  }
                },
              },
            }, "Archive channel"),
      )
    : null;

  clear(sections, general, members, personal, permissions, archive);

  refreshOpen = (type, event) => {
    if (type === "subscription" && (event.op === "peer_add" || event.op === "peer_remove")) {
      if ((event.stream_ids || []).includes(streamId)) fillMembers();
      return;
    }
    if (type === "subscription") drawPersonal();
    if (type === "stream" && event.stream_id === streamId && event.op === "update") {
      if (event.property === "name" && document.activeElement !== name) name.value = event.value;
      if (event.property === "description" && document.activeElement !== description) {
        description.value = event.value;
        showPreview();
      }
      dialog.setAttribute("aria-label", `Channel settings: #${stream().name}`);
      dialog.querySelector(".admin-dialog-head h2").textContent = `Channel settings: #${stream().name}`;
    }
    if (type === "stream" && event.op === "delete" && (event.streams || []).some((s) => s.stream_id === streamId)) dialog.close();
    if (type === "realm_user") drawMembers();
  };
}

// The channel view's header: its description, and the "Channel settings" button.
export function channelHeader(streamId, { withButton = true } = {}) {
  const stream = model.streams.get(streamId);
  if (!stream) return [];
  const description = h("div.channel-description.rendered");
  description.innerHTML = stream.rendered_description || ""; // the server's sanitised rendering
  return [
    description,
    withButton && h("button.channel-settings-button.text-icon", { type: "button", title: "Channel settings", "aria-label": "Channel settings", on: { click: () => openChannelSettings(streamId) } }, "\u2699 Settings"),
  ];
}

// Settings > Channels, for administrators: archived channels, each with "Unarchive".
export async function archivedChannels(root) {
  if (!model.isAdmin()) return;
  const list = h("ul.member-list", { "aria-label": "Archived channels" });
  root.append(h("h4", "Archived channels"), list);
  const fill = async () => {
    const data = await attempt(() => api.get("streams", { exclude_archived: false }));
    if (!data) return;
    const archived = data.streams.filter((s) => s.is_archived).sort((a, b) => a.name.localeCompare(b.name));
    clear(list, archived.length
      ? archived.map((s) => h("li", h("span.member-name", `#${s.name}`), h("button", {
          type: "button",
          "aria-label": `Unarchive ${s.name}`,
          on: { click: async () => { if (await attempt(() => api.patch(`streams/${s.stream_id}`, { is_archived: false }), `#${s.name} is back.`)) fill(); } },
        }, "Unarchive")))
      : h("li.detail", "None."));
  };
  fill();
}
