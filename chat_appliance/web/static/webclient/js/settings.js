// Channels and settings, in one dialog: channels (browse, create, subscribe), profile, account
// (password, API key, zuliprc), bots, notifications, and for administrators users and invitations.
import * as api from "./api.js";
import { model } from "./model.js";
import { channelView, viewHash } from "./narrow.js";
import { clear, confirmDialog, download, h, toast } from "./util.js";

let dialog;
let panel;
let tabs;

const SECTIONS = [
  ["channels", "Channels", channelsPanel],
  ["profile", "Profile", profilePanel],
  ["account", "Account and API key", accountPanel],
  ["bots", "Bots", botsPanel],
  ["notifications", "Notifications", notificationsPanel],
  ["users", "Users", usersPanel, () => model.isAdmin()],
  ["invites", "Invitations", invitesPanel, () => model.isAdmin()],
];

export function openSettings(section = "profile") {
  if (!dialog) {
    panel = h("section.settings-panel", { tabindex: "-1" });
    tabs = h("nav.settings-tabs", { "aria-label": "Settings sections" });
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
      h("button.tab", { type: "button", "aria-current": key === section ? "page" : null, class: key === section ? "tab active" : "tab", on: { click: () => show(key) } }, label),
    ),
  );
  const entry = SECTIONS.find(([key]) => key === section);
  clear(panel, h("h3", entry[1]));
  entry[2](panel);
}

const field = (label, input) => h("label.field", h("span", label), input);

async function attempt(fn, success) {
  try {
    const result = await fn();
    if (success) toast(success);
    return result;
  } catch (error) {
    toast(error.message, "error");
    return null;
  }
}

function zuliprc(email, key) {
  return `[api]\nemail=${email}\nkey=${key}\nsite=${location.origin}\n`;
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
}

// --- profile -------------------------------------------------------------------------------------

function profilePanel(root) {
  const me = model.me();
  const name = h("input", { type: "text", value: me.full_name, maxlength: "100" });
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
}

// --- account -------------------------------------------------------------------------------------

