// The compose box's drafts, kept on the server: one per conversation, saved as you type.
import * as api from "./api.js";
import { model } from "./model.js";
import { debounce, toast } from "./util.js";
import { C } from "./compose_state.js";

// --- drafts (on the server) -----------------------------------------------------------------

export function conversationKey(t) {
  if (t.type === "stream") return `stream:${t.stream_id}:${(t.topic || "").toLowerCase()}`;
  return `private:${[...t.to].sort((a, b) => a - b).join(",")}`;
}

export function draftKey(draft) {
  if (draft.type === "stream") return `stream:${draft.to[0]}:${(draft.topic || "").toLowerCase()}`;
  return `private:${[...draft.to].sort((a, b) => a - b).join(",")}`;
}

export const creating = new Map(); // conversation key -> the POST /drafts under way (one draft per conversation)

export const saveDraft = debounce(async () => {
  if (!C.target) return;
  if (C.target.type === "stream") C.target.topic = C.els.topic.value;
  const key = conversationKey(C.target);
  const content = C.els.textarea.value;
  const draft = {
    type: C.target.type === "stream" ? "stream" : "private",
    to: C.target.type === "stream" ? [C.target.stream_id] : C.target.to,
    topic: C.target.type === "stream" ? C.target.topic : "",
    content,
    timestamp: Math.floor(Date.now() / 1000),
  };
  // A draft being created for this conversation: wait for its id rather than make a second one.
  if (creating.has(key)) await creating.get(key).catch(() => {});
  const id = C.draftIds.get(key);
  try {
    if (!content.trim()) {
      if (id !== undefined) {
        C.draftIds.delete(key);
        model.drafts.delete(id);
        await api.del(`drafts/${id}`);
      }
    } else if (id !== undefined) {
      model.drafts.set(id, { ...draft, id });
      await api.patch(`drafts/${id}`, { draft });
    } else {
      const request = api.post("drafts", { drafts: [draft] });
      creating.set(key, request);
      try {
        const { ids } = await request;
        C.draftIds.set(key, ids[0]);
        model.drafts.set(ids[0], { ...draft, id: ids[0] });
      } finally {
        creating.delete(key);
      }
    }
  } catch (error) {
    if (error.code !== "NETWORK") toast(`Draft not saved: ${error.message}`, "error");
  }
}, 600);

export function flushDraft() {
  saveDraft.flush();
}
