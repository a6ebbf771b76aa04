// The user's drafts, kept on the server (they follow the user between devices).
export const drafts = new Map(); // draft id -> draft

export function load(state) {
  drafts.clear();
  for (const draft of state.drafts || []) drafts.set(draft.id, draft);
}

export function apply(event) {
  if (event.op === "add") for (const d of event.drafts) drafts.set(d.id, d);
  else if (event.op === "update") drafts.set(event.draft.id, event.draft);
  else if (event.op === "remove") drafts.delete(event.draft_id);
}
