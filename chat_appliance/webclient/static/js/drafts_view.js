// The Drafts view: every saved draft (kept on the server), newest first, to restore or delete.
import * as api from "./api.js";
import { model } from "./model.js";
import { channelView, dmView, viewHash } from "./narrow.js";
import { clear, formatTime, h, toast } from "./util.js";

export const kind = "drafts";
export const hash = () => "#drafts";
export const title = () => "Drafts";

let mounted = null;

export function show(view, { list }) {
  mounted = list;
  showDrafts(list);
}

export function close() {
  mounted = null;
}

// Drawn again when the drafts change (here or on another device) and after a new event queue.
export function reset() {
  if (mounted) showDrafts(mounted);
}
model.on("drafts", reset);

// Restoring a draft opens its conversation, where the compose box finds it.
const restore = (draft, href) => {
  location.hash = href;
};

function showDrafts(container) {
  const drafts = [...model.drafts.values()].filter((d) => d.content.trim()).sort((a, b) => b.timestamp - a.timestamp);
  if (!drafts.length) {
    clear(container, h("div.empty", "You have no drafts."));
    return;
  }
  clear(
    container,
    h("ul.drafts-list", { "aria-label": "Drafts" }, drafts.map((draft) => {
      const where = draft.type === "stream"
        ? `#${model.streamName(draft.to[0])} > ${draft.topic || "(no topic)"}`
        : `To ${draft.to.map((id) => model.userName(id)).join(", ") || "nobody yet"}`;
      const href = draft.type === "stream" ? viewHash(channelView(draft.to[0], draft.topic)) : viewHash(dmView(draft.to));
      const remove = async () => {
        try {
          await api.del(`drafts/${draft.id}`);
          model.drafts.delete(draft.id);
          showDrafts(container);
        } catch (error) {
          toast(error.message, "error");
        }
      };
      return h(
        "li.draft",
        { "aria-label": where },
        h("div.draft-head", h("a", { href }, where), h("span.detail", formatTime(draft.timestamp))),
        h("div.draft-content", draft.content),
        h("div.row",
          h("button", { type: "button", on: { click: () => restore(draft, href) } }, "Restore"),
          h("button", { type: "button", "aria-label": `Delete draft: ${where}`, on: { click: remove } }, "Delete")),
      );
    })),
  );
}
