// Settings > Bots: create a bot of any type (generic, incoming webhook with the URL to paste into
// the other service, outgoing webhook with its endpoint, embedded) and list the bots one
// administers with their zuliprc, webhook URL or endpoint, and deactivation.
import * as api from "./api.js";
import { attempt, field } from "./dialog.js";
import { model } from "./model.js";
import { clear, confirmDialog, download, h, toast } from "./util.js";

const TYPES = [[1, "Generic"], [2, "Incoming webhook"], [3, "Outgoing webhook"], [4, "Embedded"]];
// The integrations of chat_appliance/integrations ([URL name, display name, documentation URL]),
// written into the page by the server: the last part of an incoming webhook's URL.
const INTEGRATIONS = (() => {
  try {
    return JSON.parse(document.querySelector('meta[name="integrations"]')?.content || "[]");
  } catch {
    return [];
  }
})();
const EMBEDDED = ["converter", "encrypt", "helloworld", "virtual_fs", "giphy", "followup"];

export const zuliprc = (email, key) => `[api]\nemail=${email}\nkey=${key}\nsite=${location.origin}\n`;

export function webhookUrl(key, integration, channel) {
  const url = new URL(`/api/v1/external/${integration}`, location.origin);
  url.searchParams.set("api_key", key);
  if (channel) url.searchParams.set("stream", channel);
  return url.toString();
}

function copyButton(input, label) {
  return h("button", {
    type: "button",
    "aria-label": label,
    on: {
      click: async () => {
        try {
          await navigator.clipboard.writeText(input.value);
          toast("Copied.");
        } catch {
          input.select(); // no clipboard (plain http): the text is selected to copy by hand
        }
      },
    },
  }, "Copy");
}

// A <details> whose content is made when it is first opened.
function lazyDetails(summary, build) {
  const details = h("details", h("summary", summary));
  details.addEventListener("toggle", () => {
    if (details.open && details.children.length === 1) details.append(build());
  });
  return details;
}

// The webhook URL of an incoming webhook bot, with its integration and channel to choose.
function urlBuilder(bot, key) {
  const integration = h("select", { "aria-label": `Integration of ${bot.full_name}` }, INTEGRATIONS.map(([value, label]) => h("option", { value, selected: value === "json" }, `${label} (${value})`)));
  const docs = h("a", { target: "_blank", rel: "noopener noreferrer" }, "How to set it up");
  const channels = [...model.streams.values()].filter((s) => !s.is_archived).sort((a, b) => a.name.localeCompare(b.name));
  const preferred = channels.find((s) => s.name === "general") || channels.find((s) => model.subs.has(s.stream_id)) || channels[0];
  const channel = h("select", { "aria-label": `Channel of ${bot.full_name}` }, channels.map((s) => h("option", { value: s.name, selected: s === preferred }, s.name)));
  const url = h("input.link", { type: "text", readOnly: true, "aria-label": `Webhook URL of ${bot.full_name}`, on: { focus: (e) => e.target.select() } });
  const text = h("code.webhook-url-text");
  const update = () => {
    url.value = text.textContent = webhookUrl(key, integration.value, channel.value);
    docs.href = (INTEGRATIONS.find(([name]) => name === integration.value) || [])[2] || "";
  };
  integration.addEventListener("change", update);
  channel.addEventListener("change", update);
  update();
  return h("div.webhook-url", field("Integration", integration), docs, field("Channel", channel), h("div.row", url, copyButton(url, `Copy webhook URL of ${bot.full_name}`)), text);
}

// The open panel's list redraws when a realm_bot event arrives (one listener, added when the
// panel first opens, for every panel).
let redrawList = null;
let listening = false;
function followBotEvents() {
  if (listening) return;
  listening = true;
  model.on("realm_bot", () => redrawList?.());
}

// A bot's short name (its email's start) from its full name: "Deploy notices" -> "deploy-notices".
function shortNameFor(fullName) {
  const slug = fullName.normalize("NFKD").replace(/[^\w\s.-]/g, "").trim().toLowerCase().replace(/[\s_]+/g, "-").slice(0, 40);
  return slug || `bot${Date.now() % 100000}`;
}

