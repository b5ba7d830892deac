// The inbox socket, shared by the list and the detail page: versions, catch-up, heartbeat.
//
// Every message of a queue carries the queue's version. The page starts with the versions its
// server-rendered content reflects; the socket's hello says the versions now. When they differ,
// or a message skips a version, or the socket comes back after a drop, the page asks
// /inbox/changes.json for exactly what it missed (or, when told to reset, takes a fresh
// snapshot). A ping every `heartbeat` seconds is answered at once; silence for two of them means
// the socket is dead even without a close frame (checked four times a heartbeat, so it is noticed
// within 2.25 heartbeats: 22.5 s with the default 10 s): it is dropped and reopened. A close
// with 4401 (the login ended) or 4403 (no queue left) is final: the status says so. A socket the
// server refuses to open (HTTP 403: after a restart the login may be gone) has no close code, so
// after a failed reconnect the page asks /inbox/changes.json, not following its redirect: sent
// to the login page means signed out, which is final too, with a link to log in again.
(function () {
  "use strict";

  function start(opts) {
    const versions = Object.assign({}, opts.versions || {});
    const beat = Math.max(0.2, Number(opts.heartbeat) || 10) * 1000;
    let socket = null;
    let retry = 250;
    let lastHeard = Date.now();
    let catchingUp = false;
    let again = false;
    let timer = null;
    let stopped = false;
    const loginUrl = opts.loginUrl || "/accounts/login/";

    // link: {text, href} for the part of `text` that leads somewhere (its end), or undefined.
    function status(text, live, link) {
      document.documentElement.dataset.inboxLive = live ? "live" : "down"; // for styles and tests
      if (opts.onStatus) opts.onStatus(text, live, link);
    }

    function signedOut() {
      // Final: reconnecting would be refused until the person logs in again.
      stopped = true;
      const next = encodeURIComponent(location.pathname + location.search);
      status("signed out: log in again", false, { text: "log in again", href: `${loginUrl}?next=${next}` });
    }

    // After a reconnect failed: does the login still hold? true when the server answered (or did
    // not answer at all: it may still be restarting), false when it sends us to the login page.
    async function loginHolds() {
      try {
        const response = await fetch("/inbox/changes.json?since=", {
          credentials: "same-origin",
          redirect: "manual",
          headers: { Accept: "application/json" },
        });
        return !(response.type === "opaqueredirect" || response.status === 401 || response.status === 403);
      } catch (error) {
        return true;
      }
    }

    async function afterFailedConnect() {
      status("reconnecting…", false);
      if (await loginHolds()) {
        if (!stopped && !socket) reconnectSoon();
      } else if (!stopped) {
        signedOut();
      }
    }

    async function catchUp() {
      if (catchingUp) {
        again = true;
        return;
      }
      catchingUp = true;
      try {
        const since = Object.entries(versions).map(([q, v]) => `${q}:${v}`).join(",");
        const response = await fetch(`/inbox/changes.json?since=${encodeURIComponent(since)}`, {
          credentials: "same-origin",
          headers: { Accept: "application/json" },
        });
        if (!response.ok) throw new Error(`changes.json: ${response.status}`);
        const data = await response.json();
        const mine = Object.keys(versions);
        for (const [queue, version] of Object.entries(data.versions)) {
          if (!opts.onlyKnownQueues || mine.includes(queue)) versions[queue] = version;
        }
        if (data.reset) opts.onReset();
        else opts.onChanges(data.changes, "catch-up");
      } catch (error) {
        opts.onReset();
      } finally {
        catchingUp = false;
        if (again) {
          again = false;
          catchUp();
        }
      }
    }

    function handle(data) {
      lastHeard = Date.now();
      if (data.event === "pong") {
        // Idle but connected: a message lost on the way shows as a version we have not reached.
        const behind = Object.entries(data.versions || {}).some(
          ([queue, version]) => queue in versions && versions[queue] < version,
        );
        if (behind) catchUp();
        return;
      }
      if (data.event === "hello") {
        status("live", true);
        const behind = Object.entries(data.versions || {}).some(([queue, version]) => {
          if (!(queue in versions)) return !opts.onlyKnownQueues;
          return versions[queue] !== version;
        });
        if (behind) catchUp();
        else if (opts.onSynced) opts.onSynced();
        return;
      }
      if (!("version" in data)) return;
      const queue = String(data.queue);
      if (!(queue in versions)) {
        if (opts.onlyKnownQueues) {
          if (opts.onOther) opts.onOther(data);
          return;
        }
        catchUp();
        return;
      }
      if (data.version <= versions[queue]) return; // seen it (a catch-up got there first)
      if (data.version > versions[queue] + 1) {
        catchUp(); // a gap: something was lost on the way
        return;
      }
      versions[queue] = data.version;
      opts.onChanges([data], "live");
    }

    function drop() {
      // Forget this socket without waiting for a close handshake that may never come.
      if (!socket) return;
      const dead = socket;
      socket = null;
      dead.onopen = dead.onmessage = dead.onclose = dead.onerror = null;
      try {
        dead.close();
      } catch (error) {
        /* already gone */
      }
    }

    function reconnectSoon() {
      status("reconnecting…", false);
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 10000);
    }

    function connect() {
      if (stopped) return;
      drop();
      const scheme = location.protocol === "https:" ? "wss" : "ws";
      const ws = new WebSocket(`${scheme}://${location.host}/ws/inbox/`);
      let opened = false;
      socket = ws;
      lastHeard = Date.now();
      ws.onopen = () => {
        opened = true;
        retry = 250;
        lastHeard = Date.now();
      };
      ws.onmessage = (message) => {
        try {
          handle(JSON.parse(message.data));
        } catch (error) {
          /* a malformed message is ignored; the next catch-up covers it */
        }
      };
      ws.onclose = (event) => {
        if (socket !== ws) return;
        socket = null;
        // The server closed it because access ended: reconnecting would not bring it back.
        if (event.code === 4401) signedOut();
        else if (event.code === 4403) {
          stopped = true;
          status("no access to these queues any more", false);
        } else if (!opened) afterFailedConnect(); // refused or unreachable: is the login gone?
        else reconnectSoon();
      };
    }

    let lastPing = 0;
    function heartbeat() {
      if (socket && socket.readyState === WebSocket.OPEN && Date.now() - lastPing >= beat) {
        lastPing = Date.now();
        try {
          socket.send(JSON.stringify({ type: "ping" }));
        } catch (error) {
          /* the silence check below notices */
        }
      }
      if (socket && Date.now() - lastHeard > beat * 2) {
        drop();
        reconnectSoon();
      }
    }

    connect();
    timer = setInterval(heartbeat, beat / 4);
    const api = {
      versions,
      catchUp,
      stop() {
        stopped = true;
        clearInterval(timer);
        drop();
      },
    };
    window.__inboxLive = api; // for people debugging in the console, and the browser tests
    return api;
  }

  window.InboxLive = { start };
})();
