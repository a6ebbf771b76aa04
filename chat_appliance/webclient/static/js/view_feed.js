// The message views (the Combined feed and every narrow) as the router sees them: the feed's
// message list, with the compose box aimed at the view's conversation.
import * as compose from "./compose.js";
import * as feed from "./feed.js";
import { viewHash, viewTitle } from "./narrow.js";

export const kind = "feed";
export const hash = viewHash;
export const title = viewTitle;
export const search = true; // the search box shows the view's terms

export async function show(view, { prefetched = null } = {}) {
  compose.retarget(compose.targetForView(view));
  await feed.openView(view, prefetched);
}

export const close = () => feed.closeView();

export function reset(view) {
  return feed.openView(view);
}
