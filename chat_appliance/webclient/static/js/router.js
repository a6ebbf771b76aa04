// The router: the location's hash names a view; the view registry (views.js) gives its module,
// which draws it in the middle column. The view's title, the search box, the sidebars' current
// view, the view's actions and the channel header follow here, the same for every view.
import * as admin from "./admin.js";
import { model } from "./model.js";
import { parseHash, searchText, viewTitle } from "./narrow.js";
import { setCurrentView } from "./sidebar.js";
import { renderViewActions } from "./view_actions.js";
import { viewFor } from "./views.js";

let els = null;
let current = null; // the module of the view shown
let currentHash = null;
let generation = 0;

export const shownView = () => parseHash(location.hash);
export const currentModule = () => current;

export function mountRouter(elements) {
  els = elements;
  window.addEventListener("hashchange", () => {
    if (location.hash !== currentHash) route();
  });
}

// `prefetched`: {hash, request}, the first view's messages asked for beside /register.
export async function route(prefetched = null) {
  const view = parseHash(location.hash);
  const mine = ++generation;
  const module = await viewFor(view.kind);
  if (mine !== generation) return;
  if (current && current !== module) current.close();
  current = module;
  currentHash = location.hash;
  els.title.textContent = module.title(view);
  els.search.value = module.search ? searchText(view) : "";
  setCurrentView(view);
  renderViewActions(els.viewActions, view);
  admin.onView(view);
  updateTitle();
  await module.show(view, {
    list: els.feed.querySelector(".message-list"),
    prefetched: prefetched && prefetched.hash === location.hash ? prefetched.request : null,
  });
}

// After a change: the view redraws what it shows (when it does), the titles follow.
export function refreshView(event) {
  current?.refresh?.(event);
  updateTitle();
}

// A new event queue: the view shown is drawn again from the reloaded state.
export function resetView() {
  const view = parseHash(location.hash);
  if (current?.reset) current.reset(view);
  else current?.refresh?.();
  updateTitle();
}

export function redrawViewActions() {
  renderViewActions(els.viewActions, parseHash(location.hash));
}

export function updateTitle() {
  const unread = model.totalUnread();
  const view = parseHash(location.hash);
  els.title.textContent = viewTitle(view); // a renamed channel or person
  document.title = `${unread ? `(${unread}) ` : ""}${viewTitle(view)} - ${model.state.realm_name}`;
}
