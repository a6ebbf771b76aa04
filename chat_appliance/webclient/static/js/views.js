// The view registry: each view of the middle column is a module exporting {kind, hash, title,
// show, close} (refresh too, when it redraws after changes). The router looks a view up by its
// kind here; the list views load when first shown (none is on the way to the first message).
const LOADERS = {
  feed: () => import("./view_feed.js"),
  narrow: () => import("./view_feed.js"),
  inbox: () => import("./inbox.js"),
  recent: () => import("./recent.js"),
  drafts: () => import("./drafts_view.js"),
  scheduled: () => import("./scheduled_view.js"),
};

export const viewFor = (kind) => (LOADERS[kind] || LOADERS.feed)();
