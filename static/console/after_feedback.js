// After feedback: waits for the session's next request (the new draft) and opens it. The inbox
// socket (live.js) says when a request is created in one of the user's queues; after a
// (re)connect or a reset the page asks next.json instead, whose "state" (waiting, ready, ended)
// the page shows. A review's revision comes in a session of its own: for a review any new request
// makes the page ask. Text goes in with textContent only.
(function () {
  "use strict";
  const config = document.getElementById("after-feedback-live");
  if (!config) return;
  const cfg = JSON.parse(config.textContent);
  const state = document.getElementById("next-state");
  let opened = false;

  function open(url) {
    if (opened || !url) return;
    opened = true;
    state.dataset.state = "opening";
    state.textContent = "The new draft is ready: opening it…";
    window.location.replace(url);
  }

  function ended(session) {
    const status = document.createElement("strong");
    status.id = "session-status";
    status.textContent = session.status_label.toLowerCase();
    state.dataset.state = "ended";
    state.replaceChildren("The session ended without a new draft: it is ", status, ".");
  }

  async function ask() {
    try {
      const response = await fetch(`/inbox/items/${cfg.item}/next.json`, {
        credentials: "same-origin",
        headers: { Accept: "application/json" },
      });
      if (!response.ok) return;
      const data = await response.json();
      if (data.next) open(data.next.url);
      else if (data.state === "ended") ended(data.session);
      else if (data.state === "decided") window.location.replace(data.url); // no draft to wait for
    } catch (error) {
      /* the next reconnect asks again */
    }
  }

  function changed(item) {
    if (!item) return;
    if (item.session_id !== cfg.session) {
      if (cfg.review && item.status === "pending" && item.id > cfg.item) ask(); // its revision?
      return;
    }
    if (item.status === "pending" && item.id > cfg.item) open(item.url);
    else ask(); // the session moved: it may have ended without a new draft
  }

  if (cfg.next_url) {
    open(cfg.next_url);
    return;
  }
  window.InboxLive.start({
    versions: cfg.versions,
    heartbeat: cfg.heartbeat,
    onlyKnownQueues: true,
    onChanges: (changes) => changes.forEach((c) => changed(c.item)),
    onSynced: ask,
    onReset: ask,
  });
})();
