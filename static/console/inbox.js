// Live inbox: items appear and leave without a reload. Everything is written with textContent,
// never innerHTML, so text an LLM or an outside caller wrote is never interpreted as markup.
(function () {
  "use strict";
  const tbody = document.getElementById("items");
  const empty = document.getElementById("empty");
  const status = document.getElementById("live-status");
  if (!tbody) return;
  let socket = null;
  let retry = 1000;

  function setStatus(text, live) {
    status.textContent = text;
    status.classList.toggle("live", live);
  }

  function refreshEmpty() {
    empty.hidden = tbody.children.length > 0;
  }

  function cell(text) {
    const td = document.createElement("td");
    td.textContent = text;
    return td;
  }

  function row(item) {
    const tr = document.createElement("tr");
    tr.dataset.id = String(item.id);
    const first = document.createElement("td");
    const link = document.createElement("a");
    link.href = item.url;
    link.textContent = item.title || item.interrupt_id;
    first.appendChild(link);
    tr.appendChild(first);
    tr.appendChild(cell(item.workflow));
    tr.appendChild(cell(item.queue_name));
    const when = document.createElement("td");
    const time = document.createElement("time");
    time.dateTime = item.created_at;
    time.textContent = item.created_at.replace("T", " ").slice(0, 19);
    when.appendChild(time);
    tr.appendChild(when);
    return tr;
  }

  function upsert(item) {
    if (tbody.querySelector(`tr[data-id="${item.id}"]`)) return;
    const tr = row(item);
    tr.classList.add("new");
    tbody.appendChild(tr);
    refreshEmpty();
  }

  function remove(item) {
    const tr = tbody.querySelector(`tr[data-id="${item.id}"]`);
    if (tr) tr.remove();
    refreshEmpty();
  }

  async function resync() {
    // Catch up with what happened while the socket was down: take the server's snapshot.
    const response = await fetch("items.json", { credentials: "same-origin" });
    if (!response.ok) return;
    const data = await response.json();
    const wanted = new Set(data.items.map((i) => String(i.id)));
    for (const tr of Array.from(tbody.children)) {
      if (!wanted.has(tr.dataset.id)) tr.remove();
    }
    data.items.forEach(upsert);
    refreshEmpty();
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${location.host}/ws/inbox/`);
    socket.onopen = () => {
      retry = 1000;
      setStatus("live", true);
      resync();
    };
    socket.onmessage = (message) => {
      const data = JSON.parse(message.data);
      if (data.event === "interrupt.created") upsert(data.item);
      else if (data.event === "interrupt.resolved") remove(data.item);
    };
    socket.onclose = () => {
      setStatus("reconnecting…", false);
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 15000);
    };
  }

  connect();
})();
