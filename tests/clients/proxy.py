"""A loopback HTTP proxy in front of the console that loses answers on purpose.

Each request is forwarded to the console for real; what the client gets back follows ``faults``,
one entry per request in order (then the console's own answer): ``"503"`` answers 503 with
``Retry-After: 0`` instead of the console's answer, ``"drop"`` closes the connection without an
answer. Either way the console did the work: the client cannot tell whether its write happened,
which is what idempotency keys are for. Every request is kept in ``seen``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx


@dataclass
class Seen:
    method: str
    path: str
    idempotency_key: str | None
    console_status: int
    replayed: bool
    fault: str | None
    body: bytes


@dataclass
class FaultyProxy:
    upstream: str
    faults: list[str] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FaultyProxy:
        proxy = self
        lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _forward(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length) if length else b""
                skip = {"host", "content-length", "connection", "accept-encoding"}
                headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
                answer = httpx.request(
                    self.command, proxy.upstream + self.path, content=body, headers=headers, timeout=90
                )
                with lock:
                    fault = proxy.faults.pop(0) if proxy.faults else None
                    proxy.seen.append(
                        Seen(
                            self.command,
                            self.path,
                            self.headers.get("Idempotency-Key"),
                            answer.status_code,
                            answer.headers.get("Idempotent-Replayed") == "true",
                            fault,
                            answer.content,
                        )
                    )
                if fault == "drop":
                    self.close_connection = True
                    return
                if fault == "503":
                    status, content, extra = (
                        503,
                        b'{"error": {"code": "unavailable", "message": "try again"}}',
                        {"Retry-After": "0"},
                    )
                else:
                    status, content, extra = answer.status_code, answer.content, {}
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(content)))
                for name in ("Retry-After", "Idempotent-Replayed"):
                    if name in answer.headers and fault is None:
                        self.send_header(name, answer.headers[name])
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(content)

            do_GET = do_POST = _forward

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
