// Starts the first two API calls while the modules are still loading (a classic script, run as
// soon as it arrives): POST /json/register and, when the link names its channel or people by id,
// the first view's GET /json/messages. main.js picks the answers up from window.chatBoot.
// Before anything is drawn it also sets <html data-theme>, which app.css's two palettes hang on:
// the theme this browser last had (theme.js keeps it in localStorage), else the system's scheme.
(() => {
  let theme = null;
  try {
    theme = localStorage.getItem("chat-appliance.theme");
  } catch {
    theme = null; // storage refused (a privacy setting): the system's scheme
  }
  const dark = theme === "dark" || (theme !== "light" && matchMedia("(prefers-color-scheme: dark)").matches);
  document.documentElement.dataset.theme = dark ? "dark" : "light";
})();
(() => {
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  if (!csrf) return;
  const call = (method, path, params) => {
    const form = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) form.append(key, typeof value === "string" ? value : JSON.stringify(value));
    const init = { method, credentials: "same-origin", headers: { "X-CSRFToken": csrf } };
    if (method === "GET") path += `?${form}`;
    else init.body = form;
    const request = fetch(path, init).then(async (response) => ({ status: response.status, body: await response.json() }));
    request.catch(() => {});
    return request;
  };
  const decode = (text) => {
    try {
      return decodeURIComponent(text.replace(/\./g, "%"));
    } catch {
      return null;
    }
  };
  const hash = location.hash;
  let narrow = null;
  if (["", "#", "#feed"].includes(hash)) narrow = [];
  else {
    const match = /^#narrow\/(?:channel|stream)\/(\d+)(?:-[^/]*)?(?:\/topic\/([^/]+))?$/.exec(hash);
    const dm = /^#narrow\/dm\/([\d,]+)(?:-[^/]*)?$/.exec(hash);
    if (match) {
      narrow = [{ operator: "channel", operand: Number(match[1]), negated: false }];
      const topic = match[2] !== undefined ? decode(match[2]) : undefined;
      if (topic === null) narrow = null;
      else if (topic !== undefined) narrow.push({ operator: "topic", operand: topic, negated: false });
    } else if (dm) {
      const ids = dm[1].split(",").filter(Boolean).map(Number).sort((a, b) => a - b);
      narrow = [{ operator: "dm", operand: ids, negated: false }];
    }
  }
  window.chatBoot = {
    hash,
    register: call("POST", "/json/register", {
      apply_markdown: true, client_gravatar: true, slim_presence: true, include_subscribers: false,
      client_capabilities: {
        notification_settings_null: true, bulk_message_deletion: true, user_avatar_url_field_optional: false,
        stream_typing_notifications: true, user_settings_object: true, linkifier_url_template: true,
        empty_topic_name: true,
      },
    }),
    messages: narrow && call("GET", "/json/messages", {
      anchor: "first_unread", num_before: 50, num_after: 50, narrow, apply_markdown: true, client_gravatar: true,
    }),
  };
})();
