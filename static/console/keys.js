// Keyboard shortcuts and the help overlay (a <dialog id="help">), shared by the inbox pages.
(function () {
  "use strict";

  function typing(target) {
    return target && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
  }

  function openHelp() {
    const help = document.getElementById("help");
    if (help && !help.open) help.showModal();
  }

  document.addEventListener("click", (event) => {
    if (event.target.closest("[data-help-open]")) openHelp();
  });

  // bind({ key: handler }): letters and "?" / "/" when not typing; "ctrl+enter" anywhere.
  function bind(map) {
    document.addEventListener("keydown", (event) => {
      if (event.defaultPrevented || event.altKey) return;
      const help = document.getElementById("help");
      if (help && help.open) return; // the dialog handles Esc itself
      if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
        if (map["ctrl+enter"] && map["ctrl+enter"](event) !== false) event.preventDefault();
        return;
      }
      if (event.ctrlKey || event.metaKey || typing(event.target)) return;
      if (event.key === "?") {
        event.preventDefault();
        openHelp();
        return;
      }
      const handler = map[event.key];
      if (handler && handler(event) !== false) event.preventDefault();
    });
  }

  // In the two-pane inbox's frame, Esc gives the keyboard back to the list beside it (pane.js).
  if (window.parent !== window) {
    document.addEventListener("keydown", (event) => {
      if (event.key !== "Escape" || event.defaultPrevented || typing(event.target)) return;
      if (document.querySelector("dialog[open]")) return; // Esc closes the dialog first
      window.parent.postMessage({ type: "inbox:pane-escape" }, window.location.origin);
    });
  }

  window.InboxKeys = { bind, openHelp };
})();
