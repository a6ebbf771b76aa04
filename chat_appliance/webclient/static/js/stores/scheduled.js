// The user's scheduled messages (not yet delivered), soonest first when listed.
export const scheduled = new Map(); // scheduled message id -> scheduled message

export function load(state) {
  scheduled.clear();
  for (const sm of state.scheduled_messages || []) scheduled.set(sm.scheduled_message_id, sm);
}

export function apply(event) {
  if (event.op === "add") for (const sm of event.scheduled_messages) scheduled.set(sm.scheduled_message_id, sm);
  else if (event.op === "update") scheduled.set(event.scheduled_message.scheduled_message_id, event.scheduled_message);
  else if (event.op === "remove") scheduled.delete(event.scheduled_message_id);
}

export const soonestFirst = () => [...scheduled.values()].sort((a, b) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp);
