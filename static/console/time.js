// Times for people, kept current without a reload, on every page.
//
// - <time data-rel="ago" datetime>: "3 h ago" / "in 3 h" ("just now" under a minute).
// - <time data-rel="due" datetime>: "due in 52 min" / "overdue by 3 min"; with class "countdown"
//   and data-due-soon-at it also turns amber (class sla-soon) from that time and red (sla-late)
//   once due, and marks its row (tr[data-id]) "overdue". The server renders the first state
//   (reviewconsole/preferences/times.py and inbox/templatetags/inbox_time.py: the same rules);
//   this script wakes up exactly when a countdown changes colour, and every second while a time
//   is within two minutes, so the text never lags.
// - Times added later (live rows, an item's page) are picked up as they appear.
// - The browser's time zone: a logged-in person who did not pick one gets theirs saved
//   (POST /preferences/time-zone/; the next pages are in it), and a login form's hidden
//   input[data-browser-time-zone] carries it, so the first page after logging in is too.
(function () {
  "use strict";
  const UNITS = [
    [86400, "d"],
    [3600, "h"],
    [60, "min"],
  ];

  // parts = 2 adds the next smaller unit when not zero ("4 h 59 min"), as times.py's span.
  function span(seconds, parts = 1) {
    const whole = Math.floor(Math.abs(seconds));
    for (let index = 0; index < UNITS.length; index++) {
      const [size, name] = UNITS[index];
      if (whole < size) continue;
      let text = `${Math.floor(whole / size)} ${name}`;
      if (parts > 1 && index + 1 < UNITS.length) {
        const [smaller, smallerName] = UNITS[index + 1];
        const rest = Math.floor((whole % size) / smaller);
        if (rest) text += ` ${rest} ${smallerName}`;
      }
      return text;
    }
    return `${whole} s`;
  }

  function relative(at, mode, now) {
    const delta = (at - now) / 1000;
    if (mode === "due") return delta > 0 ? `due in ${span(delta, 2)}` : `overdue by ${span(delta, 2)}`;
    if (Math.abs(delta) < 60) return "just now";
    return delta > 0 ? `in ${span(delta)}` : `${span(delta)} ago`;
  }

  let timer = null;

  function update() {
    clearTimeout(timer);
    const now = Date.now();
    let next = 30000;
    for (const el of document.querySelectorAll("time[data-rel]")) {
      const at = Date.parse(el.getAttribute("datetime"));
      if (Number.isNaN(at)) continue;
      const text = relative(at, el.dataset.rel, now);
      if (el.textContent !== text) el.textContent = text;
      if (Math.abs(at - now) < 120000) next = Math.min(next, 1000);
      if (!el.classList.contains("countdown")) continue;
      const soon = Date.parse(el.dataset.dueSoonAt || "");
      const state = now >= at ? "late" : now >= soon ? "soon" : "";
      el.classList.toggle("sla-soon", state === "soon");
      el.classList.toggle("sla-late", state === "late");
      const row = el.closest("tr[data-id]");
      if (row) row.classList.toggle("overdue", state === "late");
      for (const change of [soon, at]) if (change > now) next = Math.min(next, change - now + 15);
    }
    timer = setTimeout(update, Math.max(50, next));
  }

  let pending = false;
  function soon() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      update();
    });
  }

  function browserZone() {
    try {
      return Intl.DateTimeFormat().resolvedOptions().timeZone || "";
    } catch (error) {
      return "";
    }
  }

  function reportZone() {
    const zone = browserZone();
    if (!zone) return;
    for (const input of document.querySelectorAll("input[data-browser-time-zone]")) input.value = zone;
    const root = document.documentElement;
    const token = document.querySelector("meta[name=csrf-token]");
    if (!token || root.dataset.timeZoneChosen !== "0" || root.dataset.timeZone === zone) return;
    fetch("/preferences/time-zone/", {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": token.content },
      body: new URLSearchParams({ time_zone: zone }),
    })
      .then((response) => {
        if (response.ok) root.dataset.timeZone = zone; // reported once per page, not on every tick
      })
      .catch(() => {
        /* the next page reports it again */
      });
  }

  new MutationObserver((records) => {
    if (records.some((r) => Array.from(r.addedNodes).some((n) => n.nodeType === 1))) soon();
  }).observe(document.body, { childList: true, subtree: true });
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) update();
  });
  update();
  reportZone();
  window.ConsoleTime = { relative, update };
})();
