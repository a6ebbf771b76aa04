// Narrows: Zulip's search operators, its URL hash form, and whether a live message belongs.
import { model } from "./model.js";

// Zulip's hash encoding: percent-encoding with "." in place of "%".
export function hashEncode(text) {
  return encodeURIComponent(String(text)).replace(/\./g, "%2E").replace(/%/g, ".");
}

export function hashDecode(text) {
  try {
    return decodeURIComponent(text.replace(/\./g, "%"));
  } catch {
    return text;
  }
}

const slug = (name) => String(name).replace(/[^\p{L}\p{N}_-]+/gu, "-");
const ALIASES = { stream: "channel", streams: "channels", subject: "topic", "pm-with": "dm", pm: "dm" };

// A view is {kind: "feed" | "inbox" | "narrow", ops: [{operator, operand, negated}]}.
export function parseHash(hash) {
  const parts = hash.replace(/^#/, "").split("/");
  if (parts[0] === "inbox") return { kind: "inbox", ops: [] };
  if (parts[0] === "recent") return { kind: "recent", ops: [] };
  if (parts[0] === "drafts") return { kind: "drafts", ops: [] };
  if (parts[0] === "scheduled") return { kind: "scheduled", ops: [] };
  if (parts[0] !== "narrow") return { kind: "feed", ops: [] };
  const ops = [];
  for (let i = 1; i + 1 < parts.length; i += 2) {
    let operator = hashDecode(parts[i]);
    let negated = false;
    if (operator.startsWith("-")) {
      negated = true;
      operator = operator.slice(1);
    }
    operator = ALIASES[operator] || operator;
    const raw = hashDecode(parts[i + 1]);
    let operand = raw;
    if (operator === "channel") operand = channelIdFromSlug(raw);
    else if (operator === "dm") operand = userIdsFromSlug(raw);
    else if (operator === "sender") operand = userIdsFromSlug(raw)[0] ?? raw;
    else if (operator === "near" || operator === "id" || operator === "with") operand = Number(raw);
    if (operand === null || operand === undefined || Number.isNaN(operand)) continue;
    ops.push({ operator, operand, negated });
  }
  return { kind: ops.length ? "narrow" : "feed", ops };
}

function channelIdFromSlug(raw) {
  const match = /^(\d+)(?:-|$)/.exec(raw);
  if (match) return Number(match[1]);
  const stream = model.streamByName(raw);
  return stream ? stream.stream_id : null;
}

function userIdsFromSlug(raw) {
  const match = /^([\d,]+)(?:-|$)/.exec(raw);
  if (match) return match[1].split(",").filter(Boolean).map(Number);
  return raw.split(",").map((email) => model.userByEmail(email.trim())).filter(Boolean).map((u) => u.user_id);
}

export function viewHash(view) {
  if (view.kind === "inbox") return "#inbox";
  if (view.kind === "recent") return "#recent";
  if (view.kind === "drafts") return "#drafts";
  if (view.kind === "scheduled") return "#scheduled";
  if (view.kind === "feed" || !view.ops.length) return "#feed";
  return "#narrow/" + view.ops.map(opHash).join("/");
}

function opHash({ operator, operand, negated }) {
  let text;
  if (operator === "channel") text = `${operand}-${slug(model.streamName(operand))}`;
  else if (operator === "dm") {
    const ids = [...operand].sort((a, b) => a - b);
    const name = ids.length === 1 ? model.userName(ids[0]) : "group";
    text = `${ids.join(",")}-${slug(name)}`;
  } else if (operator === "sender") text = `${operand}-${slug(model.userName(operand))}`;
  else text = String(operand);
  return `${negated ? "-" : ""}${operator}/${hashEncode(text)}`;
}

export const channelView = (streamId, topic) => ({
  kind: "narrow",
  ops: [{ operator: "channel", operand: streamId }, ...(topic !== undefined ? [{ operator: "topic", operand: topic }] : [])],
});

export const dmView = (userIds) => ({ kind: "narrow", ops: [{ operator: "dm", operand: [...userIds].sort((a, b) => a - b) }] });

// Split search text into tokens, keeping "quoted phrases" together.
function tokens(text) {
  const out = [];
  const re = /(-?[a-z-]+:)?("([^"]*)"|\S+)/gi;
  let match;
  while ((match = re.exec(text))) {
    const prefix = match[1] || "";
    const value = match[3] !== undefined ? match[3] : match[2];
    out.push({ prefix, value });
  }
  return out;
}

// Zulip's search syntax: channel:, topic:, sender:, dm:, is:, near:, -negation, free text.
export function parseSearch(text) {
  const ops = [];
  const words = [];
  for (const { prefix, value } of tokens(text.trim())) {
    if (!prefix) {
      words.push(value);
      continue;
    }
    let operator = prefix.slice(0, -1).toLowerCase();
    let negated = false;
    if (operator.startsWith("-")) {
      negated = true;
      operator = operator.slice(1);
    }
    operator = ALIASES[operator] || operator;
    let operand = value;
    if (operator === "channel") {
      const stream = model.streamByName(value);
      if (!stream) throw new Error(`No channel named "${value}".`);
      operand = stream.stream_id;
    } else if (operator === "sender") {
      const user = value === "me" ? model.me() : model.userByEmailOrName(value);
      if (!user) throw new Error(`No user "${value}".`);
      operand = user.user_id;
    } else if (operator === "dm") {
      operand = value.split(",").map((part) => {
        const user = model.userByEmailOrName(part.trim());
        if (!user) throw new Error(`No user "${part}".`);
        return user.user_id;
      });
    } else if (operator === "near" || operator === "id") operand = Number(value);
    else if (operator === "search") {
      words.push(value);
      continue;
    } else if (!["topic", "is", "has", "channels", "in"].includes(operator)) {
      words.push(`${prefix}${value}`);
      continue;
    }
    ops.push({ operator, operand, negated });
  }
  if (words.length) ops.push({ operator: "search", operand: words.join(" "), negated: false });
  return { kind: ops.length ? "narrow" : "feed", ops };
}

