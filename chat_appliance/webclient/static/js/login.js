// The screens shown without a session: sign-in, sign-up from an invitation, and password reset.
import * as api from "./api.js";
import { clear, h } from "./util.js";

function card(title, ...children) {
  return h("main.auth-card", h("h1", title), ...children);
}

function field(label, attrs) {
  const input = h("input", attrs);
  return { input, row: h("label.field", h("span", label), input) };
}

// How long to wait, as a person reads it: seconds, and minutes too once it is long.
function waitText(seconds) {
  const whole = Math.max(1, Math.ceil(seconds));
  const inSeconds = `${whole} second${whole === 1 ? "" : "s"}`;
  if (whole < 90) return inSeconds;
  const minutes = Math.round(whole / 60);
  return `${minutes} minutes (${inSeconds})`;
}

// What a failure says: the server's message, except that a rate limit (RATE_LIMIT_HIT) says how
// long to wait, from its retry-after, instead of "API usage exceeded rate limit".
function failureText(failure, tooMany) {
  if (failure.code === "RATE_LIMIT_HIT" && failure.retryAfter !== null) return `${tooMany} Try again in ${waitText(failure.retryAfter)}.`;
  return failure.message;
}

// A sign-in or sign-up form: the button is off while `send` runs; a failure shows its message
// above the button, which comes back on, and then `afterFailure` runs. `tooMany` opens the
// message of a rate limit.
function authForm(buttonLabel, rows, send, afterFailure = () => {}, tooMany = "Too many attempts.") {
  const error = h("p.error", { role: "alert" });
  const button = h("button.primary", { type: "submit" }, buttonLabel);
  return h(
    "form.auth",
    {
      on: {
        submit: async (event) => {
          event.preventDefault();
          error.textContent = "";
          button.disabled = true;
          try {
            await send();
          } catch (failure) {
            error.textContent = failureText(failure, tooMany);
            button.disabled = false;
            afterFailure();
          }
        },
      },
    },
    ...rows,
    error,
    button,
  );
}

// The server's sign-in methods (/server_settings, which needs no session), or null when it fails.
async function serverSettings() {
  try {
    const body = await (await fetch("/api/v1/server_settings", { credentials: "same-origin" })).json();
    return body.result === "success" ? body : null;
  } catch {
    return null;
  }
}

export async function showLogin(root) {
  const settings = await serverSettings();
  // With LDAP user names that are not addresses, the field takes a bare user name too.
  const usernames = settings && settings.require_email_format_usernames === false;
  const email = field(usernames ? "Email or username" : "Email", {
    type: usernames ? "text" : "email",
    name: "username",
    autocomplete: "username",
    required: true,
  });
  const password = field("Password", { type: "password", name: "password", autocomplete: "current-password", required: true });
  const form = authForm(
    "Log in",
    [email.row, password.row],
    async () => {
      await api.signIn("/accounts/login", { username: email.input.value, password: password.input.value });
      location.reload();
    },
    () => password.input.select(),
    "Too many sign-in attempts.",
  );
  const forgot = settings && settings.email_auth_enabled === false ? null : h("p.auth-links", h("a", { href: "/accounts/password/reset" }, "Forgot your password?"));
  // Each external provider is a link, not a form: the page's form-action 'self' would stop a
  // form's redirect to the provider, while a link is a plain navigation.
  const external = (settings?.external_authentication_methods || []).map((method) =>
    h("p.auth-external", h("a.button", { href: method.login_url, on: { click: (event) => desktopFlow(event, method.login_url) } }, `Log in with ${method.display_name}`)),
  );
  const passwordForm = !settings || settings.authentication_methods?.password !== false ? form : null;
  clear(root, card("Log in", ...external, passwordForm, forgot));
  (passwordForm ? email.input : root.querySelector("a.button"))?.focus();
}

// Inside Zulip's desktop app (its preload script gives window.electron_bridge), the provider's
// pages open in the system browser, which has no session of the app's. As Zulip's web app does:
// ask the bridge for a key, open the login URL with desktop_flow_otp=<the key in hex> in the
// browser, wait for the app to decrypt the token the person copies there, and redeem it here
// for the app's own session.
async function desktopFlow(event, loginUrl) {
  const bridge = window.electron_bridge;
  if (!bridge || typeof bridge.decrypt_clipboard !== "function") return;
  event.preventDefault();
  const { key, pasted } = bridge.decrypt_clipboard(1);
  const hex = [...key].map((byte) => byte.toString(16).padStart(2, "0")).join("");
  window.open(`${loginUrl}?desktop_flow_otp=${encodeURIComponent(hex)}`, "_blank");
  const token = await pasted;
  location.href = `/accounts/login/subdomain/${encodeURIComponent(token)}`;
}

