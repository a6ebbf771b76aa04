// Glue between the page and the administration screens: the channel view's header, clicks on
// names and avatars (profile cards), the first owner's "name your organization" step, and the
// changes that keep these screens current. The screens themselves load when first needed and
// subscribe to the changes they show.
import * as api from "./api.js";
import { model } from "./model.js";
import { opOf } from "./narrow.js";
import { renderSidebars } from "./sidebar.js";
import { noteSubscription } from "./stores/channels.js";
import { clear, h, toast } from "./util.js";

// A screen's module loads at its first use. A load that fails (the server restarting just then)
// is tried again at the next use; events need no screen that is not loaded yet.
function lazyModule(load) {
  let loading = null;
  return () => (loading ||= load().catch((error) => {
    loading = null;
    throw error;
  }));
}
const channelSettings = lazyModule(() => import("./channel_settings.js"));
const profileCard = lazyModule(() => import("./profile_card.js"));

let header = null;
let currentView = null;

// The quick start names the organization this; its owner is asked for a real name once.
const QUICK_START_NAME = "chat-appliance";
const NAME_STEP_DONE = "chat-appliance.name-step-done";

export function install(viewHeader) {
  header = viewHeader;
  document.addEventListener("click", (event) => {
    const target = event.target.closest("[data-profile-user]");
    if (!target) return;
    event.preventDefault();
    event.stopPropagation();
    profileCard().then((m) => m.openProfileCard(Number(target.dataset.profileUser)),
      (error) => toast(`Could not open the profile: ${error.message}`, "error"));
  }, true);
  followChanges();
  nameStep();
  const name = document.querySelector(".realm-name");
  if (name) name.before(h("img.realm-icon", { src: model.state.realm_icon_url, alt: "", width: 24, height: 24 }));
}

// A channel brought back from the archive arrives as a "create" event without the viewer's
// subscription (this page does not declare archived_channels): ask for the subscriptions again.
async function restoreSubscriptions() {
  try {
    const { subscriptions } = await api.get("users/me/subscriptions");
    let changed = false;
    for (const sub of subscriptions) {
      if (model.subs.has(sub.stream_id)) continue;
      noteSubscription(sub);
      changed = true;
    }
    if (changed) renderSidebars();
  } catch {
    /* the next reload shows it */
  }
}

// Called after each route: a channel's views show its description, the channel view a settings button.
export async function onView(view) {
  currentView = view;
  if (!header) return;
  const channel = opOf(view, "channel");
  if (!channel || view.kind === "inbox" || !model.streams.has(channel.operand)) return clear(header);
  let channelHeader;
  try {
    ({ channelHeader } = await channelSettings());
  } catch {
    return; // drawn at the next view or channel event
  }
  // The settings button only in the channel's own view, not in its topics': a topic view then has
  // one button whose name contains "Settings" (the top bar's), which scripts find by that name.
  if (currentView === view) clear(header, channelHeader(channel.operand, { withButton: view.ops.length === 1 }));
}

// The screens' subscriptions to changes (the stores have applied them already).
function followChanges() {
  model.on("stream", (event) => {
    if (event.op === "create" && event.streams.some((s) => !model.subs.has(s.stream_id))) restoreSubscriptions();
  });
  model.on("realm", (event) => {
    if (event.property === "icon") for (const el of document.querySelectorAll("img.realm-icon")) el.src = event.data.icon_url;
    if (event.property === "name" || event.data?.name !== undefined) {
      for (const el of document.querySelectorAll(".realm-name")) el.textContent = model.state.realm_name;
    }
  });
  for (const type of ["stream", "subscription"]) model.on(type, () => currentView && onView(currentView));
}

// The first owner sign-in after the quick start: a short step to name the organization.
function nameStep() {
  const me = model.me();
  if (!me || !(me.is_owner || me.role === 100) || model.state.realm_name !== QUICK_START_NAME) return;
  if (localStorage.getItem(NAME_STEP_DONE)) return;
  const input = h("input", { type: "text", maxlength: "40", required: true, "aria-label": "Your organization's name", placeholder: "Acme Inc." });
  const banner = h(
    "form.name-step",
    {
      "aria-label": "Name your organization",
      on: {
        submit: async (event) => {
          event.preventDefault();
          try {
            await api.patch("realm", { name: input.value.trim() });
            localStorage.setItem(NAME_STEP_DONE, "1");
            banner.remove();
            toast("Organization named.");
          } catch (error) {
            toast(error.message, "error");
          }
        },
      },
    },
    h("strong", "Name your organization"),
    h("span.detail", "People see this name when they sign in and in their invitations."),
    input,
    h("button.primary", { type: "submit" }, "Save name"),
    h("button", { type: "button", on: { click: () => { localStorage.setItem(NAME_STEP_DONE, "1"); banner.remove(); } } }, "Later"),
  );
  document.querySelector("main.middle")?.prepend(banner);
}
