// The theme, as Zulip's color_scheme setting: 1 automatic (the system's light or dark), 2 dark,
// 3 light. app.css draws dark under prefers-color-scheme unless <html data-theme="light">, and
// always under data-theme="dark".
import * as api from "./api.js";
import { model } from "./model.js";
import { h, toast } from "./util.js";

const THEMES = { 2: "dark", 3: "light" };
export const CHOICES = [[1, "Automatic"], [3, "Light"], [2, "Dark"]];

const current = () => model.state.user_settings?.color_scheme ?? model.state.color_scheme ?? 1;

export function applyTheme() {
  const theme = THEMES[current()];
  if (theme) document.documentElement.dataset.theme = theme;
  else delete document.documentElement.dataset.theme;
}

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
