// Channels and settings, in one dialog: channels (browse, create, subscribe), profile, account
// (email address: account_email.js; password, API key, zuliprc), bots (bots.js), notifications,
// alert words and muted users (settings_lists.js), invitations (invitations.js), and for
// administrators users (users_admin.js) and the organization's settings (org_settings.js).
import * as api from "./api.js";
import { botsPanel, zuliprc } from "./bots.js";
import { attempt, field } from "./dialog.js";
import { invitesPanel, mayInvite } from "./invitations.js";
import { emojiPanel, linkifiersPanel, organizationPanel, profileFieldsPanel } from "./org_settings.js";
import { usersPanel } from "./users_admin.js";
import { groupsPanel } from "./groups_settings.js";
import { preferencesPanel } from "./theme.js";
import { alertWordsPanel, mutedUsersPanel } from "./settings_lists.js";
import { emailSection } from "./account_email.js";
import { model } from "./model.js";
import { channelView, viewHash } from "./narrow.js";
import { clear, download, h } from "./util.js";

let dialog;
let panel;
let tabs;

const SECTIONS = [
  ["channels", "Channels", channelsPanel],
  ["profile", "Profile", profilePanel],
  ["account", "Account and API key", accountPanel],
  ["bots", "Bots", botsPanel],
  ["preferences", "Preferences", preferencesPanel],
  ["notifications", "Notifications", notificationsPanel],
  ["alert-words", "Alert words", alertWordsPanel],
  ["muted-users", "Muted users", mutedUsersPanel],
  ["groups", "Groups", groupsPanel, () => !model.me()?.is_guest],
  ["users", "Users", usersPanel, () => model.isAdmin()],
  ["invites", "Invitations", invitesPanel, mayInvite],
  // The organization (org_settings.js): custom emoji for all but guests, the rest for administrators.
  ["organization", "Organization", organizationPanel, () => model.isAdmin()],
  ["emoji", "Custom emoji", emojiPanel, () => !model.me()?.is_guest],
  ["linkifiers", "Linkifiers", linkifiersPanel, () => model.isAdmin()],
  ["profile-fields", "Custom fields", profileFieldsPanel, () => model.isAdmin()],
];

export function openSettings(section = "profile") {
  if (!dialog) {
    // Zulip's settings overlay has sections; here they are tabs (a tablist and its tabpanel).
    panel = h("section.settings-panel#settings-panel", { tabindex: "-1", role: "tabpanel" });
    tabs = h("div.settings-tabs", { role: "tablist", "aria-label": "Settings sections", "aria-orientation": "vertical" });
    dialog = h(
      "dialog.settings",
      { "aria-label": "Settings" },
      h("div.settings-head", h("h2", "Settings"), h("button.icon", { type: "button", "aria-label": "Close settings", on: { click: () => dialog.close() } }, "\u2715")),
      h("div.settings-body", tabs, panel),
    );
    document.body.append(dialog);
  }
  show(section);
  if (!dialog.open) dialog.showModal();
}

function show(section) {
  clear(
    tabs,
    SECTIONS.filter(([, , , allowed]) => !allowed || allowed()).map(([key, label]) =>
      h("button.tab", {
        type: "button", role: "tab", id: `settings-tab-${key}`, "aria-selected": String(key === section), "aria-controls": "settings-panel",
        tabindex: key === section ? "0" : "-1", class: key === section ? "tab active" : "tab", on: { click: () => show(key), keydown: tabKeys },
      }, label),
    ),
  );
  const entry = SECTIONS.find(([key]) => key === section);
  panel.setAttribute("aria-labelledby", `settings-tab-${section}`);
  clear(panel, h("h3", entry[1]));
  entry[2](panel, { showSection: show });
}

// Arrow keys move between the tabs (and show each), as a tablist's do.
function tabKeys(event) {
  const all = [...tabs.querySelectorAll("[role=tab]")];
  const index = all.indexOf(event.currentTarget);
  const next = { ArrowDown: index + 1, ArrowRight: index + 1, ArrowUp: index - 1, ArrowLeft: index - 1, Home: 0, End: all.length - 1 }[event.key];
  if (next === undefined) return;
  event.preventDefault();
  const tab = all[(next + all.length) % all.length];
  tab.click();
  tabs.querySelector(`#${tab.id}`)?.focus();
}

// --- channels ------------------------------------------------------------------------------------

