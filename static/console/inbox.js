// The live inbox list: rows appear, change owner and leave without a reload, and the page
// always ends up showing what a fresh load with the same filters shows (it re-reads its own
// snapshot, /inbox/items.json?<filters>, after every change).
//
// Rows are the server's: each snapshot entry carries its row as HTML ("row", rendered by
// templates/inbox/_row.html exactly as the page's own rows), every text in it escaped by Django's
// templates. It is parsed with DOMParser (inert: nothing in it runs, and the CSP allows no inline
// script); no text of a live message is ever written as markup.
//
// window.InboxList (for pane.js): rows(), refresh(), current() and mark(id).
(function () {
  "use strict";
  const tbody = document.getElementById("items");
  const empty = document.getElementById("empty");
  const statusBadge = document.getElementById("live-status");
  const config = document.getElementById("inbox-live");
  if (!tbody || !config) return;
  const cfg = JSON.parse(config.textContent);
  const defaultView = !cfg.query && !cfg.after;
  let refreshTimer = null;
  const applied = new Map(); // row id → the HTML its row was built from

  function setStatus(text, live, link) {
    statusBadge.classList.toggle("live", live);
    if (link && text.endsWith(link.text)) {
      // e.g. "signed out: log in again", its end a link to the login page
      statusBadge.textContent = text.slice(0, text.length - link.text.length);
      const a = document.createElement("a");
      a.textContent = link.text;
      a.href = link.href;
      statusBadge.append(a);
    } else {
      statusBadge.textContent = text;
    }
  }

  function refreshEmpty() {
    empty.hidden = tbody.children.length > 0;
  }

  function rows() {
    return Array.from(tbody.querySelectorAll("tr[data-id]"));
  }

  function find(id) {
    return tbody.querySelector(`tr[data-id="${CSS.escape(String(id))}"]`);
  }

  function parseRow(html) {
    const doc = new DOMParser().parseFromString(`<table><tbody>${html}</tbody></table>`, "text/html");
    const tr = doc.querySelector("tr[data-id]");
    return tr ? document.adoptNode(tr) : null;
  }

  function replace(old, fresh) {
    // What the person did to a row survives its refresh: its checkbox, the keyboard's place, the selection.
    const box = old.querySelector("input[name=ids]");
    const freshBox = fresh.querySelector("input[name=ids]");
    if (box && freshBox) freshBox.checked = box.checked;
    for (const name of ["focused", "selected"]) fresh.classList.toggle(name, old.classList.contains(name));
    const link = old.querySelector("td.request a");
    const freshLink = fresh.querySelector("td.request a");
    if (link && freshLink && link.hasAttribute("aria-current")) freshLink.setAttribute("aria-current", "true");
    const hadFocus = old.contains(document.activeElement);
    old.replaceWith(fresh);
    if (hadFocus && freshLink) freshLink.focus({ preventScroll: true });
  }

  function show(items) {
    // Make the rows exactly `items`, in order, keeping the rows we have (rebuilt where they changed).
    const wanted = new Set(items.map((i) => String(i.id)));
    for (const tr of rows()) if (!wanted.has(tr.dataset.id)) tr.remove();
    let before = tbody.firstElementChild;
    for (const item of items) {
      const id = String(item.id);
      let tr = find(id);
      if (!tr || applied.get(id) !== item.row) {
        const fresh = parseRow(item.row);
        if (!fresh) continue;
        if (tr) {
          if (before === tr) before = fresh; // the place to insert at is the row being rebuilt
          replace(tr, fresh);
        } else fresh.classList.add("new");
        tr = fresh;
        applied.set(id, item.row);
      }
      if (tr !== before) tbody.insertBefore(tr, before);
      before = tr.nextElementSibling;
    }
    refreshEmpty();
    countSelected();
  }

  // Counts stop at cfg.count_cap (the server counts up to cap + 1): more shows as "10000+".
  const countLabel = (n) => (cfg.count_cap && n > cfg.count_cap ? `${cfg.count_cap}+` : String(n));

  function showCounts(counts, overdue) {
    for (const badge of document.querySelectorAll("[data-count-for]")) {
      const n = countLabel(counts[badge.dataset.countFor] || 0);
      badge.textContent = n;
      badge.setAttribute("aria-label", `${n} waiting`);
    }
    for (const badge of document.querySelectorAll("[data-overdue-for]")) {
      badge.textContent = `${countLabel(overdue[badge.dataset.overdueFor] || 0)} overdue`;
    }
  }

  async function refresh() {
    clearTimeout(refreshTimer);
    const query = [cfg.query, cfg.after ? `after=${encodeURIComponent(cfg.after)}` : ""].filter(Boolean).join("&");
    try {
      const response = await fetch(`/inbox/items.json${query ? `?${query}` : ""}`, {
        credentials: "same-origin",
        headers: { Accept: "application/json" },
      });
      if (!response.ok) return;
      const data = await response.json();
      show(data.items);
      showCounts(data.counts, data.overdue);
      document.body.dataset.synced = String(Date.now());
    } catch (error) {
      /* the next change or reconnect tries again */
    }
  }

  function refreshSoon(delay) {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(refresh, delay);
  }

  function apply(changes) {
    for (const change of changes) {
      const item = change.item;
      if (!item) continue;
      const tr = find(item.id);
      const gone = item.status !== "pending" || ["interrupt.escalated", "interrupt.reassigned"].includes(change.event);
      if (tr && gone && !cfg.decided) tr.remove();
      else if (!tr && !gone && defaultView && change.event === "interrupt.created" && change.row) {
        // Shown at once, as the message's row (the server's, like every row); the snapshot below
        // puts it in its place, in the person's time zone.
        const fresh = parseRow(change.row);
        if (fresh) {
          fresh.classList.add("new");
          tbody.appendChild(fresh);
          applied.set(String(item.id), change.row);
        }
      }
    }
    refreshEmpty();
    countSelected();
    refreshSoon(120); // order, filters, counts and the rows' text: the server's snapshot is the truth
  }

  // Selection and bulk actions.
  const selectAll = document.getElementById("select-all");
  const selectedCount = document.getElementById("selected-count");
  const bulkBar = document.getElementById("bulk-bar");
  // The count says beforehand what "Approve selected" acts on: only rows whose request allows
  // bulk approval (data-bulk-approve, rows.py); the others are named as refused after it.
  function countSelected() {
    const n = tbody.querySelectorAll("input[name=ids]:checked").length;
    const approvable = tbody.querySelectorAll("input[name=ids][data-bulk-approve]:checked").length;
    let text = n ? `${n} selected` : "";
    if (n && approvable < n) text += ` (Approve selected acts on ${approvable} of them: the others are approved on their own page)`;
    if (selectedCount) selectedCount.textContent = text;
    if (bulkBar) bulkBar.classList.toggle("idle", n === 0); // shown in full once something is selected
  }
  tbody.addEventListener("change", countSelected);
  if (selectAll) {
    selectAll.addEventListener("change", () => {
      for (const box of tbody.querySelectorAll("input[name=ids]")) box.checked = selectAll.checked;
      countSelected();
    });
  }

  // Keyboard: j/k move between requests (and, in two panes, show each beside the list), x
  // selects, / searches. Enter on a request opens it (pane.js: into the pane).
  function current() {
    return tbody.querySelector("tr.focused") || tbody.querySelector("tr.selected");
  }
  function mark(id, focus) {
    const tr = find(id);
    if (!tr) return null;
    for (const other of tbody.querySelectorAll("tr.focused")) other.classList.remove("focused");
    tr.classList.add("focused");
    const link = tr.querySelector("td.request a");
    if (focus && link) link.focus();
    else tr.scrollIntoView({ block: "nearest" });
    return tr;
  }
  function move(step) {
    const all = rows();
    if (!all.length) return;
    const focusedRow = document.activeElement && document.activeElement.closest("tr[data-id]");
    const from = focusedRow && tbody.contains(focusedRow) ? focusedRow : current();
    const at = all.indexOf(from);
    const next = at === -1 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, at + step));
    mark(all[next].dataset.id, true);
    if (window.InboxPane && window.InboxPane.active()) window.InboxPane.show(all[next].dataset.id, { soon: true });
  }
  if (window.InboxKeys) {
    window.InboxKeys.bind({
      j: () => move(1),
      k: () => move(-1),
      x: () => {
        const tr = document.activeElement && document.activeElement.closest("tr[data-id]");
        const box = tr && tr.querySelector("input[name=ids]");
        if (!box) return false;
        box.checked = !box.checked;
        countSelected();
      },
      "/": () => document.getElementById("f-q").focus(),
    });
  }

  countSelected();
  window.InboxList = { rows, refresh, current, mark };
  window.InboxLive.start({
    versions: cfg.versions,
    heartbeat: cfg.heartbeat,
    onStatus: setStatus,
    onChanges: apply,
    onReset: refresh,
  });
})();