export function searchText(view) {
  if (view.kind !== "narrow") return "";
  return view.ops
    .map(({ operator, operand, negated }) => {
      const sign = negated ? "-" : "";
      let value = operand;
      if (operator === "search") return operand;
      if (operator === "channel") value = model.streamName(operand);
      else if (operator === "sender") value = model.userEmail(operand);
      else if (operator === "dm") value = operand.map((id) => model.userEmail(id)).join(",");
      value = String(value);
      return `${sign}${operator}:${/\s/.test(value) ? `"${value}"` : value}`;
    })
    .join(" ");
}

// The narrow as GET /messages takes it (channel ids, user ids).
export function apiNarrow(view) {
  if (view.kind !== "narrow") return [];
  return view.ops.filter((op) => op.operator !== "near").map(({ operator, operand, negated }) => ({ operator, operand, negated }));
}

// A channel's own view leaves out its muted topics, as Zulip's does (their own views show them).
export function hidesMutedTopics(view) {
  return view.kind === "narrow" && view.ops.length === 1 && view.ops[0].operator === "channel" && !view.ops[0].negated;
}

// The messages of a fetched page that the view shows: the Combined feed leaves out muted
// channels and topics (Zulip's "in:home", judged here from the same user_topic facts).
export function shownIn(view, messages) {
  if (view.kind === "feed") return messages.filter((m) => !model.isMutedMessage(m));
  if (!hidesMutedTopics(view)) return messages;
  return messages.filter((m) => m.type !== "stream" || model.policyOf(m.stream_id, m.subject) !== 1);
}

export const opOf = (view, operator) => (view.ops || []).find((op) => op.operator === operator && !op.negated);

export function nearId(view) {
  const near = opOf(view, "near") || opOf(view, "id");
  return near ? near.operand : null;
}

// Does a message (as events deliver it) belong in this view? Free-text search narrows cannot
// be judged here: the server's full-text search decides, so live messages are not added there.
export function matches(view, message) {
  if (hidesMutedTopics(view) && message.type === "stream" && model.policyOf(message.stream_id, message.subject) === 1) return false;
  if (view.kind === "inbox" || view.kind === "recent" || view.kind === "drafts" || view.kind === "scheduled") return false;
  if (view.kind === "feed") return !model.isMutedMessage(message);
  for (const { operator, operand, negated } of view.ops) {
    let ok;
    switch (operator) {
      case "channel":
        ok = message.type === "stream" && message.stream_id === operand;
        break;
      case "topic":
        ok = message.type === "stream" && message.subject.toLowerCase() === String(operand).toLowerCase();
        break;
      case "dm": {
        if (message.type !== "private") {
          ok = false;
          break;
        }
        const wanted = new Set([...operand, model.myId]);
        const have = new Set(message.display_recipient.map((r) => r.id));
        ok = wanted.size === have.size && [...wanted].every((id) => have.has(id));
        break;
      }
      case "sender":
        ok = message.sender_id === operand;
        break;
      case "is":
        ok = {
          starred: () => (message.flags || []).includes("starred"),
          mentioned: () => (message.flags || []).some((f) => /mentioned/.test(f)),
          dm: () => message.type === "private",
          unread: () => !(message.flags || []).includes("read"),
        }[operand]?.() ?? false;
        break;
      case "near":
      case "id":
        ok = true;
        break;
      default:
        return false;
    }
    if (ok === negated) return false;
  }
  return true;
}

export function viewTitle(view) {
  if (view.kind === "inbox") return "Inbox";
  if (view.kind === "recent") return "Recent conversations";
  if (view.kind === "drafts") return "Drafts";
  if (view.kind === "scheduled") return "Scheduled messages";
  if (view.kind === "feed") return "Combined feed";
  const channel = opOf(view, "channel");
  const topic = opOf(view, "topic");
  const dm = opOf(view, "dm");
  const is = opOf(view, "is");
  if (channel && topic) return `#${model.streamName(channel.operand)} > ${topic.operand}`;
  if (channel) return `#${model.streamName(channel.operand)}`;
  if (dm) return dm.operand.map((id) => model.userName(id)).join(", ");
  if (is && view.ops.length === 1) return { starred: "Starred messages", mentioned: "Mentions", dm: "Direct messages" }[is.operand] || `is:${is.operand}`;
  return `Search: ${searchText(view)}`;
}

export function messageLink(message) {
  if (message.type === "stream") {
    return `${location.origin}/#narrow/channel/${message.stream_id}-${hashEncode(slug(message.display_recipient))}/topic/${hashEncode(message.subject)}/near/${message.id}`;
  }
  const ids = message.display_recipient.map((r) => r.id).filter((id) => id !== model.myId);
  return `${location.origin}/#narrow/dm/${(ids.length ? ids : [model.myId]).sort((a, b) => a - b).join(",")}-dm/near/${message.id}`;
}