// Ask for a reset link. The answer is the same whether or not the address has an account.
export function showResetRequest(root) {
  const email = field("Email", { type: "email", name: "email", autocomplete: "email", required: true });
  const form = authForm("Reset password", [email.row], async () => {
    const data = await api.signIn("/accounts/password/reset", { email: email.input.value });
    clear(root, card("Check your email", h("p", { role: "status" }, data.msg), h("p", h("a", { href: "/" }, "Back to log in"))));
  });
  const intro = h("p", "We will email you a link to set a new password.");
  clear(root, card("Reset your password", intro, form, h("p.auth-links", h("a", { href: "/" }, "Back to log in"))));
  email.input.focus();
}

// The reset link's page: a new password, then back to the sign-in form.
export async function showNewPassword(root, token) {
  const path = `/accounts/password/reset/${encodeURIComponent(token)}`;
  let info = null;
  try {
    info = await (await fetch(`${path}/check`, { credentials: "same-origin" })).json();
  } catch {
    info = null;
  }
  if (!info || info.result !== "success") {
    const again = h("a", { href: "/accounts/password/reset" }, "Ask for a new link");
    clear(root, card("Reset your password", h("p.error", { role: "alert" }, (info && info.msg) || "This link is not valid."), h("p", again)));
    return;
  }
  const password = field("New password", { type: "password", name: "new_password", autocomplete: "new-password", required: true, minlength: "6" });
  const form = authForm("Set password", [password.row], async () => {
    await api.signIn(path, { new_password: password.input.value });
    clear(root, card("Password changed", h("p", { role: "status" }, "Your password has been changed. Log in with the new one."), h("p", h("a", { href: "/" }, "Log in"))));
  });
  clear(root, card("Reset your password", h("p", `For ${info.email}`), form));
  password.input.focus();
}

export async function showJoin(root, key) {
  const name = field("Full name", { type: "text", name: "full_name", autocomplete: "name", required: true, maxlength: "100" });
  const password = field("Password", { type: "password", name: "password", autocomplete: "new-password", required: true, minlength: "6" });
  const email = field("Email", { type: "email", name: "email", autocomplete: "email" });
  const intro = h("p");
  // A reusable link's sign-up mails the address a link back here carrying `confirm`.
  const confirm = new URLSearchParams(location.search).get("confirm");
  let info = null;
  try {
    info = await (await fetch(`/accounts/join/${encodeURIComponent(key)}${confirm ? `?confirm=${encodeURIComponent(confirm)}` : ""}`, { credentials: "same-origin" })).json();
  } catch {
    info = null;
  }
  if (!info || info.result !== "success") {
    clear(root, card("Join", h("p.error", { role: "alert" }, (info && info.msg) || "This invitation link is not valid."), h("p", h("a", { href: "/" }, "Log in instead"))));
    return;
  }
  intro.textContent = `You are invited to ${info.realm_name}.`;
  if (info.email) {
    email.input.value = info.email;
    email.input.readOnly = true;
  } else email.input.required = true;
  const fields = info.needs_confirmation ? [email.row] : [email.row, name.row, password.row];
  const form = authForm(info.needs_confirmation ? "Send confirmation link" : "Sign up", fields, async () => {
    const data = await api.signIn(`/accounts/join/${encodeURIComponent(key)}`, { email: email.input.value, full_name: name.input.value, password: password.input.value, ...(confirm ? { confirm } : {}) });
    if (data.confirmation_sent) clear(root, card("Join", h("p", { role: "status" }, data.msg)));
    else location.replace("/");
  });
  clear(root, card("Join", intro, form));
  (info.email ? name : email).input.focus();
}

// The email-change link's page: confirm with a button (a POST), so that a mail scanner fetching
// the link changes nothing.
export function showConfirmEmail(root, token) {
  const form = authForm("Confirm email change", [], async () => {
    const data = await api.signIn(`/accounts/confirm_new_email/${encodeURIComponent(token)}`, {});
    clear(root, card("Email changed", h("p", { role: "status" }, `Your email address is now ${data.email}.`), h("p", h("a", { href: "/" }, "Continue"))));
  });
  clear(root, card("Confirm your new email address", form));
}
