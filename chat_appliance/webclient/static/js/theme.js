// The theme, as Zulip's color_scheme setting: 1 automatic (the system's light or dark), 2 dark,
// 3 light. app.css has one palette per theme, chosen by <html data-theme="light|dark">, which is
// set here from the setting and, for automatic, from prefers-color-scheme (followed as the system
// changes). boot.js sets it before the first paint from what this browser last had, kept in
// localStorage.
import * as api from "./api.js";
import { model } from "./model.js";
import { h, toast } from "./util.js";

const THEMES = { 2: "dark", 3: "light" };
const STORED = "chat-appliance.theme"; // boot.js reads it
export const CHOICES = [[1, "Automatic"], [3, "Light"], [2, "Dark"]];

const current = () => model.state.user_settings?.color_scheme ?? model.state.color_scheme ?? 1;
const systemDark = matchMedia("(prefers-color-scheme: dark)");

export function applyTheme() {
  const chosen = THEMES[current()];
  document.documentElement.dataset.theme = chosen || (systemDark.matches ? "dark" : "light");
  try {
    localStorage.setItem(STORED, chosen || "auto");
  } catch {
    // storage refused: the next page load starts from the system's scheme
  }
}

systemDark.addEventListener("change", () => {
  if (!THEMES[current()]) applyTheme();
});

model.on("user_settings", (event) => {
  if (event.property === "color_scheme") applyTheme();
});

async function choose(value) {
  try {
    await api.patch("settings", { color_scheme: value });
    (model.state.user_settings ||= {}).color_scheme = value;
    applyTheme();
  } catch (error) {
    toast(error.message, "error");
  }
}

// Settings > Preferences: the theme, as a group of radio buttons.
export function preferencesPanel(root) {
  root.append(h("fieldset.theme-choice", h("legend", "Theme"),
    CHOICES.map(([value, label]) => h("label.check",
      h("input", { type: "radio", name: "color-scheme", value: String(value), checked: current() === value, on: { change: () => choose(value) } }),
      label))));
}