async function channelsPanel(root) {
  const name = h("input", { type: "text", required: true, maxlength: "60", "aria-label": "Channel name" });
  const description = h("input", { type: "text", maxlength: "1024", "aria-label": "Channel description" });
  const isPrivate = h("input", { type: "checkbox" });
  const list = h("ul.channel-browser");
  root.append(
    h(
      "form.inline-form",
      {
        on: {
          submit: async (event) => {
            event.preventDefault();
            const created = await attempt(() => api.post("users/me/subscriptions", { subscriptions: [{ name: name.value, description: description.value }], invite_only: isPrivate.checked }), `Channel #${name.value} created.`);
            if (created) {
              const wanted = name.value;
              name.value = description.value = "";
              setTimeout(() => {
                const stream = model.streamByName(wanted);
                if (stream) location.hash = viewHash(channelView(stream.stream_id));
                fill();
              }, 300);
            }
          },
        },
      },
      h("h4", "Create a channel"),
      field("Name", name),
      field("Description", description),
      h("label.check", isPrivate, " Private"),
      h("button.primary", { type: "submit" }, "Create channel"),
    ),
    h("h4", "All channels"),
    list,
  );
  async function fill() {
    const data = await attempt(() => api.get("streams"));
    if (!data) return;
    clear(
      list,
      data.streams.sort((a, b) => a.name.localeCompare(b.name)).map((stream) => {
        const subscribed = model.subs.has(stream.stream_id);
        return h(
          "li",
          h("div", h("strong", `#${stream.name}`), stream.invite_only ? " (private)" : "", h("div.detail", stream.description)),
          h(
            "button",
            {
              type: "button",
              "aria-label": `${subscribed ? "Unsubscribe from" : "Subscribe to"} ${stream.name}`,
              on: {
                click: async () => {
                  if (subscribed) await attempt(() => api.del("users/me/subscriptions", { subscriptions: [stream.name] }));
                  else await attempt(() => api.post("users/me/subscriptions", { subscriptions: [{ name: stream.name }] }));
                  setTimeout(fill, 200);
                },
              },
            },
            subscribed ? "Unsubscribe" : "Subscribe",
          ),
        );
      }),
    );
  }
  fill();
  import("./channel_settings.js").then((m) => m.archivedChannels(root));
}

// --- profile -------------------------------------------------------------------------------------

function profilePanel(root) {
  const me = model.me();
  // Names from LDAP (Zulip's server_name_changes_disabled): only an administrator changes them.
  const nameLocked = (model.state.server_name_changes_disabled || model.state.realm_name_changes_disabled) && !(me.is_admin || me.is_owner);
  const name = h("input", { type: "text", value: me.full_name, maxlength: "100", disabled: nameLocked });
  const zones = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  const currentZone = model.state.user_settings?.timezone || me.timezone || "";
  const timezone = h("select", h("option", { value: "" }, "(not set)"), zones.map((z) => h("option", { value: z, selected: z === currentZone }, z)));
  const avatarInput = h("input", { type: "file", accept: "image/png,image/jpeg,image/gif,image/webp" });
  root.append(
    h(
      "form.inline-form",
      {
        on: {
          submit: async (event) => {
            event.preventDefault();
            await attempt(() => api.patch("settings", { full_name: name.value, timezone: timezone.value }), "Profile saved.");
          },
        },
      },
      field("Full name", name),
      nameLocked ? h("p.detail", "Your name is managed by your organization's directory (LDAP).") : null,
      field("Time zone", timezone),
      h("button.primary", { type: "submit" }, "Save profile"),
    ),
    h(
      "form.inline-form",
      {
        on: {
          submit: async (event) => {
            event.preventDefault();
            const file = avatarInput.files[0];
            if (!file) return;
            const form = new FormData();
            form.append("file", file, file.name);
            await attempt(() => api.call("POST", "users/me/avatar", null, { body: form }), "Avatar changed.");
          },
        },
      },
      h("h4", "Avatar"),
      field("Image", avatarInput),
      h("button.primary", { type: "submit" }, "Upload avatar"),
    ),
  );
  import("./profile_card.js").then((m) => m.ownProfileFields(root));
}

// --- account -------------------------------------------------------------------------------------

function accountPanel(root) {
  const me = model.me();
  const oldPassword = h("input", { type: "password", autocomplete: "current-password", required: true });
  const newPassword = h("input", { type: "password", autocomplete: "new-password", required: true, minlength: "6" });
  const keyPassword = h("input", { type: "password", autocomplete: "current-password", required: true });
  const keyOut = h("div.api-key");
  emailSection(root);
  root.append(
    h(
      "form.inline-form",
      {
        on: {
          submit: async (event) => {
            event.preventDefault();
            const done = await attempt(() => api.patch("settings", { old_password: oldPassword.value, new_password: newPassword.value }), "Password changed.");
            if (done) oldPassword.value = newPassword.value = "";
          },
        },
      },
      h("h4", "Change password"),
      field("Old password", oldPassword),
      field("New password", newPassword),
      h("button.primary", { type: "submit" }, "Change password"),
    ),
    h(
      "form.inline-form",
      {
        on: {
          submit: async (event) => {
            event.preventDefault();
            const data = await attempt(() => api.post("fetch_api_key", { username: me.email, password: keyPassword.value }));
            keyPassword.value = "";
            if (!data) return;
            clear(
              keyOut,
              h("code", data.api_key),
              h("button", { type: "button", on: { click: () => download("zuliprc", zuliprc(data.email, data.api_key)) } }, "Download zuliprc"),
            );
          },
        },
      },
      h("h4", "API key"),
      h("p.detail", "Enter your password to see your API key and download a zuliprc for Zulip clients."),
      field("Password", keyPassword),
      h("button.primary", { type: "submit" }, "Show API key"),
      keyOut,
    ),
  );
}

// --- notifications -------------------------------------------------------------------------------

function notificationsPanel(root) {
  const state = h("p");
  const update = () => {
    state.textContent = !("Notification" in window)
      ? "This browser does not support desktop notifications."
      : `Desktop notifications for direct messages and mentions: ${Notification.permission === "granted" ? "on" : Notification.permission === "denied" ? "blocked by the browser" : "off"}.`;
  };
  update();
  root.append(
    state,
    h("button.primary", { type: "button", on: { click: async () => { if ("Notification" in window) await Notification.requestPermission(); update(); } } }, "Enable desktop notifications"),
  );
  import("./notify_settings.js").then((m) => m.notificationSettings(root)); // sounds, per channel: loaded when settings open
}
