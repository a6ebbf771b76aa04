// /register, then a long-poll loop on /json/events. A lost queue (server restart, idle
// collection) answers BAD_EVENT_QUEUE_ID: register again and refetch, leaving the compose box be.
import * as api from "./api.js";

const CAPABILITIES = {
  notification_settings_null: true,
  bulk_message_deletion: true,
  user_avatar_url_field_optional: false,
  stream_typing_notifications: true,
  user_settings_object: true,
  linkifier_url_template: true,
  empty_topic_name: true,
};

let queueId = null;
let lastEventId = -1;
let stopped = false;
let inFlight = null; // the AbortController of the poll waiting now

// The answer boot.js already asked for, once: later registers (after a lost queue) ask anew.
async function bootRegister() {
  const boot = window.chatBoot;
  if (!boot || !boot.register) return null;
  const request = boot.register;
  boot.register = null;
  try {
    const { status, body } = await request;
    if (status === 200 && body.result === "success") return body;
  } catch {
    /* ask again below */
  }
  return null;
}

export async function register() {
  const early = await bootRegister();
  if (early) {
    queueId = early.queue_id;
    lastEventId = early.last_event_id;
    return early;
  }
  const state = await api.post("register", {
    apply_markdown: true,
    client_gravatar: true,
    slim_presence: true,
    include_subscribers: false,
    client_capabilities: CAPABILITIES,
  });
  queueId = state.queue_id;
  lastEventId = state.last_event_id;
  return state;
}

// Poll forever; handle(event) for each event (heartbeats too: dispatch.js ignores them), onReset(state) after a re-register.
export async function pollLoop(handle, onReset, onSignedOut) {
  let failures = 0;
  while (!stopped) {
    try {
      inFlight = new AbortController();
      const { events } = await api.get("events", { queue_id: queueId, last_event_id: lastEventId }, { signal: inFlight.signal });
      failures = 0;
      for (const event of events) {
        lastEventId = Math.max(lastEventId, event.id);
        try {
          handle(event);
        } catch (error) {
          console.warn("event not applied", event, error);
        }
      }
    } catch (error) {
      if (stopped) return;
      if (error.status === 401) {
        onSignedOut();
        return;
      }
      if (error.code === "BAD_EVENT_QUEUE_ID") {
        try {
          onReset(await register());
          failures = 0;
          continue;
        } catch (registerError) {
          if (registerError.status === 401) {
            onSignedOut();
            return;
          }
        }
      }
      failures += 1;
      await new Promise((resolve) => setTimeout(resolve, Math.min(30000, 500 * 2 ** Math.min(failures, 6))));
    }
  }
}

export const currentQueueId = () => queueId;

// Leaving the page (closing the tab, reloading, following a link away) deletes its queue, as
// Zulip's web app does: a queue left behind goes on collecting every event until the server's
// idle collection ends it ten minutes later, and a day of reloads kept dozens of them. A page
// kept in the back/forward cache may come back to its queue, so it keeps it.
export function releaseQueueOnLeave() {
  window.addEventListener("pagehide", (event) => {
    if (event.persisted || !queueId || stopped) return;
    api.del("events", { queue_id: queueId }, { keepalive: true }).catch(() => {});
  });
}

// Stop following events, the waiting poll included (before Log out ends the session, so
// that no poll is answered 401).
export function stopPolling() {
  stopped = true;
  inFlight?.abort();
}
