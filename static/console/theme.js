// The console's theme, set before the page is drawn (this script is in <head>, not deferred).
//
// The choice is "auto" (the device's prefers-color-scheme), "light" or "dark", kept in
// localStorage["theme"]: the key and values of Django admin's own switch, so the admin follows
// it too. A logged-in person's saved choice (<html data-theme-saved>, their preference) wins and
// is copied there. The top bar's #theme-toggle flips between light and dark and saves the choice
// (POST /preferences/theme/ when logged in); other tabs and the inbox's item frame follow at once
// (the "storage" event). Until a page shows the server has it, the choice is also kept as
// localStorage["theme-unsaved"] with the theme the server had when it was made: a page that still
// gets that older theme (a reload or a link followed before the save was stored, a save that
// failed) shows the choice and saves it again; one that gets the choice, or a third theme chosen
// elsewhere since, drops it. Also marks a page shown in the two-pane inbox's frame (html.in-pane).
(function () {
  "use strict";
  const root = document.documentElement;
  const KEY = "theme";
  const UNSAVED = "theme-unsaved"; // chosen here, not yet confirmed saved by the server
  const THEMES = ["auto", "light", "dark"];
  const darkQuery = window.matchMedia("(prefers-color-scheme: dark)");

  function stored() {
    try {
      return window.localStorage.getItem(KEY);
    } catch (error) {
      return null; // storage refused (a privacy setting): the device's theme
    }
  }

  function store(theme, key = KEY) {
    try {
      if (theme === null) window.localStorage.removeItem(key);
      else window.localStorage.setItem(key, theme);
    } catch (error) {
      /* kept for this page only */
    }
  }

  // "<person>:<theme>:<the theme saved before>": another person logging in here does not take it over.
  function unsaved() {
    try {
      const [person, theme, before] = (window.localStorage.getItem(UNSAVED) || "").split(":");
      return person === root.dataset.person ? { theme, before } : null;
    } catch (error) {
      return null;
    }
  }

  function apply(theme) {
    root.dataset.theme = THEMES.includes(theme) ? theme : "auto";
    label();
  }

  function isDark() {
    return root.dataset.theme === "dark" || (root.dataset.theme === "auto" && darkQuery.matches);
  }

  function label() {
    const button = document.getElementById("theme-toggle");
    if (!button) return;
    button.textContent = isDark() ? "Light theme" : "Dark theme";
    button.hidden = false;
  }

  function save(theme) {
    const token = document.querySelector("meta[name=csrf-token]");
    if (!token) return; // not logged in: this browser keeps it
    store(`${root.dataset.person}:${theme}:${root.dataset.themeSaved}`, UNSAVED);
    fetch("/preferences/theme/", {
      method: "POST",
      credentials: "same-origin",
      keepalive: true, // a page left at once still sends it
      headers: { "X-CSRFToken": token.content, "X-Requested-With": "fetch" },
      body: new URLSearchParams({ theme }),
    }).catch(() => {
      /* still unsaved: the next page shows it and saves it again */
    });
  }

  const saved = root.dataset.themeSaved;
  const pending = saved ? unsaved() : null;
  if (pending && pending.before === saved && pending.theme !== saved && THEMES.includes(pending.theme)) {
    store(pending.theme);
    apply(pending.theme);
    save(pending.theme); // again (the CSRF token's <meta> comes before this script)
  } else {
    if (pending) store(null, UNSAVED); // the server has it, or a newer choice made elsewhere
    if (saved) store(saved);
    apply(saved || stored() || "auto");
  }

  try {
    if (window.self !== window.top && window.parent.location.origin === window.location.origin) {
      root.classList.add("in-pane");
    }
  } catch (error) {
    /* framed by another origin: the headers forbid it, nothing to mark */
  }

  document.addEventListener("DOMContentLoaded", label);
  darkQuery.addEventListener("change", label);
  window.addEventListener("storage", (event) => {
    if (event.key === KEY && event.newValue) apply(event.newValue);
  });
  document.addEventListener("click", (event) => {
    if (!event.target.closest("#theme-toggle")) return;
    const theme = isDark() ? "light" : "dark";
    apply(theme);
    store(theme);
    save(theme);
  });
})();
