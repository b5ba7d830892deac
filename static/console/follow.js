// The page of a session started from "New request": asks the session's status.json until the
// session asks the user (then opens its item) or ends (then shows its result). Every value is
// set with textContent: results may come from an LLM.
(() => {
  "use strict";
  const card = document.getElementById("follow");
  if (!card) return;
  const url = card.dataset.statusUrl;
  const status = document.getElementById("session-status");
  const note = document.getElementById("session-note");
  const result = document.getElementById("session-result");
  let delay = 300;

  function show(data) {
    const session = data.session;
    status.textContent = session.status_label.toLowerCase();
    status.dataset.status = session.status;
    if (data.waiting_in.length) {
      note.textContent = `It waits for a reviewer in ${data.waiting_in.join(", ")}.`;
    } else if (session.ended) {
      note.textContent = "";
    }
    if (session.result) {
      result.textContent = session.result;
      result.hidden = false;
    }
  }

  async function poll() {
    try {
      const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (response.ok) {
        const data = await response.json();
        if (data.item_url) {
          window.location.assign(data.item_url);
          return;
        }
        show(data);
        if (data.session.ended) return;
        delay = 300;
      } else {
        delay = Math.min(delay * 2, 5000);
      }
    } catch (error) {
      delay = Math.min(delay * 2, 5000); // offline for a moment: ask again, less often
    }
    window.setTimeout(poll, delay);
  }

  if (status.dataset.status !== "completed" && status.dataset.status !== "failed" && status.dataset.status !== "cancelled") {
    window.setTimeout(poll, delay);
  }
})();
