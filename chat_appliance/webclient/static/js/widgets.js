// Poll and todo widgets (a message starting with /poll or /todo): their state is the message's
// submessages, replayed in order; voting, adding options, ticking and adding tasks send new
// ones (POST /submessage), which come back to everyone as submessage events.
import * as api from "./api.js";
import { model } from "./model.js";
import { h, toast } from "./util.js";

function parse(submessage) {
  try {
    return JSON.parse(submessage.content);
  } catch {
    return null;
  }
}

function send(message, data) {
  api.post("submessage", { message_id: message.id, msg_type: "widget", content: JSON.stringify(data) })
    .catch((error) => toast(error.message, "error"));
}

function pollState(widget, later) {
  const options = new Map();
  let question = widget.extra_data?.question || "";
  (widget.extra_data?.options || []).forEach((text, i) => options.set(`canned,${i}`, { text, voters: new Set() }));
  for (const [sub, data] of later) {
    if (data.type === "new_option" && typeof data.option === "string") {
      options.set(`${sub.sender_id},${data.idx}`, { text: data.option, voters: new Set() });
    } else if (data.type === "vote" && options.has(data.key)) {
      const voters = options.get(data.key).voters;
      if (data.vote === 1) voters.add(sub.sender_id);
      else voters.delete(sub.sender_id);
    } else if (data.type === "question" && typeof data.question === "string") {
      question = data.question;
    }
  }
  return { question, options };
}

function renderPoll(message, widget, later) {
  const { question, options } = pollState(widget, later);
  const mineCount = later.filter(([sub, data]) => sub.sender_id === model.myId && data.type === "new_option").length;
  const input = h("input", { type: "text", placeholder: "New option", "aria-label": "New option", maxlength: "200" });
  const add = () => {
    const text = input.value.trim();
    if (text) send(message, { type: "new_option", idx: mineCount + 1, option: text });
    input.value = "";
  };
  return h(
    "div.widget.poll",
    h("div.widget-title", question || "Poll"),
    h("ul.poll-options", [...options].map(([key, option]) => {
      const mine = option.voters.has(model.myId);
      return h(
        "li",
        h("button.poll-vote", {
          type: "button",
          class: `poll-vote${mine ? " mine" : ""}`,
          "aria-pressed": String(mine),
          "aria-label": `${option.text}: ${option.voters.size} ${option.voters.size === 1 ? "vote" : "votes"}`,
          title: [...option.voters].map((id) => model.users.get(id)?.full_name || "?").join(", "),
          on: { click: () => send(message, { type: "vote", key, vote: mine ? -1 : 1 }) },
        }, String(option.voters.size)),
        h("span.poll-option", option.text),
      );
    })),
    h("form.widget-add", { on: { submit: (event) => { event.preventDefault(); add(); } } }, input,
      h("button", { type: "submit" }, "Add option")),
  );
}

function todoState(widget, later) {
  const tasks = new Map();
  let title = widget.extra_data?.task_list_title || "";
  (widget.extra_data?.tasks || []).forEach((task, i) => tasks.set(`${i},canned`, { ...task, completed: false }));
  for (const [sub, data] of later) {
    if (data.type === "new_task" && typeof data.task === "string") {
      tasks.set(`${data.key},${sub.sender_id}`, { task: data.task, desc: data.desc || "", completed: !!data.completed });
    } else if (data.type === "strike" && tasks.has(data.key)) {
      tasks.get(data.key).completed = !tasks.get(data.key).completed;
    } else if (data.type === "new_task_list_title" && typeof data.title === "string") {
      title = data.title;
    }
  }
  return { title, tasks };
}

function renderTodo(message, widget, later) {
  const { title, tasks } = todoState(widget, later);
  const mineCount = later.filter(([sub, data]) => sub.sender_id === model.myId && data.type === "new_task").length;
  const input = h("input", { type: "text", placeholder: "New task", "aria-label": "New task", maxlength: "200" });
  const add = () => {
    const text = input.value.trim();
    if (text) send(message, { type: "new_task", key: mineCount + 1, task: text, desc: "", completed: false });
    input.value = "";
  };
  return h(
    "div.widget.todo",
    h("div.widget-title", title || "Task list"),
    h("ul.todo-tasks", [...tasks].map(([key, task]) => h(
      "li",
      h("label", { class: task.completed ? "done" : "" },
        h("input.todo-check", { type: "checkbox", checked: task.completed, "aria-label": task.task, on: { change: () => send(message, { type: "strike", key }) } }),
        h("strong", task.task), task.desc ? ` ${task.desc}` : ""),
    ))),
    h("form.widget-add", { on: { submit: (event) => { event.preventDefault(); add(); } } }, input,
      h("button", { type: "submit" }, "Add task")),
  );
}

// The widget of a message, or null if it has none.
export function renderWidget(message) {
  const subs = message.submessages || [];
  if (!subs.length || subs[0].msg_type !== "widget") return null;
  const widget = parse(subs[0]);
  if (!widget) return null;
  const later = subs.slice(1).map((sub) => [sub, parse(sub)]).filter(([, data]) => data && typeof data === "object");
  if (widget.widget_type === "poll") return renderPoll(message, widget, later);
  if (widget.widget_type === "todo") return renderTodo(message, widget, later);
  return null;
}
