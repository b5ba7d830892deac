// The managers' dashboard, live: the inbox socket (live.js) tells of every change in the queues
// the page shows; each change (or a catch-up, or a reset) makes the page fetch its panel again
// from the server, one fetch at a time (changes during a fetch bring one more), and swap it in.
// The panel names the next due time (data-next-due): an item turns overdue then without any
// change, so the page fetches it again at that moment too. `data-refreshes` on #dashboard-panel
// counts the swaps (for people debugging and for the browser tests).
(function () {
  "use strict";

  const panel = document.getElementById("dashboard-panel");
  const status = document.getElementById("live-status");
  const cfg = JSON.parse(document.getElementById("dashboard-live").textContent);
  let fetching = false;
  let again = false;
  let dueTimer = null;

  function scheduleDue() {
    clearTimeout(dueTimer);
    const figures = document.getElementById("dashboard-figures");
    const next = figures ? Date.parse(figures.dataset.nextDue || "") : NaN;
    if (Number.isNaN(next)) return;
    const wait = Math.max(0, next - Date.now()) + 500; // just after it is due
    if (wait < 2 ** 31 - 1) dueTimer = setTimeout(refresh, wait);
  }

  async function refresh() {
    if (fetching) {
      again = true;
      return;
    }
    fetching = true;
    try {
      const response = await fetch(`${cfg.panel}?days=${encodeURIComponent(cfg.days)}`, {
        credentials: "same-origin",
        headers: { Accept: "text/html" },
      });
      if (response.ok) {
        const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
        panel.replaceChildren(...fresh.body.childNodes);
        panel.dataset.refreshes = String(Number(panel.dataset.refreshes || 0) + 1);
        scheduleDue();
      }
    } catch (error) {
      /* offline for a moment: the socket's catch-up after it is back fetches again */
    } finally {
      fetching = false;
      if (again) {
        again = false;
        refresh();
      }
    }
  }

  function setStatus(text, live, link) {
    status.classList.toggle("live", live);
    status.textContent = link && text.endsWith(link.text) ? text.slice(0, -link.text.length) : text;
    if (link && text.endsWith(link.text)) {
      const a = document.createElement("a");
      a.textContent = link.text;
      a.href = link.href;
      status.append(a);
    }
  }

  window.InboxLive.start({
    versions: cfg.versions,
    heartbeat: cfg.heartbeat,
    onlyKnownQueues: true, // the queues it manages, not every queue it reviews
    onStatus: setStatus,
    onChanges: refresh,
    onReset: refresh,
  });
  scheduleDue();
})();
