// Settings for administrators: the organization (name, description, default channels, who may
// invite, create channels, edit and delete messages, with the time limits), custom emoji,
// linkifiers and code playgrounds, and custom profile fields. Other pages follow through the
// realm, default_streams, realm_emoji, realm_linkifiers, realm_playgrounds and
// custom_profile_fields events.
import * as api from "./api.js";
import { attempt, field, groupOptions } from "./dialog.js";
import { model } from "./model.js";
import { clear, confirmDialog, h } from "./util.js";

// Redraw an open panel's list when an event of `type` arrives; forgotten once it is closed. The
// one listener is added when a panel first asks.
const redraws = new Map();
function onAdminEvent(type, fill, element) {
  if (!redraws.has(type)) {
    model.on(type, () => {
      const entry = redraws.get(type);
      if (!entry) return;
      if (entry.element.isConnected) entry.fill();
      else redraws.delete(type);
    });
  }
  redraws.set(type, { fill, element });
}

const WHO = [
  ["can_invite_users_group", "Who can invite people"],
  ["create_multiuse_invite_group", "Who can create invitation links"],
  ["can_create_public_channel_group", "Who can create public channels"],
  ["can_create_private_channel_group", "Who can create private channels"],
  ["can_add_subscribers_group", "Who can add people to channels"],
  ["can_move_messages_between_topics_group", "Who can move messages between topics"],
  ["can_move_messages_between_channels_group", "Who can move messages between channels"],
  ["can_delete_own_message_group", "Who can delete their own messages"],
  ["can_delete_any_message_group", "Who can delete any message"],
];

// Time limits: select values in seconds, "unlimited" for none.
const LIMITS = [["unlimited", "No limit"], ["120", "2 minutes"], ["600", "10 minutes"], ["3600", "1 hour"], ["86400", "1 day"], ["604800", "1 week"]];
const limitSelect = (label, seconds, unlimitedValue) => {
  const value = seconds === unlimitedValue || seconds === null ? "unlimited" : String(seconds);
  const options = LIMITS.map(([v, text]) => h("option", { value: v, selected: v === value }, text));
  if (!LIMITS.some(([v]) => v === value)) options.push(h("option", { value, selected: true }, `${seconds} seconds`));
  return h("select", { "aria-label": label }, options);
};

export function organizationPanel(root) {
  const s = model.state;
  const name = h("input", { type: "text", required: true, maxlength: "40", value: s.realm_name, "aria-label": "Organization name" });
  const description = h("textarea", { rows: 3, maxlength: "1000", "aria-label": "Organization description" }, s.realm_description || "");
  // The address invitations and mails carry. The server's configuration decides it
  // (EXTERNAL_HOST, TLS_DOMAIN, or `chat-appliance set-realm-url`), so it is shown, not edited.
  const url = h("output", { "aria-label": "Organization URL" });
  const address = h("p.detail", "Organization URL: ", url,
    " (invitations and mails link here; the server's administrator changes it with EXTERNAL_HOST or TLS_DOMAIN, or `chat-appliance set-realm-url`)");
  api.get("/api/v1/server_settings").then((settings) => { url.textContent = settings.realm_url; }, () => {});
  root.append(
    h(
      "form.inline-form",
      {
        on: {
          submit: async (event) => {
            event.preventDefault();
            const changes = {};
            if (name.value.trim() !== s.realm_name) changes.name = name.value.trim();
            if (description.value !== (s.realm_description || "")) changes.description = description.value;
            if (Object.keys(changes).length) await attempt(() => api.patch("realm", changes), "Organization saved.");
          },
        },
      },
      h("h4", "Profile"),
      field("Organization name", name),
      field("Organization description", description),
      h("button.primary", { type: "submit" }, "Save changes"),
    ),
    address,
    iconForm(),
    authenticationMethods(),
    videoCallForm(),
  );
  defaultChannels(root);
  permissions(root);
}

