// The Scheduled messages view: each message waiting to be sent, with where it goes, when, its
// text, and a Delete button (as Zulip's scheduled messages overlay).
import * as api from "./api.js";
import { model } from "./model.js";
import { soonestFirst } from "./stores/scheduled.js";
import { clear, formatFullTime, h, toast } from "./util.js";

export const kind = "scheduled";
export const hash = () => "#scheduled";
export const title = () => "Scheduled messages";

let mounted = null;

export function show(view, { list }) {
  mounted = list;
  draw();
}

export function close() {
  mounted = null;
}

export const reset = () => draw();
model.on("scheduled_messages", () => draw());

const where = (sm) => (sm.type === "stream"
  ? `#${model.streamName(sm.to)} > ${sm.topic || "(no topic)"}`
  : `To ${(Array.isArray(sm.to) ? sm.to : [sm.to]).map((id) => model.userName(id)).join(", ")}`);

async function remove(sm) {
  try {
    await api.del(`scheduled_messages/${sm.scheduled_message_id}`);
  } catch (error) {
    toast(error.message, "error");
  }
}

function draw() {
  if (!mounted) return;
  const list = soonestFirst();
  if (!list.length) {
    clear(mounted, h("div.empty", "You have no scheduled messages."));
    return;
  }
  clear(mounted, h("ul.scheduled-list", { "aria-label": "Scheduled messages" }, list.map((sm) => {
    const content = h("div.rendered.scheduled-content");
    content.innerHTML = sm.rendered_content; // rendered and sanitised by the server
    return h("li.scheduled", { "aria-label": `${where(sm)}, ${formatFullTime(sm.scheduled_delivery_timestamp)}` },
      h("div.draft-head", h("span", where(sm)), h("span.detail", `${sm.failed ? "Failed to send \u00b7 " : ""}${formatFullTime(sm.scheduled_delivery_timestamp)}`)),
      content,
      h("div.row", h("button", { type: "button", "aria-label": `Delete scheduled message: ${where(sm)}`, on: { click: () => remove(sm) } }, "Delete")));
  })));
}