export function botsPanel(root) {
  const type = h("select", { "aria-label": "Bot type" }, TYPES.map(([value, label]) => h("option", { value: String(value) }, label)));
  const name = h("input", { type: "text", required: true, maxlength: "100" });
  const short = h("input", { type: "text", maxlength: "50", pattern: "[A-Za-z0-9_.\\-]+", placeholder: "made from the name if left empty" });
  const endpoint = h("input", { type: "url", placeholder: "https://example.com/zulip-bot", "aria-label": "Endpoint URL" });
  const interfaceType = h("select", { "aria-label": "Payload format" }, h("option", { value: "1" }, "Zulip"), h("option", { value: "2" }, "Slack-compatible"));
  const service = h("select", { "aria-label": "Embedded bot" }, EMBEDDED.map((n) => h("option", { value: n }, n)));
  const outgoing = h("div.bot-extra", field("Endpoint URL", endpoint), field("Payload format", interfaceType));
  const embedded = h("div.bot-extra", field("Embedded bot", service));
  const out = h("div.api-key");
  const list = h("ul.bot-list");
  const showExtras = () => {
    outgoing.hidden = type.value !== "3";
    embedded.hidden = type.value !== "4";
    endpoint.required = type.value === "3";
  };
  type.addEventListener("change", showExtras);
  showExtras();
  root.append(
    h(
      "form.inline-form",
      {
        on: {
          submit: async (event) => {
            event.preventDefault();
            const botType = Number(type.value);
            const params = { full_name: name.value, short_name: short.value.trim() || shortNameFor(name.value), bot_type: botType };
            if (botType === 3) Object.assign(params, { payload_url: endpoint.value, interface_type: Number(interfaceType.value) });
            if (botType === 4) params.service_name = service.value;
            const data = await attempt(() => api.post("bots", params), "Bot created.");
            if (!data) return;
            // POST /bots answers with the id and key; the email comes from the account itself.
            const info = await attempt(() => api.get(`users/${data.user_id}`));
            const email = info ? info.user.email : model.userEmail(data.user_id);
            const bot = { full_name: name.value, email, user_id: data.user_id };
            clear(
              out,
              h("p", `${name.value}: `, h("code", data.api_key)),
              h("button", { type: "button", on: { click: () => download("zuliprc", zuliprc(email, data.api_key)) } }, "Download zuliprc"),
              botType === 2 ? [h("h4", "Webhook URL"), h("p.detail", "Give this URL to the service that sends the notifications."), urlBuilder(bot, data.api_key)] : null,
            );
            name.value = short.value = endpoint.value = "";
            setTimeout(fillBots, 300);
          },
        },
      },
      h("h4", "Create a bot"),
      field("Bot type", type),
      field("Bot name", name),
      field("Short name (its email starts with it)", short),
      outgoing,
      embedded,
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
        ? bots.map((b) => {
            const service = (b.services || [])[0];
            return h(
              "li",
              h(
                "div.bot-info",
                h("strong", b.full_name),
                h("div.detail", `${(TYPES.find(([v]) => v === b.bot_type) || [0, "Bot"])[1]} \u00b7 ${b.email}`),
                b.bot_type === 3 && service ? h("div.detail", `Endpoint: ${service.base_url}`) : null,
                b.bot_type === 4 && service ? h("div.detail", `Runs: ${service.service_name}`) : null,
                b.bot_type === 2 ? lazyDetails("Webhook URL", () => urlBuilder(b, b.api_key)) : null,
              ),
              h("div.row",
                h("button", { type: "button", "aria-label": `Download zuliprc of ${b.full_name}`, on: { click: () => download("zuliprc", zuliprc(b.email, b.api_key)) } }, "Download zuliprc"),
                h("button", {
                  type: "button",
                  "aria-label": `Deactivate ${b.full_name}`,
                  on: {
                    click: async () => {
                      if (!(await confirmDialog(`Deactivate the bot ${b.full_name}?`, "Deactivate"))) return;
                      if (await attempt(() => api.del(`bots/${b.user_id}`), "Bot deactivated.")) {
                        b.is_active = false;
                        fillBots();
                      }
                    },
                  },
                }, "Deactivate")),
            );
          })
        : h("li.detail", "No bots yet."),
    );
  }
  fillBots();
  followBotEvents();
  redrawList = () => {
    if (list.isConnected) fillBots();
    else redrawList = null;
  };
}