// Which ways to sign in are on: the server's configuration decides (docs/auth-ldap.md,
// docs/auth-oidc.md), so this is a read-only list.
function authenticationMethods() {
  const methods = model.state.realm_authentication_methods || {};
  return h(
    "section.auth-methods",
    { "aria-label": "Authentication methods" },
    h("h4", "Authentication methods"),
    h("ul", Object.entries(methods).map(([label, m]) => h("li", `${label}: ${m.enabled ? "on" : "off"}`))),
    h("p.detail", "Set by the server's configuration (AUTHENTICATION_BACKENDS)."),
  );
}

function iconForm() {
  const preview = h("img.realm-icon-preview", { src: model.state.realm_icon_url || "/static/webclient/realm-icon.png", alt: "The organization's icon", width: 48, height: 48 });
  const file = h("input", { type: "file", accept: "image/png,image/jpeg,image/gif,image/webp", "aria-label": "Icon image" });
  const show = (url) => {
    if (url) preview.src = url;
  };
  return h(
    "form.inline-form",
    {
      on: {
        submit: async (event) => {
          event.preventDefault();
          if (!file.files[0]) return;
          const form = new FormData();
          form.append("file", file.files[0], file.files[0].name);
          const data = await attempt(() => api.call("POST", "realm/icon", null, { body: form }), "Icon changed.");
          if (data) {
            file.value = "";
            show(data.icon_url);
          }
        },
      },
    },
    h("h4", "Icon"),
    h("div.row", preview, field("Icon image", file)),
    h("div.row",
      h("button.primary", { type: "submit" }, "Upload icon"),
      model.state.realm_icon_source === "U"
        ? h("button", { type: "button", on: { click: async () => { if (await attempt(() => api.del("realm/icon"), "Default icon restored.")) show(`/static/webclient/realm-icon.png?${Date.now()}`); } } }, "Use the default icon")
        : null),
  );
}

// Video calls, as Zulip's organization settings: the provider compose's "Add video call" uses
// (None hides the button) and the Jitsi server (empty: the server's).
function videoCallForm() {
  const s = model.state;
  const providers = Object.values(s.realm_available_video_chat_providers || { disabled: { name: "None", id: 0 }, jitsi_meet: { name: "Jitsi Meet", id: 1 } });
  const provider = h("select", { "aria-label": "Video call provider" },
    providers.map((p) => h("option", { value: String(p.id), selected: p.id === (s.realm_video_chat_provider ?? 1) }, p.name)));
  const server = h("input", { type: "url", value: s.realm_jitsi_server_url || "", placeholder: s.server_jitsi_server_url || "https://meet.jit.si", "aria-label": "Jitsi server URL" });
  return h("form.inline-form", {
    on: {
      submit: async (event) => {
        event.preventDefault();
        const changes = {};
        if (Number(provider.value) !== (s.realm_video_chat_provider ?? 1)) changes.video_chat_provider = Number(provider.value);
        const url = server.value.trim();
        if (url !== (s.realm_jitsi_server_url || "")) changes.jitsi_server_url = JSON.stringify(url || "default");
        if (Object.keys(changes).length) await attempt(() => api.patch("realm", changes), "Video call settings saved.");
      },
    },
  },
  h("h4", "Video calls"),
  field("Video call provider", provider),
  field("Jitsi server URL", server),
  h("button.primary", { type: "submit" }, "Save video call settings"));
}

