// The lightbox: an image from a message, full size, in a modal dialog named "Image", with a
// download link. Opened by clicking a message's inline image (thumbnail).
import { h } from "./util.js";

export function openLightbox(link, image) {
  document.querySelector("dialog.lightbox")?.close();
  const full = image?.dataset.srcFullsize || link?.getAttribute("href") || image?.getAttribute("src");
  if (!full) return;
  const name = decodeURIComponent(new URL(full, location.href).pathname.split("/").pop() || "image");
  const title = link?.getAttribute("title") || link?.getAttribute("aria-label") || name;
  const href = link?.getAttribute("href") || full;
  const dialog = h(
    "dialog.lightbox",
    { "aria-label": "Image" },
    h("div.lightbox-head",
      h("h2.lightbox-title", title),
      h("a.lightbox-download", { href, download: name, target: "_blank", rel: "noopener noreferrer" }, "Download"),
      h("form", { method: "dialog" }, h("button", { type: "submit" }, "Close"))),
    h("div.lightbox-body", h("img.lightbox-image", { src: full, alt: title })),
  );
  dialog.addEventListener("click", (event) => {
    if (event.target === dialog || event.target.classList.contains("lightbox-body")) dialog.close();
  });
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  dialog.querySelector("button").focus();
}
