// Channels: every one the user can see, and the user's subscriptions with their own settings.
export const streams = new Map(); // stream id -> channel
export const subs = new Map(); // stream id -> subscription (the channel's fields and the user's)

export function load(state) {
  streams.clear();
  subs.clear();
  for (const stream of [...(state.streams || []), ...(state.never_subscribed || []), ...(state.unsubscribed || [])]) {
    streams.set(stream.stream_id, stream);
  }
  for (const sub of state.subscriptions) {
    subs.set(sub.stream_id, sub);
    streams.set(sub.stream_id, { ...streams.get(sub.stream_id), ...sub });
  }
}

// stream: channels appeared, changed (with their companions: rendered_description...) or went.
export function apply(event) {
  if (event.op === "create") for (const s of event.streams) streams.set(s.stream_id, s);
  else if (event.op === "delete") {
    for (const id of event.stream_ids || event.streams.map((s) => s.stream_id)) {
      streams.delete(id);
      subs.delete(id);
    }
  } else if (event.op === "update") {
    for (const map of [streams, subs]) {
      const s = map.get(event.stream_id);
      if (!s) continue;
      s[event.property] = event.value;
      if (event.rendered_description !== undefined) s.rendered_description = event.rendered_description;
      if (event.history_public_to_subscribers !== undefined) s.history_public_to_subscribers = event.history_public_to_subscribers;
    }
  }
}

// subscription: the user joined or left channels, or changed a setting of one (in_home_view is
// the legacy, inverted name of is_muted). Peers joining and leaving are not kept here.
export function applySubscription(event) {
  if (event.op === "add") {
    for (const sub of event.subscriptions) {
      subs.set(sub.stream_id, sub);
      streams.set(sub.stream_id, { ...streams.get(sub.stream_id), ...sub });
    }
  } else if (event.op === "remove") for (const sub of event.subscriptions) subs.delete(sub.stream_id);
  else if (event.op === "update") {
    const sub = subs.get(event.stream_id);
    if (sub) sub[event.property === "in_home_view" ? "is_muted" : event.property] = event.property === "in_home_view" ? !event.value : event.value;
  }
}

// A subscription fetched outside the event stream (a channel brought back from the archive).
export function noteSubscription(sub) {
  subs.set(sub.stream_id, sub);
  streams.set(sub.stream_id, { ...streams.get(sub.stream_id), ...sub });
}
