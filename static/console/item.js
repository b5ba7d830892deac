// One request's page: says live when it was decided, expired, superseded or claimed elsewhere,
// and once decided shows the decision in place; the decision bar's reason box, shown when Reject
// is chosen; keyboard shortcuts; the diff of an edited draft as it is typed; the focus on the
// first field in error after a refusal. Text goes in with textContent only (it may come from an
// LLM or an outside caller); the one piece of HTML is the decision section the server renders
// from its template, autoescaped (status.json's "decision"), parsed inert in a <template>.
(function () {
  "use strict";
  const config = document.getElementById("item-live");
  if (!config) return;
  const cfg = JSON.parse(config.textContent);
  const banner = document.getElementById("status-banner");
  const ownerLine = document.getElementById("owner-line");

  // Who has it while pending: its owner (the claim). Once decided, the decision section says who.
  function showOwner(item) {
    if (!ownerLine) return;
    if (item.status !== "pending") return ownerLine.replaceChildren();
    const who = document.createElement("span");
    who.id = "owner";
    who.textContent = item.claimed_by || "nobody";
    ownerLine.replaceChildren("· owner ", who);
  }

  function update(item) {
    if (!item || item.id !== cfg.item || !cfg.open) return; // served closed: it says so already
    const moved = item.queue_id !== cfg.queue;
    const over = item.status !== "pending" || moved;
    showOwner(item);
    banner.dataset.state = over ? (item.state === "decided" ? "decided" : item.state) : item.state;
    banner.classList.toggle("quiet", !over && item.state === "pending");
    banner.classList.toggle("stale", over);
    banner.setAttribute("role", over ? "alert" : "status");
    // A decision: who and when are said once, in the decision section (fetchStatus brings it).
    const closed = { decided: "Decided", expired: "Expired", cancelled: "Cancelled" }[item.state];
    const sentence = item.status === "resolved" ? `${closed || "Decided"} while this page was open.` : item.sentence;
    banner.textContent = over ? `${sentence} This page is out of date: a decision now would be refused.` : sentence;
    document.body.classList.toggle("item-closed", over);
  }

  // The decision section (status.json's "decision", rendered by the server), where the server
  // puts it: before the session's outcome. The stale decision buttons stay (dimmed): pressing
  // one gets the page's readable refusal.
  function showDecision(html) {
    const parsed = document.createElement("template");
    parsed.innerHTML = html;
    const section = parsed.content.querySelector("section#decision");
    if (!section) return;
    const shown = document.getElementById("decision");
    if (shown) shown.replaceWith(section);
    else document.getElementById("session-outcome").before(section);
  }

  // Once decided: the session's status and, when it has ended, its result (status.json). While
  // the session goes on by itself (resuming, running) the page asks again, less and less often;
  // once it waits for input again (the next request) or ended, it stops asking.
  const outcome = document.getElementById("session-outcome");
  const sessionStatus = document.getElementById("session-status");
  let again = null;
  let delay = 500;
  function goesOn(session) {
    return !session.ended && (session.resuming || session.status === "new" || session.status === "running");
  }
  function showSession(session) {
    if (!outcome || !session) return;
    sessionStatus.textContent = session.status_label.toLowerCase();
    sessionStatus.dataset.status = session.status;
    sessionStatus.toggleAttribute("data-resuming", Boolean(session.resuming));
    let note = "";
    if (goesOn(session)) note = "It has not ended yet: this page shows how it ends.";
    else if (!session.ended) note = "It asks for another decision: reload this page to see how it ends.";
    document.getElementById("session-note").textContent = note;
    const result = document.getElementById("session-result");
    result.textContent = session.result || "";
    result.hidden = !session.result;
    outcome.hidden = false;
    window.clearTimeout(again);
    if (goesOn(session)) {
      again = window.setTimeout(fetchStatus, delay);
      delay = Math.min(delay * 2, 5000);
    }
  }

  async function fetchStatus() {
    try {
      const response = await fetch(`/inbox/items/${cfg.item}/status.json`, {
        credentials: "same-origin",
        headers: { Accept: "application/json" },
      });
      if (!response.ok) return;
      const data = await response.json();
      update(data.item);
      if (data.decision) showDecision(data.decision);
      if (data.item && data.item.status !== "pending") showSession(data.session);
    } catch (error) {
      /* the next reconnect tries again */
    }
  }

  function changed(item) {
    update(item);
    // Decided (or superseded) while the page is open: ask how the session stands now.
    if (item && item.id === cfg.item && item.status !== "pending") fetchStatus();
  }

  window.InboxLive.start({
    versions: { [String(cfg.queue)]: cfg.version },
    heartbeat: cfg.heartbeat,
    onlyKnownQueues: true,
    onChanges: (changes) => changes.forEach((c) => changed(c.item)),
    onOther: (message) => changed(message.item),
    onReset: fetchStatus,
  });
  if (outcome && !outcome.hidden) {
    const served = { status: sessionStatus.dataset.status, resuming: sessionStatus.hasAttribute("data-resuming") };
    if (goesOn(served)) again = window.setTimeout(fetchStatus, delay); // served while the session goes on by itself
  }

  // The reason box: shown once the reviewer chooses Reject (without this script it always shows,
  // and the server still refuses a rejection without the reason the kind requires). Where an
  // approval needs a reason too (data-always), or the page came back with an error, it stays.
  const reasonBox = document.getElementById("reason-box");
  const reasonField = document.getElementById("reason");
  const rejectButton = document.getElementById("reject");
  function chooseReject() {
    reasonBox.hidden = false;
    document.getElementById("decision-bar").classList.add("rejecting");
    reasonField.focus();
  }
  if (reasonBox && reasonField && rejectButton) {
    if (!("always" in reasonBox.dataset) && !reasonField.value && !document.getElementById("error")) {
      reasonBox.hidden = true;
    }
    rejectButton.addEventListener("click", (event) => {
      const missing = "required" in reasonBox.dataset && !reasonField.value.trim();
      if (!reasonBox.hidden && !missing) return; // sent: the reason goes with it
      event.preventDefault();
      document.getElementById("reason-needed").hidden = reasonBox.hidden;
      reasonField.setAttribute("aria-invalid", String(!reasonBox.hidden));
      chooseReject();
    });
    reasonField.addEventListener("keydown", (event) => {
      // Enter in the reason rejects (the form's default button would approve).
      if (event.key !== "Enter" || event.ctrlKey || event.metaKey || event.isComposing) return;
      event.preventDefault();
      rejectButton.click();
    });
  }

  // Keyboard.
  function click(id) {
    const node = document.getElementById(id);
    if (!node) return false;
    node.click();
  }
  function focus(id) {
    const node = document.getElementById(id);
    if (!node) return false;
    node.focus();
  }
  function follow(id) {
    const link = document.getElementById(id);
    if (!link) return false;
    location.href = link.href;
  }
  if (window.InboxKeys) {
    window.InboxKeys.bind({
      a: () => click("approve"),
      r: () => {
        if (reasonBox && (reasonBox.hidden || !reasonField.value.trim())) return chooseReject();
        return click("reject");
      },
      f: () => focus("feedback"),
      c: () => click("claim"),
      j: () => follow("next-item"),
      k: () => follow("prev-item"),
      u: () => follow("back"),
      "ctrl+enter": (event) => {
        const field = event.target.closest("[data-submit-action]");
        if (field) return click(field.dataset.submitAction === "reject" ? "reject" : "revise");
        if (event.target.closest("#schema-form")) return click("answer");
        return false;
      },
    });
  }

  // Edit before approve: the diff against the agent's draft, line by line, as it is typed.
  const edited = document.getElementById("edited-draft");
  const diffBox = document.getElementById("edit-diff");
  function lineDiff(a, b) {
    const n = a.length;
    const m = b.length;
    const lcs = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
    for (let i = n - 1; i >= 0; i--)
      for (let j = m - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    const out = [];
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (a[i] === b[j]) {
        out.push([" ", a[i]]);
        i++;
        j++;
      } else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push(["-", a[i++]]);
      else out.push(["+", b[j++]]);
    }
    while (i < n) out.push(["-", a[i++]]);
    while (j < m) out.push(["+", b[j++]]);
    return out;
  }
  function showEditDiff() {
    const before = edited.dataset.original.replace(/\r\n/g, "\n").split("\n");
    const after = edited.value.replace(/\r\n/g, "\n").replace(/\n+$/, "").split("\n");
    const lines = lineDiff(before, after);
    diffBox.replaceChildren();
    if (!lines.some(([op]) => op !== " ")) {
      const none = document.createElement("span");
      none.className = "muted";
      none.textContent = "none yet";
      diffBox.appendChild(none);
      return;
    }
    for (const [op, text] of lines) {
      const line = document.createElement("div");
      line.className = `diff-line ${op === "+" ? "add" : op === "-" ? "del" : "same"}`;
      const mark = document.createElement("span");
      mark.className = "op";
      mark.setAttribute("aria-hidden", "true");
      mark.textContent = op;
      line.appendChild(mark);
      line.appendChild(document.createTextNode(text));
      diffBox.appendChild(line);
    }
  }
  if (edited && diffBox) {
    edited.addEventListener("input", showEditDiff);
    showEditDiff();
  }

  // A decision refused for its fields (decision_ambiguous: feedback with Approve, or with an
  // edited draft; a form's answer that fails its schema) comes back with each error next to its
  // field: go to the first, opening the box it is folded in.
  const invalid = document.querySelector("#decision-form [aria-invalid='true']");
  if (invalid) {
    const box = invalid.closest("details");
    if (box) box.open = true;
    invalid.focus();
  }
})();
