// The two-pane inbox (screens at least 75rem wide): the list, and beside it the selected
// request's own page in a frame, where its keys, live updates and forms work as on its own page.
//
// - A click on a request, or j / k (inbox.js), shows it in the pane; Enter (a click made with the
//   keyboard) also takes the keyboard into it; Esc there brings it back to the list (keys.js
//   posts "inbox:pane-escape" to this page).
// - The address says ?item=<id> (replaceState), so it can be shared; opened on a narrow screen
//   it goes to the item's own page.
// - When the frame leaves the item for the list (a decision does: the list answers a frame with
//   only its messages, inbox/pane_left.html), the messages show above the list and the pane moves
//   on to the next request (or stays, when the item is still waiting). A page outside the inbox
//   (the login page, once the login ended) replaces the whole page.
//
// window.InboxPane: active() and show(id, {focus, soon}).
(function () {
  "use strict";
  const pane = document.getElementById("pane");
  const layout = document.getElementById("inbox-layout");
  const tbody = document.getElementById("items");
  if (!pane || !layout || !tbody) return;
  const wide = window.matchMedia("(min-width: 75rem)");
  const ITEM_PAGE = /^\/inbox\/items\/(\d+)\//;
  let frame = null;
  let shownId = null; // the item in the frame (or loading into it)
  let loading = false;
  let focusOnLoad = false;
  let timer = null;
  let lastIndex = 0;

  function active() {
    return wide.matches;
  }

  function find(id) {
    return tbody.querySelector(`tr[data-id="${CSS.escape(String(id))}"]`);
  }

  function address(id) {
    const url = new URL(window.location.href);
    if (id) url.searchParams.set("item", id);
    else url.searchParams.delete("item");
    window.history.replaceState(window.history.state, "", url);
  }

  function markSelected(id) {
    for (const tr of tbody.querySelectorAll("tr.selected")) {
      tr.classList.remove("selected");
      const link = tr.querySelector("td.request a");
      if (link) link.removeAttribute("aria-current");
    }
    const tr = find(id);
    if (!tr) return;
    tr.classList.add("selected");
    const link = tr.querySelector("td.request a");
    if (link) link.setAttribute("aria-current", "true");
    lastIndex = Array.from(tbody.querySelectorAll("tr[data-id]")).indexOf(tr);
  }

  function load(id) {
    if (!frame) {
      frame = document.createElement("iframe");
      frame.id = "pane-frame";
      frame.name = "item-pane";
      frame.title = "The selected request";
      frame.addEventListener("load", loaded);
      frame.src = `/inbox/items/${id}/`;
      pane.append(frame);
      document.getElementById("pane-empty").hidden = true;
    } else {
      frame.src = `/inbox/items/${id}/`;
    }
    shownId = String(id);
    loading = true;
    markSelected(shownId);
    address(shownId);
  }

  function clear() {
    shownId = null;
    if (frame) frame.remove();
    frame = null;
    document.getElementById("pane-empty").hidden = false;
    address(null);
  }

  function enter() {
    focusOnLoad = false;
    const doc = frame && frame.contentDocument;
    if (!doc) return;
    const target = doc.querySelector("[data-pane-focus]") || doc.querySelector("main h1") || doc.getElementById("main");
    frame.focus();
    if (!target) return;
    if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
    target.focus();
  }

  function show(id, opts) {
    const options = opts || {};
    clearTimeout(timer);
    if (options.focus) focusOnLoad = true;
    if (frame && String(id) === shownId) {
      markSelected(shownId);
      if (focusOnLoad && !loading) enter();
      return;
    }
    if (options.soon) timer = setTimeout(() => load(id), 150); // j held down: load where it stops
    else load(id);
  }

  function backToList() {
    const tr = (shownId && find(shownId)) || (window.InboxList && window.InboxList.current());
    if (tr && window.InboxList) window.InboxList.mark(tr.dataset.id, true);
    else document.getElementById("main").focus();
  }

  function showMessages(doc) {
    const found = doc ? Array.from(doc.querySelectorAll(".messages li")) : [];
    if (!found.length) return false;
    const main = document.getElementById("main");
    let list = main.querySelector(":scope > .messages");
    if (!list) {
      list = document.createElement("ul");
      list.className = "messages";
      list.setAttribute("role", "status");
      main.prepend(list);
    }
    list.replaceChildren(
      ...found.map((source) => {
        const li = document.createElement("li");
        li.textContent = source.textContent;
        li.className = source.className;
        return li;
      }),
    );
    return true;
  }

  async function leftForList(doc) {
    const keyboardWasThere = document.activeElement === frame;
    showMessages(doc);
    const left = shownId;
    if (window.InboxList) await window.InboxList.refresh();
    const all = Array.from(tbody.querySelectorAll("tr[data-id]"));
    const next = (left && find(left)) || all[Math.min(lastIndex, all.length - 1)];
    if (!next) {
      clear();
      document.getElementById("main").focus();
      return;
    }
    load(next.dataset.id);
    if (window.InboxList) window.InboxList.mark(next.dataset.id, keyboardWasThere);
  }

  function loaded() {
    loading = false;
    let where;
    try {
      where = frame.contentWindow.location;
    } catch (error) {
      return; // not ours to read (the headers keep other sites out of the frame)
    }
    if (where.href === "about:blank") return;
    const item = ITEM_PAGE.exec(where.pathname);
    if (item) {
      shownId = item[1]; // j / k in the frame, or "next draft" from the item page
      markSelected(shownId);
      address(shownId);
      if (focusOnLoad) enter();
    } else if (where.pathname === "/inbox/") {
      leftForList(frame.contentDocument);
    } else {
      window.location.assign(where.href);
    }
  }

  tbody.addEventListener("click", (event) => {
    const link = event.target.closest("td.request a");
    if (!link || !active() || event.button !== 0) return;
    if (event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return; // a new tab or window
    event.preventDefault();
    const tr = link.closest("tr[data-id]");
    if (window.InboxList) window.InboxList.mark(tr.dataset.id, false);
    show(tr.dataset.id, { focus: event.detail === 0 }); // detail 0: Enter on the link
  });

  window.addEventListener("message", (event) => {
    if (event.origin !== window.location.origin || !frame || event.source !== frame.contentWindow) return;
    if (event.data && event.data.type === "inbox:pane-escape") backToList();
  });

  function setup() {
    layout.classList.toggle("two-pane", active());
    if (active() && !frame && pane.dataset.selected) load(pane.dataset.selected);
  }

  if (!active() && pane.dataset.selected) {
    // A shared two-pane address on a narrow screen: the item's own page.
    window.location.replace(`/inbox/items/${encodeURIComponent(pane.dataset.selected)}/`);
    return;
  }
  wide.addEventListener("change", setup);
  setup();
  window.InboxPane = { active, show };
})();
