"""A real HTTP receiver on 127.0.0.1 for outbound events: records each request, answers as told
(or, for the first ``hold`` requests, not at all until :meth:`Receiver.release`: a sender cut off
mid-attempt)."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes

    @property
    def json(self):
        return json.loads(self.body)


@dataclass
class Receiver:
    """``statuses`` are answered in order (then 200); every request is kept in ``received``; the
    first ``hold`` requests get no answer until :meth:`release` (or :meth:`stop`)."""

    statuses: list[int] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None
    hold: int = 0
    released: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/events"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                receiver.received.append(Received({k.lower(): v for k, v in self.headers.items()}, body))
                if receiver.hold > 0:
                    receiver.hold -= 1
                    receiver.released.wait()
                    return  # no answer: the connection closes
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"ok" if status < 300 else b"nope")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def release(self) -> None:
        """Let the held requests go (they end without an answer)."""
        self.released.set()

    def stop(self) -> None:
        self.release()
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def webhook_ids(self) -> list[str]:
        return [r.headers["webhook-id"] for r in self.received]

    def types(self) -> list[str]:
        return [r.json["type"] for r in self.received]