function accountPanel(root) {
  const me = model.me();
  const oldPassword = h("input", { type: "password", autocomplete: "current-password", required: true });
  const newPassword = h("input", { type: "password", autocomplete: "new-password", required: true, minlength: "6" });
  const keyPassword = h("input", { type: "password", autocomplete: "current-password", required: true });
  const keyOut = h("div.api-key");
  root.append(
    h("p", `Signed in as ${me.email}.`),
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

// --- bots ----------------------------------------------------------------------------------------

function botsPanel(root) {
  const name = h("input", { type: "text", required: true, maxlength: "100" });
  const short = h("input", { type: "text", required: true, maxlength: "50", pattern: "[A-Za-z0-9_.\\-]+" });
  const out = h("div.api-key");
  const list = h("ul.bot-list");
  root.append(
    h(
      "form.inline-form",
      {
        on: {
          submit: async (event) => {
            event.preventDefault();
            const data = await attempt(() => api.post("bots", { full_name: name.value, short_name: short.value }), "Bot created.");
            if (!data) return;
            // POST /bots answers with the id and key; the email comes from the account itself.
            const info = await attempt(() => api.get(`users/${data.user_id}`));
            const email = info ? info.user.email : model.userEmail(data.user_id);
            clear(out, h("p", `${name.value}: `, h("code", data.api_key)), h("button", { type: "button", on: { click: () => download("zuliprc", zuliprc(email, data.api_key)) } }, "Download zuliprc"));
            name.value = short.value = "";
            setTimeout(fillBots, 300);
          },
        },
      },
      h("h4", "Create a bot"),
      field("Bot name", name),
      field("Short name (its email starts with it)", short),
      h("button.primary", { type: "submit" }, "Create bot"),
      out,
    ),
    h("h4", "Your bots"),
    list,
  );
  function fillBots() {
    const bots = (model.state.realm_bots || []).filter((b) => b.is_active !== false);
    clear(
      list,
      bots.length
        ? bots.map((b) =>
            h(
              "li",
              h("div", h("strong", b.full_name), h("div.detail", b.email)),
              h("button", { type: "button", "aria-label": `Download zuliprc of ${b.full_name}`, on: { click: () => download("zuliprc", zuliprc(b.email, b.api_key)) } }, "Download zuliprc"),
            ),
          )
        : h("li.detail", "No bots yet."),
    );
  }
  fillBots();
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
  import("./notify_settings.js").then((m) => m.notificationSettings(root)); // issue 28: sounds, per channel
}

// --- administration ------------------------------------------------------------------------------

const ROLES = [[100, "Owner"], [200, "Administrator"], [300, "Moderator"], [400, "Member"], [600, "Guest"]];

async function usersPanel(root) {
  const list = h("table.user-table", h("thead", h("tr", h("th", "Name"), h("th", "Email"), h("th", "Role"), h("th", ""))));
  const body = h("tbody");
  list.append(body);
  root.append(list);
  const data = await attempt(() => api.get("users", { client_gravatar: true }));
  if (!data) return;
  const people = data.members.filter((u) => !u.is_bot).sort((a, b) => a.full_name.localeCompare(b.full_name));
  clear(
    body,
    people.map((user) => {
      const role = h("select", { "aria-label": `Role of ${user.full_name}`, disabled: user.user_id === model.myId }, ROLES.map(([value, label]) => h("option", { value: String(value), selected: user.role === value }, label)));
      role.addEventListener("change", () => attempt(() => api.patch(`users/${user.user_id}`, { role: Number(role.value) }), "Role changed."));
      const toggle = h(
        "button",
        {
          type: "button",
          disabled: user.user_id === model.myId,
          on: {
            click: async () => {
              if (user.is_active) {
                if (!(await confirmDialog(`Deactivate ${user.full_name}?`, "Deactivate"))) return;
                if (await attempt(() => api.del(`users/${user.user_id}`), "User deactivated.")) user.is_active = false;
              } else if (await attempt(() => api.post(`users/${user.user_id}/reactivate`), "User reactivated.")) user.is_active = true;
              toggle.textContent = user.is_active ? "Deactivate" : "Reactivate";
            },
          },
        },
        user.is_active ? "Deactivate" : "Reactivate",
      );
      return h("tr", h("td", user.full_name), h("td", user.delivery_email || user.email), h("td", role), h("td", toggle));
    }),
  );
}

async function invitesPanel(root) {
  const out = h("div.invite-link");
  const emails = h("textarea", { rows: 2, placeholder: "one@example.com, two@example.com" });
  const role = h("select", ROLES.filter(([v]) => v >= 200).map(([value, label]) => h("option", { value: String(value), selected: value === 400 }, label)));
  const streams = model.sortedSubs();
  const boxes = streams.map((s) => h("input", { type: "checkbox", value: String(s.stream_id), checked: true }));
  const invitation = () => ({ invite_as: Number(role.value), stream_ids: boxes.filter((b) => b.checked).map((b) => Number(b.value)) });
  const list = h("ul.invite-list");
  root.append(
    field("Invite as", role),
    h("fieldset", h("legend", "Channels"), streams.map((s, i) => h("label.check", boxes[i], ` #${s.name}`))),
    h(
      "form.inline-form",
      {
        on: {
          submit: async (event) => {
            event.preventDefault();
            const data = await attempt(() => api.post("invites/multiuse", invitation()), "Invitation link created.");
            if (data) showLink(data.invite_link);
          },
        },
      },
      h("h4", "Invitation link"),
      h("p.detail", "Anyone with the link can join."),
      h("button.primary", { type: "submit" }, "Create invitation link"),
      out,
    ),
    h(
      "form.inline-form",
      {
        on: {
          submit: async (event) => {
            event.preventDefault();
            const data = await attempt(() => api.post("invites", { ...invitation(), invitee_emails: emails.value }), "Invitations sent.");
            if (data) fill();
          },
        },
      },
      h("h4", "Invite by email"),
      h("p.detail", "Each address gets a mail with its own sign-up link. If this server cannot send email, create an invitation link above instead."),
      field("Emails", emails),
      h("button.primary", { type: "submit" }, "Invite"),
    ),
    h("h4", "Open invitations"),
    list,
  );
  function showLink(link) {
    clear(out, h("p", "Send this link: "), h("input.link", { type: "text", readOnly: true, value: link, "aria-label": "Invitation link", on: { focus: (e) => e.target.select() } }));
    fill();
  }
  async function fill() {
    const data = await attempt(() => api.get("invites"));
    if (!data) return;
    clear(
      list,
      data.invites.length
        ? data.invites.map((invite) =>
            h(
              "li",
              invite.is_multiuse ? h("span", "Link ", h("code", invite.link_url || "")) : h("span", invite.email),
              invite.is_multiuse ? null : h("button", { type: "button", on: { click: async () => { await attempt(() => api.post(`invites/${invite.id}/resend`), "Invitation sent again."); fill(); } } }, "Resend"),
              h("button", { type: "button", on: { click: async () => { await attempt(() => api.del(invite.is_multiuse ? `invites/multiuse/${invite.id}` : `invites/${invite.id}`), "Invitation revoked."); fill(); } } }, "Revoke"),
            ),
          )
        : h("li.detail", "None."),
    );
  }
  fill();
}