function defaultChannels(root) {
  const list = h("ul.default-channels", { "aria-label": "Default channels" });
  const add = h("select", { "aria-label": "Channel to add to the defaults" });
  const draw = () => {
    const ids = new Set(model.state.realm_default_streams || []);
    clear(
      list,
      ids.size
        ? [...ids].map((id) => h("li", h("span", `#${model.streamName(id)}`), h("button", {
            type: "button",
            "aria-label": `Remove ${model.streamName(id)} from the default channels`,
            on: { click: async () => { if (await attempt(() => api.del("default_streams", { stream_id: id }), "Default channels changed.")) { model.state.realm_default_streams = [...ids].filter((x) => x !== id); draw(); } } },
          }, "Remove")))
        : h("li.detail", "None: newcomers join no channel."),
    );
    clear(add, [...model.streams.values()].filter((st) => !st.invite_only && !st.is_archived && !ids.has(st.stream_id))
      .sort((a, b) => a.name.localeCompare(b.name)).map((st) => h("option", { value: String(st.stream_id) }, st.name)));
  };
  root.append(
    h("h4", "Default channels"),
    h("p.detail", "Newcomers join these, and invitations tick them. Only public channels can be defaults."),
    list,
    h("form.row", { on: { submit: async (event) => {
      event.preventDefault();
      if (!add.value) return;
      const id = Number(add.value);
      if (await attempt(() => api.post("default_streams", { stream_id: id }), "Default channels changed.")) {
        model.state.realm_default_streams = [...new Set([...(model.state.realm_default_streams || []), id])];
        draw();
      }
    } } }, add, h("button", { type: "submit" }, "Add default channel")),
  );
  draw();
}

function permissions(root) {
  const s = model.state;
  const selects = WHO.map(([key, label]) => [key, h("select", { "aria-label": label }, groupOptions(s.realm_user_groups, s[`realm_${key}`]))]);
  const editing = h("input", { type: "checkbox", checked: !!s.realm_allow_message_editing });
  const emailLocked = h("input", { type: "checkbox", checked: !!s.realm_email_changes_disabled });
  const editLimit = limitSelect("Time limit for editing messages", s.realm_message_content_edit_limit_seconds, 0);
  const deleteLimit = limitSelect("Time limit for deleting messages", s.realm_message_content_delete_limit_seconds, null);
  const moveLimit = limitSelect("Time limit for moving messages between topics", s.realm_move_messages_within_stream_limit_seconds, null);
  root.append(h(
    "form.inline-form",
    {
      on: {
        submit: async (event) => {
          event.preventDefault();
          const changes = {};
          for (const [key, select] of selects) if (select.value && Number(select.value) !== s[`realm_${key}`]) changes[key] = Number(select.value);
          if (editing.checked !== !!s.realm_allow_message_editing) changes.allow_message_editing = editing.checked;
          if (emailLocked.checked !== !!s.realm_email_changes_disabled) changes.email_changes_disabled = emailLocked.checked;
          changes.message_content_edit_limit_seconds = editLimit.value;
          changes.message_content_delete_limit_seconds = deleteLimit.value;
          changes.move_messages_within_stream_limit_seconds = moveLimit.value;
          await attempt(() => api.patch("realm", changes), "Permissions saved.");
        },
      },
    },
    h("h4", "Permissions"),
    selects.map(([key, select]) => field(WHO.find(([k]) => k === key)[1], select)),
    h("label.check", editing, " People can edit their messages"),
    h("label.check", emailLocked, " Prevent users from changing their email address"),
    field("Time limit for editing messages", editLimit),
    field("Time limit for deleting messages", deleteLimit),
    field("Time limit for moving messages between topics", moveLimit),
    h("button.primary", { type: "submit" }, "Save permissions"),
  ));
}

// --- custom emoji ---------------------------------------------------------------------------------

