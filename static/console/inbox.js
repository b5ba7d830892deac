// The live inbox list: rows appear, change owner and leave without a reload, and the page
// always ends up showing what a fresh load with the same filters shows (it re-reads its own
// snapshot, /inbox/items.json?<filters>, after every change). Everything is written with
// textContent, never innerHTML, so text an LLM or an outside caller wrote is never markup.
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

  function setStatus(text, live, link) {
    statusBadge.classList.toggle("live", live);
    if (link && text.endsWith(link.text)) {
      // e.g. "signed out: log in again", its end a link to the login page
      statusBadge.textContent = text.slice(0, text.length - link.text.length);
      const a = el("a", link.text);
      a.href = link.href;
      statusBadge.append(a);
    } else {
      statusBadge.textContent = text;
    }
  }

  function refreshEmpty() {
    empty.hidden = tbody.children.length > 0;
  }

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = text;
    if (className) node.className = className;
    return node;
  }

  function labelled(td, label) {
    td.dataset.label = label; // shown before the value on narrow screens
    return td;
  }

  function stamp(iso, long) {
    const time = el("time", iso.replace("T", " ").slice(0, long ? 19 : 16));
    time.dateTime = iso;
    return time;
  }

  function fill(tr, item) {
    // The cells after the checkbox, rebuilt from the summary.
    while (tr.children.length > 1) tr.removeChild(tr.lastChild);
    const title = el("td");
    const link = el("a", item.title || item.interrupt_id);
    link.href = item.url;
    title.appendChild(link);
    const snippet = item.snippet.length > 140 ? `${item.snippet.slice(0, 139)}…` : item.snippet;
    title.appendChild(el("div", snippet, "muted snippet"));
    tr.appendChild(title);
    tr.appendChild(labelled(el("td", item.workflow), "Workflow"));
    tr.appendChild(labelled(el("td", item.queue_name), "Queue"));
    const owner = labelled(el("td", null, "owner"), "Owner");
    owner.appendChild(item.claimed_by ? document.createTextNode(item.claimed_by) : el("span", "—", "muted"));
    tr.appendChild(owner);
    const due = labelled(el("td"), "Due");
    if (item.due_at) {
      due.appendChild(stamp(item.due_at, false));
      if (item.overdue) {
        due.appendChild(document.createTextNode(" "));
        due.appendChild(el("span", "overdue", "badge overdue"));
      }
    } else due.appendChild(el("span", "—", "muted"));
    tr.appendChild(due);
    const since = labelled(el("td"), "Waiting since");
    since.appendChild(stamp(item.created_at, true));
    tr.appendChild(since);
    tr.classList.toggle("overdue", Boolean(item.overdue));
    tr.dataset.queue = String(item.queue_id);
  }

  function row(item) {
    const tr = el("tr");
    tr.dataset.id = String(item.id);
    const select = el("td", null, "select");
    const box = el("input");
    box.type = "checkbox";
    box.name = "ids";
    box.value = String(item.id);
    box.setAttribute("aria-label", `Select ${item.title || item.interrupt_id}`);
    select.appendChild(box);
    tr.appendChild(select);
    fill(tr, item);
    return tr;
  }

  function find(id) {
    return tbody.querySelector(`tr[data-id="${CSS.escape(String(id))}"]`);
  }

  function show(items) {
    // Make the rows exactly `items`, in order, keeping the rows (and their checkboxes) we have.
    const wanted = new Set(items.map((i) => String(i.id)));
    for (const tr of Array.from(tbody.children)) if (!wanted.has(tr.dataset.id)) tr.remove();
    let before = tbody.firstElementChild;
    for (const item of items) {
      let tr = find(item.id);
      if (tr) fill(tr, item);
      else {
        tr = row(item);
        tr.classList.add("new");
      }
      if (tr !== before) tbody.insertBefore(tr, before);
      before = tr.nextElementSibling;
    }
    refreshEmpty();
    countSelected();
  }

  function showCounts(counts, overdue) {
    for (const badge of document.querySelectorAll("[data-count-for]")) {
      const n = counts[badge.dataset.countFor] || 0;
      badge.textContent = String(n);
      badge.setAttribute("aria-label", `${n} waiting`);
    }
    for (const badge of document.querySelectorAll("[data-overdue-for]")) {
      badge.textContent = `${overdue[badge.dataset.overdueFor] || 0} overdue`;
    }
  }

  async function refresh() {
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

  function refreshSoon() {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(refresh, 120);
  }

  function apply(changes) {
    for (const change of changes) {
      const item = change.item;
      if (!item) continue;
      const tr = find(item.id);
      const gone = item.status !== "pending" || ["interrupt.escalated", "interrupt.reassigned"].includes(change.event);
      if (tr && gone) tr.remove();
      else if (tr) fill(tr, item);
      else if (!gone && defaultView && change.event === "interrupt.created") {
        const fresh = row(item);
        fresh.classList.add("new");
        tbody.appendChild(fresh);
      }
    }
    refreshEmpty();
    refreshSoon(); // order, filters, counts: the server's snapshot is the truth
  }

  // Selection and bulk actions.
  const selectAll = document.getElementById("select-all");
  const selectedCount = document.getElementById("selected-count");
  const bulkBar = document.getElementById("bulk-bar");
  function countSelected() {
    const n = tbody.querySelectorAll("input[name=ids]:checked").length;
    if (selectedCount) selectedCount.textContent = n ? `${n} selected` : "";
    if (bulkBar) bulkBar.classList.toggle("idle", n === 0); // shown in full once something is selected
  }
  tbody.addEventListener("change", countSelected);
  if (selectAll) {
    selectAll.addEventListener("change", () => {
      for (const box of tbody.querySelectorAll("input[name=ids]")) box.checked = selectAll.checked;
      countSelected();
    });
  }

  // Keyboard: j/k move between requests, x selects, / searches.
  function links() {
    return Array.from(tbody.querySelectorAll("tr td:nth-child(2) a"));
  }
  function move(step) {
    const all = links();
    if (!all.length) return;
    const at = all.indexOf(document.activeElement);
    const next = at === -1 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, at + step));
    all[next].focus();
    for (const tr of tbody.querySelectorAll("tr.focused")) tr.classList.remove("focused");
    all[next].closest("tr").classList.add("focused");
  }
  if (window.InboxKeys) {
    window.InboxKeys.bind({
      j: () => move(1),
      k: () => move(-1),
      x: () => {
        const tr = document.activeElement && document.activeElement.closest("tr[data-id]");
        if (!tr) return false;
        const box = tr.querySelector("input[name=ids]");
        box.checked = !box.checked;
        countSelected();
      },
      "/": () => document.getElementById("f-q").focus(),
    });
  }

  countSelected();
  window.InboxLive.start({
    versions: cfg.versions,
    heartbeat: cfg.heartbeat,
    onStatus: setStatus,
    onChanges: apply,
    onReset: refresh,
  });
})();
