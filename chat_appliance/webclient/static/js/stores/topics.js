// The user's topic visibility policies (Zulip's user_topic): muted, unmuted, followed.
export const topicPolicy = new Map(); // "stream id:lowercased topic" -> 1 muted, 2 unmuted, 3 followed
export const mutedTopics = new Set(); // the keys whose policy is 1

export function setPolicy(streamId, topic, policy) {
  const key = `${streamId}:${topic.toLowerCase()}`;
  if (policy) topicPolicy.set(key, policy);
  else topicPolicy.delete(key);
  if (policy === 1) mutedTopics.add(key);
  else mutedTopics.delete(key);
}

export function load(state) {
  topicPolicy.clear();
  mutedTopics.clear();
  for (const t of state.user_topics || []) setPolicy(t.stream_id, t.topic_name, t.visibility_policy);
}

export function apply(event) {
  setPolicy(event.stream_id, event.topic_name, event.visibility_policy);
}