export function emojiPanel(root) {
  const name = h("input", { type: "text", required: true, maxlength: "60", pattern: "[a-z0-9_\\- ]+", "aria-label": "Emoji name" });
  const file = h("input", { type: "file", required: true, accept: "image/png,image/gif,image/jpeg,image/webp", "aria-label": "Emoji image" });
  const list = h("ul.emoji-admin-list", { "aria-label": "Custom emoji" });
  root.append(
    h("form.inline-form", {
      on: {
        submit: async (event) => {
          event.preventDefault();
          if (!file.files[0]) return;
          const form = new FormData();
          form.append("file", file.files[0], file.files[0].name);
          const wanted = name.value.trim();
          if (await attempt(() => api.call("POST", `realm/emoji/${encodeURIComponent(wanted)}`, null, { body: form }), `Emoji :${wanted}: added.`)) {
            name.value = "";
            file.value = "";
            fill();
          }
        },
      },
    }, h("h4", "Add an emoji"), field("Emoji name", name), field("Emoji image", file), h("button.primary", { type: "submit" }, "Add emoji")),
    h("h4", "Custom emoji"),
    list,
  );
  async function fill() {
    const data = await attempt(() => api.get("realm/emoji"));
    if (!data) return;
    model.state.realm_emoji = data.emoji;
    const active = Object.values(data.emoji).filter((e) => !e.deactivated).sort((a, b) => a.name.localeCompare(b.name));
    clear(list, active.length ? active.map((e) => h("li",
      h("img.emoji", { src: e.source_url, alt: `:${e.name}:`, width: 24, height: 24 }),
      h("code", `:${e.name}:`),
      h("span.detail", model.userName(e.author_id)),
      h("button", { type: "button", "aria-label": `Delete emoji ${e.name}`, on: { click: async () => {
        if (!(await confirmDialog(`Delete the emoji :${e.name}:?`, "Delete"))) return;
        if (await attempt(() => api.del(`realm/emoji/${encodeURIComponent(e.name)}`), "Emoji deleted.")) fill();
      } } }, "Delete"),
    )) : h("li.detail", "No custom emoji yet."));
  }
  fill();
}

// --- linkifiers and code playgrounds ------------------------------------------------------------

export function linkifiersPanel(root) {
  const pattern = h("input", { type: "text", required: true, placeholder: "#(?P<id>[0-9]+)", "aria-label": "Pattern" });
  const template = h("input", { type: "text", required: true, placeholder: "https://tracker.example.com/issues/{id}", "aria-label": "URL template" });
  const linkifiers = h("ul.linkifier-list", { "aria-label": "Linkifiers" });
  const pgName = h("input", { type: "text", required: true, placeholder: "Rust playground", "aria-label": "Playground name" });
  const pgLanguage = h("input", { type: "text", required: true, placeholder: "Rust", "aria-label": "Language" });
  const pgTemplate = h("input", { type: "text", required: true, placeholder: "https://play.rust-lang.org/?code={code}", "aria-label": "Playground URL template" });
  const playgrounds = h("ul.playground-list", { "aria-label": "Code playgrounds" });
  root.append(
    h("p.detail", "A linkifier turns text matching a pattern into a link, such as #123 into the tracker's issue 123."),
    h("form.inline-form", { on: { submit: async (event) => {
      event.preventDefault();
      if (await attempt(() => api.post("realm/filters", { pattern: pattern.value, url_template: template.value }), "Linkifier added.")) {
        pattern.value = template.value = "";
        fill();
      }
    } } }, field("Pattern", pattern), field("URL template", template), h("button.primary", { type: "submit" }, "Add linkifier")),
    linkifiers,
    h("h4", "Code playgrounds"),
    h("p.detail", "A code block in this language gets a link that opens its code in the playground."),
    h("form.inline-form", { on: { submit: async (event) => {
      event.preventDefault();
      if (await attempt(() => api.post("realm/playgrounds", { name: pgName.value, pygments_language: pgLanguage.value, url_template: pgTemplate.value }), "Playground added.")) {
        pgName.value = pgLanguage.value = pgTemplate.value = "";
        fill();
      }
    } } }, field("Playground name", pgName), field("Language", pgLanguage), field("Playground URL template", pgTemplate), h("button.primary", { type: "submit" }, "Add playground")),
    playgrounds,
  );
  async function fill() {
    const data = await attempt(() => api.get("realm/linkifiers"));
    if (data) {
      clear(linkifiers, data.linkifiers.length ? data.linkifiers.map((l) => h("li", h("code", l.pattern), " \u2192 ", h("code", l.url_template),
        h("button", { type: "button", "aria-label": `Delete linkifier ${l.pattern}`, on: { click: async () => { if (await attempt(() => api.del(`realm/filters/${l.id}`), "Linkifier deleted.")) fill(); } } }, "Delete"))) : h("li.detail", "No linkifiers."));
    }
    const list = model.state.realm_playgrounds || [];
    clear(playgrounds, list.length ? list.map((p) => h("li", h("strong", p.name), ` (${p.pygments_language}) `, h("code", p.url_template),
      h("button", { type: "button", "aria-label": `Delete playground ${p.name}`, on: { click: async () => { if (await attempt(() => api.del(`realm/playgrounds/${p.id}`), "Playground deleted.")) { model.state.realm_playgrounds = list.filter((x) => x.id !== p.id); fill(); } } } }, "Delete"))) : h("li.detail", "No playgrounds."));
  }
  fill();
  // Playgrounds are listed from the state; a new one arrives by its event.
  onAdminEvent("realm_playgrounds", fill, playgrounds);
}

