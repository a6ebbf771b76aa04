// Local echo, as Zulip's: your message shows at the end of the view the moment you send it (its
// text, not yet rendered), and the server's message takes its place when its event arrives.
import { model } from "./model.js";
import { matches } from "./narrow.js";
import { h } from "./util.js";
import { S, TAIL, conversationKey } from "./feed_state.js";
import { scrollToEnd } from "./feed_window.js";
import { avatar, renderAll, renderHeader } from "./feed_draw.js";

export const echoes = new Map(); // local id -> element

export function localEcho(localId, fake) {
  if (!matches(S.view, fake)) return;
  if (S.hi < S.messages.length || !S.foundNewest) {
    // The page holds older messages: show the end of the view first.
    S.lo = Math.max(0, S.messages.length - TAIL);
    S.hi = S.messages.length;
    if (!S.foundNewest) return; // the newest are not even fetched: the message will show when they are
    renderAll();
  }
  const el = h(
    "div.message.local-echo",
    { role: "article", "aria-label": `${model.userName(model.myId)}, sending`, dataset: { local: localId } },
    avatar(model.myId),
    h("div.body", h("div.meta", h("span.sender", model.userName(model.myId)), h("span.time", "sending…")), h("div.content.rendered", h("p", fake.content))),
  );
  const last = S.listEl.lastElementChild;
  if (last?.classList.contains("recipient-block") && last.dataset.key === conversationKey(fake)) last.append(el);
  else {
    S.listEl.querySelector(".empty")?.remove();
    S.listEl.append(h("div.recipient-block.local-echo-block", { dataset: { key: conversationKey(fake) } }, renderHeader(fake), el));
  }
  echoes.set(localId, el);
  scrollToEnd();
}

export function dropEcho(localId) {
  const el = echoes.get(localId);
  echoes.delete(localId);
  if (!el) return;
  const block = el.parentElement;
  el.remove();
  if (block?.classList.contains("local-echo-block") && !block.querySelector(".message")) block.remove();
}
