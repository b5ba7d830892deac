// Generated forms (inbox items, New request). Lists: without this script a list shows its rows
// plus a few empty spare ones (schema_form.py); with it the empty spares go, and "Add a …" and
// "Remove …" add and remove rows, numbered 0, 1, 2… in their names so that the server's errors
// point at the rows shown. A form marked data-submit-once is sent once: its submit buttons are
// disabled on the first submit (the server's one-time start_token covers what gets through
// anyway) and enabled again when the page is shown from the back/forward cache.
(() => {
  "use strict";
  const ATTRS = ["name", "id", "for", "aria-describedby"];

  // Row `from` of `list` becomes row `to`: its field names, ids and numbered texts.
  function renumber(list, row, from, to) {
    const name = list.dataset.list;
    const id = list.dataset.listId; // ids escape what names do not (schema_form.FormField.id)
    const base = list.dataset.rowLabel;
    const swap = (value, prefix, sep) => {
      if (value === `${prefix}${sep}${from}`) return `${prefix}${sep}${to}`;
      if (value.startsWith(`${prefix}${sep}${from}${sep}`)) return `${prefix}${sep}${to}${value.slice(`${prefix}${sep}${from}`.length)}`;
      return value;
    };
    for (const node of [row, ...row.querySelectorAll("*")]) {
      for (const attr of ATTRS) {
        const value = node.getAttribute(attr);
        if (!value) continue;
        const next = attr === "name" ? swap(value, name, ".") : value.split(" ").map((v) => swap(v, id, "-")).join(" ");
        if (next !== value) node.setAttribute(attr, next);
      }
    }
    const walker = document.createTreeWalker(row, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      text.nodeValue = text.nodeValue.replace(`${base} ${from + 1}`, `${base} ${to + 1}`);
    }
  }

  function rowsOf(list) {
    return Array.from(list.querySelector(":scope > .list-rows").children);
  }

  function isEmpty(row) {
    return Array.from(row.querySelectorAll("input, select, textarea")).every((f) =>
      f.type === "checkbox" ? !f.checked : !f.value,
    );
  }

  function add(list) {
    const template = list.querySelector(":scope > template.list-template");
    const index = rowsOf(list).length;
    const copy = template.content.cloneNode(true);
    for (const node of copy.querySelectorAll("*")) {
      for (const attr of ATTRS) {
        const value = node.getAttribute(attr);
        if (value) node.setAttribute(attr, value.replaceAll("__index__", String(index)));
      }
    }
    const walker = document.createTreeWalker(copy, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      text.nodeValue = text.nodeValue.replace("__number__", String(index + 1));
    }
    for (const button of copy.querySelectorAll(".list-remove")) button.hidden = false;
    list.querySelector(":scope > .list-rows").appendChild(copy);
    const first = rowsOf(list)[index].querySelector("input, select, textarea");
    if (first) first.focus();
  }

  function remove(list, row) {
    const rows = rowsOf(list);
    const at = rows.indexOf(row);
    row.remove();
    rows.slice(at + 1).forEach((later, i) => renumber(list, later, at + 1 + i, at + i));
    const left = rowsOf(list);
    const focus = left[Math.min(at, left.length - 1)];
    const target = (focus && focus.querySelector("input, select, textarea")) || list.querySelector(":scope > .list-add");
    target.focus();
  }

  // With this script: spare rows left empty go (one row stays), the buttons show.
  for (const list of document.querySelectorAll("[data-list]")) {
    const spares = rowsOf(list).filter((row) => row.hasAttribute("data-spare") && isEmpty(row));
    for (const row of spares) if (rowsOf(list).length > 1) row.remove();
    for (const button of list.querySelectorAll(".list-add, .list-remove")) button.hidden = false;
  }

  document.addEventListener("click", (event) => {
    const adding = event.target.closest(".list-add");
    const removing = event.target.closest(".list-remove");
    if (adding) add(adding.closest("[data-list]"));
    else if (removing) remove(removing.closest("[data-list]"), removing.closest(".list-row"));
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
