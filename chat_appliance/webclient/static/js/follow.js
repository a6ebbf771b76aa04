// How the page follows the server: the views' subscriptions to changes (model.on, emitted by
// dispatch.js after the stores applied each event), and the background refreshes (presence, the
// sidebar's direct-message conversations).
import * as api from "./api.js";
import * as compose from "./compose.js";
import * as feed from "./feed.js";
import { model } from "./model.js";
import { notifyMessage } from "./notify.js";
import { redrawViewActions, refreshView } from "./router.js";
import { forgetTopics, noteDm, noteTopic, renderSidebars, renderUsers } from "./sidebar.js";
import { noteAll } from "./stores/presence.js";
import { followMovedTopic } from "./topic_actions.js";

// The changes after which the sidebars, the view shown and the titles are redrawn.
const REDRAWN = ["message", "update_message", "delete_message", "reaction", "submessage", "update_message_flags", "typing",
  "subscription", "stream", "realm_user", "realm", "user_topic", "user_status", "scheduled_messages"];

export function followChanges() {
  model.on("message", (event) => {
    const message = { ...event.message, flags: event.flags || [] };
    const conversation = model.conversationOf(message);
    if (conversation.dm) noteDm(conversation);
    else noteTopic(message.stream_id, message.subject, message.id);
    feed.addMessage(message, event.local_message_id ?? null);
    notifyMessage(message);
    compose.showTyping();
  });
  model.on("update_message", (event) => {
    if (event.rendered_content === undefined && event.subject === undefined && event.new_stream_id === undefined) return;
    if (event.subject !== undefined || event.new_stream_id !== undefined) {
      forgetTopics(event.stream_id);
      if (event.new_stream_id) forgetTopics(event.new_stream_id);
    }
    feed.updateMessage(event);
    compose.followTopicMove(event);
    followMovedTopic(event);
  });
  model.on("delete_message", (event) => feed.deleteMessages(event.message_ids || [event.message_id]));
  model.on("reaction", feed.reactionEvent);
  model.on("submessage", feed.submessageEvent);
  model.on("update_message_flags", feed.flagsEvent);
  model.on("typing", () => compose.showTyping());
  model.on("subscription", () => compose.fillChannels());
  model.on("stream", () => compose.fillChannels());
  model.on("realm_user", (event) => {
    if (event.op === "update") feed.refreshAll();
  });
  // Muting or unmuting someone hides or shows their messages in the page.
  model.on("muted_users", () => feed.refreshAll());
  model.on("presence", () => renderUsers());
  model.on("drafts", (event) => {
    compose.onDraftsReloaded();
    refreshView(event);
  });
  for (const type of REDRAWN) {
    model.on(type, (event) => {
      renderSidebars();
      refreshView(event);
    });
  }
  model.on("user_topic", redrawViewActions);
  model.on("subscription", redrawViewActions);
}

// The direct-message conversations of the sidebar: the latest ones, newest first.
export async function loadRecentDms() {
  try {
    const { messages } = await api.get("messages", {
      anchor: "newest", num_before: 200, num_after: 0, apply_markdown: false, client_gravatar: true,
      narrow: [{ operator: "is", operand: "dm" }],
    });
    for (const message of messages.reverse()) noteDm(model.conversationOf(message));
    renderSidebars();
  } catch {
    /* the sidebar still lists unread conversations */
  }
}

export async function reportPresence() {
  try {
    const data = await api.post("users/me/presence", { status: document.hidden ? "idle" : "active", slim_presence: true, new_user_input: !document.hidden });
    noteAll(data.presences);
    renderUsers();
  } catch {
    /* next time */
  }
}
