// Small DOM and formatting helpers shared by every module.

// h("div.cls#id", {attrs, on: {click}}, ...children): build an element. Strings become text
// nodes, never HTML: the only HTML inserted as such is the server's sanitised message content.
export function h(tag, attrs, ...children) {
  const [name, ...parts] = tag.split(/(?=[.#])/);
  const el = document.createElement(name || "div");
  for (const part of parts) {
    if (part[0] === ".") el.classList.add(part.slice(1));
    else el.id = part.slice(1);
  }
  if (attrs && (typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "on") for (const [ev, fn] of Object.entries(value)) el.addEventListener(ev, fn);
    else if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export function debounce(fn, ms) {
  let timer;
  const wrapped = (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
  wrapped.flush = (...args) => {
    clearTimeout(timer);
    fn(...args);
  };
  wrapped.cancel = () => clearTimeout(timer);
  return wrapped;
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit" });
const dateFormat = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric" });
const fullFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "short" });

export function formatTime(ts) {
  const date = new Date(ts * 1000);
  const today = new Date();
  const sameDay = date.toDateString() === today.toDateString();
  return sameDay ? timeFormat.format(date) : `${dateFormat.format(date)} ${timeFormat.format(date)}`;
}

export function formatFullTime(ts) {
  return fullFormat.format(new Date(ts * 1000));
}

export function initials(name) {
  const words = (name || "?").split(/\s+/).filter(Boolean);
  return ((words[0] || "?")[0] + (words.length > 1 ? words[words.length - 1][0] : "")).toUpperCase();
}

export function hue(id) {
  return (Number(id) * 137) % 360;
}

// The glyph of an emoji code such as "1f642" or "1f937-200d-2640".
export function emojiGlyph(code) {
  if (!code || !/^[0-9a-f-]+$/.test(code)) return "\u2753";
  try {
    return String.fromCodePoint(...code.split("-").map((part) => parseInt(part, 16)));
  } catch {
    return "\u2753";
  }
}

export function download(filename, text) {
  const url = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
  const link = h("a", { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function toast(text, kind = "info") {
  // Inside the topmost open modal dialog, if any: the rest of the page is behind its backdrop.
  const host = [...document.querySelectorAll("dialog[open]")].pop() || document.body;
  let box = document.getElementById("toasts");
  if (!box) box = h("div#toasts", { role: "status", "aria-live": "polite" });
  if (box.parentElement !== host) host.append(box);
  const item = h(`div.toast.${kind}`, text);
  box.append(item);
  setTimeout(() => item.remove(), kind === "error" ? 6000 : 3000);
}

// A modal yes/no question in the page (window.confirm would block the page and its events).
export function confirmDialog(question, yes = "Yes") {
  return new Promise((resolve) => {
    const dialog = h(
      "dialog.confirm",
      { role: "alertdialog", "aria-label": question },
      h("p", question),
      h(
        "form.row",
        { method: "dialog" },
        h("button.primary", { value: "yes" }, yes),
        h("button", { value: "no" }, "Cancel"),
      ),
    );
    dialog.addEventListener("close", () => {
      resolve(dialog.returnValue === "yes");
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

// A modal question with one text answer; resolves to the text, or null when cancelled.
export function promptDialog(question, value = "", label = "Answer") {
  return new Promise((resolve) => {
    const input = h("input", { type: "text", value, "aria-label": label });
    const dialog = h(
      "dialog.confirm",
      { "aria-label": question },
      h("form", { method: "dialog" }, h("label.field", h("span", question), input),
        h("div.row", h("button.primary", { value: "ok" }, "Save"), h("button", { value: "cancel", formnovalidate: true }, "Cancel"))),
    );
    dialog.addEventListener("close", () => {
      resolve(dialog.returnValue === "ok" ? input.value : null);
      dialog.remove();
    });
    document.body.append(dialog);
    dialog.showModal();
    input.select();
  });
}
