// Settings > Account: one's own email address and its change (PATCH /settings `email`). The server
// decides how a change goes: a confirmation mail to the new address (the change waits for its
// link), or, on a server that sends no mail, at once; its answer (account_email) says which, and
// is shown here. The address shown follows the realm_user events.
import * as api from "./api.js";
import { field } from "./dialog.js";
import { model } from "./model.js";
import { h } from "./util.js";

let redraw = null;
model.on("realm_user", (event) => {
  if (event.person?.user_id === model.myId) redraw?.();
});

export const ownEmail = () => {
  const me = model.me();
  return me?.delivery_email || model.state.delivery_email || me?.email || "";
};

export function emailSection(root) {
  const current = h("strong");
  const status = h("p.detail", { role: "status" });
  const input = h("input", { type: "email", required: true, maxlength: "254", autocomplete: "email" });
  const locked = model.state.realm_email_changes_disabled && !model.isAdmin();
  const form = h(
    "form.inline-form",
    {
      on: {
        submit: async (event) => {
          event.preventDefault();
          const wanted = input.value.trim();
          if (!wanted) return;
          try {
            const answer = await api.patch("settings", { email: wanted });
            // Said once, in this form's own status line (a toast would say it twice).
            status.textContent = answer.account_email || "Your email address is unchanged.";
            input.value = "";
          } catch (error) {
            status.textContent = error.message;
          }
        },
      },
    },
    h("h4", "Email address"),
    h("p", "Your email address: ", current),
    locked
      ? h("p.detail", "Your organization does not let members change their email address; an administrator can.")
      : [field("New email", input), h("button.primary", { type: "submit" }, "Change email"), status],
  );
  const draw = () => {
    if (!form.isConnected) {
      if (redraw === draw) redraw = null;
      return;
    }
    current.textContent = ownEmail();
  };
  root.append(form);
  redraw = draw;
  draw();
}
