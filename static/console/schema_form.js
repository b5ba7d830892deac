// Generated forms (inbox items, New request): "Add another" copies the list's empty row with the
// next index. A form marked data-submit-once is sent once: its submit buttons are disabled on the
// first submit (the server's one-time start_token covers what gets through anyway) and enabled
// again when the page is shown from the back/forward cache.
(() => {
  "use strict";
  document.addEventListener("click", (event) => {
    const button = event.target.closest(".list-add");
    if (!button) return;
    const list = button.closest("[data-list]");
    const rows = list.querySelector(".list-rows");
    const template = list.querySelector(":scope > template.list-template");
    const index = rows.children.length;
    const copy = template.content.cloneNode(true);
    for (const node of copy.querySelectorAll("[name], [id], [for], template")) {
      for (const attr of ["name", "id", "for"]) {
        const value = node.getAttribute(attr);
        if (value) node.setAttribute(attr, value.replace("__index__", String(index)));
      }
    }
    rows.appendChild(copy);
    const first = rows.lastElementChild.querySelector("input, select, textarea");
    if (first) first.focus();
  });
  document.addEventListener("submit", (event) => {
    const form = event.target.closest("form[data-submit-once]");
    if (!form) return;
    if (form.dataset.sent) {
      event.preventDefault();
      return;
    }
    form.dataset.sent = "true";
    for (const button of form.querySelectorAll("button[type=submit]")) button.disabled = true;
  });
  window.addEventListener("pageshow", () => {
    for (const form of document.querySelectorAll("form[data-submit-once]")) {
      delete form.dataset.sent;
      for (const button of form.querySelectorAll("button[type=submit]")) button.disabled = false;
    }
  });
})();