// --- custom profile fields ----------------------------------------------------------------------

const FIELD_TYPES = [[1, "Short text"], [2, "Long text"], [3, "List of options"], [4, "Date"], [5, "Link"], [6, "Users"], [7, "External account"], [8, "Pronouns"]];

export function profileFieldsPanel(root) {
  const name = h("input", { type: "text", required: true, maxlength: "40", "aria-label": "Field name" });
  const hint = h("input", { type: "text", maxlength: "80", "aria-label": "Hint" });
  const type = h("select", { "aria-label": "Field type" }, FIELD_TYPES.map(([v, label]) => h("option", { value: String(v) }, label)));
  const choices = h("input", { type: "text", placeholder: "Red, Green, Blue", "aria-label": "Options, separated by commas" });
  const choicesField = field("Options, separated by commas", choices);
  const showChoices = () => {
    choicesField.hidden = type.value !== "3";
  };
  type.addEventListener("change", showChoices);
  showChoices();
  const list = h("ul.profile-field-list", { "aria-label": "Profile fields" });
  root.append(
    h("form.inline-form", { on: { submit: async (event) => {
      event.preventDefault();
      const params = { name: name.value, hint: hint.value, field_type: Number(type.value) };
      if (type.value === "3") {
        const options = choices.value.split(",").map((c) => c.trim()).filter(Boolean);
        params.field_data = Object.fromEntries(options.map((text, i) => [String(i), { text, order: String(i) }]));
      }
      if (type.value === "7") params.field_data = { subtype: "github" };
      if (await attempt(() => api.post("realm/profile_fields", params), "Profile field added.")) {
        name.value = hint.value = choices.value = "";
        setTimeout(fill, 300);
      }
    } } }, field("Field name", name), field("Hint", hint), field("Field type", type), choicesField, h("button.primary", { type: "submit" }, "Add field")),
    list,
  );
  function fill() {
    const fields = model.state.custom_profile_fields || [];
    clear(list, fields.length ? fields.map((f) => h("li", h("strong", f.name), h("span.detail", ` ${(FIELD_TYPES.find(([v]) => v === f.type) || [0, ""])[1]}${f.hint ? ` \u00b7 ${f.hint}` : ""}`),
      h("button", { type: "button", "aria-label": `Delete field ${f.name}`, on: { click: async () => {
        if (!(await confirmDialog(`Delete the field ${f.name}? Everyone's answers go with it.`, "Delete"))) return;
        if (await attempt(() => api.del(`realm/profile_fields/${f.id}`), "Profile field deleted.")) {
          model.state.custom_profile_fields = fields.filter((x) => x.id !== f.id);
          fill();
        }
      } } }, "Delete"))) : h("li.detail", "No custom profile fields."));
  }
  fill();
  onAdminEvent("custom_profile_fields", fill, list);
}
