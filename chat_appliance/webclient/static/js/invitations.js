// Settings > Invitations: the channels a newcomer joins (ticked by default: the organization's
// default channels, never a private one), reusable links with an expiry and a role, email
// invitations when the server can send mail, and the pending invitations with revoke and resend.
import * as api from "./api.js";
import { attempt, field, inGroup } from "./dialog.js";
import { model } from "./model.js";
import { ROLES } from "./profile_card.js";
import { clear, h } from "./util.js";

const EXPIRY = [[60 * 24, "1 day"], [60 * 24 * 3, "3 days"], [60 * 24 * 10, "10 days"], [60 * 24 * 30, "30 days"], [null, "Never"]];

export const emailConfigured = () => document.querySelector('meta[name="email-configured"]')?.content === "1";

const roleOptions = () => ROLES.filter(([value]) => value !== 100 || model.me()?.is_owner).map(([value, label]) => h("option", { value: String(value), selected: value === 400 }, label));

// Who sees the Invitations tab: those who may invite by email or create invitation links.
const mayCreateLinks = () => model.isAdmin() || inGroup(model.state.realm_create_multiuse_invite_group);
export const mayInvite = () => !model.me()?.is_guest && (model.isAdmin() || model.state.can_invite_others_to_realm || mayCreateLinks());

export function invitesPanel(root) {
  const defaults = new Set(model.state.realm_default_streams || []);
  const streams = [...model.streams.values()].filter((s) => !s.is_archived).sort((a, b) => a.name.localeCompare(b.name));
  const boxes = streams.map((s) => h("input", { type: "checkbox", value: String(s.stream_id), checked: defaults.has(s.stream_id) && !s.invite_only }));
  const role = h("select", roleOptions());
  const expiry = h("select", EXPIRY.map(([minutes, label]) => h("option", { value: minutes === null ? "null" : String(minutes), selected: minutes === 60 * 24 * 10 }, label)));
  const invitation = () => ({
    invite_as: Number(role.value),
    stream_ids: boxes.filter((b) => b.checked).map((b) => Number(b.value)),
    invite_expires_in_minutes: expiry.value === "null" ? null : Number(expiry.value),
  });
  const out = h("div.invite-link");
  const emails = h("textarea", { rows: 2, placeholder: "one@example.com, two@example.com", "aria-label": "Emails" });
  const list = h("ul.invite-list", { "aria-label": "Pending invitations" });
  root.append(
    h("div.inline-form", field("Invite as", role), field("Link expires after", expiry)),
    h(
      "fieldset.channel-choice",
      h("legend", "Channels they join"),
      h("p.detail", "The organization's default channels are ticked. Private channels are never ticked for you."),
      streams.map((s, i) => h("label.check", boxes[i], h("span", s.name), s.invite_only ? h("span.detail", { "aria-hidden": "true" }, " (private)") : null)),
    ),
    !mayCreateLinks() ? null : h(
      "form.inline-form",
      {
        on: {
          submit: async (event) => {
            event.preventDefault();
            const data = await attempt(() => api.post("invites/multiuse", invitation()), "Invitation link created.");
            if (data) {
              clear(out, h("p", "Send this link: "), h("input.link", { type: "text", readOnly: true, value: data.invite_link, "aria-label": "Invitation link", on: { focus: (e) => e.target.select() } }));
              fill();
            }
          },
        },
      },
      h("h4", "Invitation link"),
      h("p.detail", "Anyone with the link can join until it expires."),
      emailConfigured() ? null : h("p.detail", "Email is not configured: sign-ups through a link are not verified, and anyone with it can join with any address."),
      h("button.primary", { type: "submit" }, "Create invitation link"),
      out,
    ),
    !emailConfigured()
      ? h("p.detail", "This server does not send email; send people an invitation link instead.")
      : !(model.isAdmin() || model.state.can_invite_others_to_realm) ? null : h(
          "form.inline-form",
          {
            on: {
              submit: async (event) => {
                event.preventDefault();
                const data = await attempt(() => api.post("invites", { ...invitation(), invitee_emails: emails.value }), "Invitations sent.");
                if (data) {
                  emails.value = "";
                  fill();
                }
              },
            },
          },
          h("h4", "Invite by email"),
          h("p.detail", "Each address gets a mail with its own sign-up link."),
          field("Emails", emails),
          h("button.primary", { type: "submit" }, "Send invitations"),
        ),
    h("h4", "Pending invitations"),
    list,
  );
  async function fill() {
    const data = await attempt(() => api.get("invites"));
    if (!data) return;
    clear(
      list,
      data.invites.length
        ? data.invites.map((invite) => {
            const what = invite.is_multiuse ? "Link" : invite.email;
            const expires = invite.expiry_date ? `expires ${new Date(invite.expiry_date * 1000).toLocaleDateString()}` : "never expires";
            const roleLabel = (ROLES.find(([v]) => v === invite.invited_as) || [0, ""])[1];
            return h(
              "li",
              h("div", invite.is_multiuse ? h("code", invite.link_url || "") : h("strong", invite.email), h("div.detail", `${roleLabel}, ${expires}, by ${model.userName(invite.invited_by_user_id)}`)),
              invite.is_multiuse || !emailConfigured() ? null : h("button", { type: "button", "aria-label": `Resend invitation to ${what}`, on: { click: async () => { await attempt(() => api.post(`invites/${invite.id}/resend`), "Invitation sent again."); fill(); } } }, "Resend"),
              h("button", { type: "button", "aria-label": `Revoke invitation ${invite.is_multiuse ? `link ${invite.id}` : `to ${what}`}`, on: { click: async () => { await attempt(() => api.del(invite.is_multiuse ? `invites/multiuse/${invite.id}` : `invites/${invite.id}`), "Invitation revoked."); fill(); } } }, "Revoke"),
            );
          })
        : h("li.detail", "None."),
    );
  }
  fill();
}
