// Generated forms (inbox items, New request): "Add another" copies the list's empty row with the
// next index.
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
})();
