"""A tiny OpenAI-compatible HTTP server for tests: ``POST /v1/chat/completions`` on 127.0.0.1.

It answers from a script of replies, in order, with or without ``stream=true`` (server-sent
events, tool-call arguments split over several chunks), and records every request it got.

A reply is ``{"text": str}``, ``{"tool_calls": [{"name": str, "arguments": dict}], "text"?: str}``
(``"raw_arguments": str`` instead of ``arguments`` sends that text as is, e.g. malformed JSON),
``{"status": int, "error": str, "headers"?: dict}`` (an error response, e.g. a 429 with
``Retry-After``; ``"echo_authorization": True`` puts the request's ``Authorization`` header in the
error body, as a careless server might), or ``{"hang": True}``: no answer until the server stops
(the client's timeout fires; nothing sleeps). ``"plain_json": True`` in a reply answers a
streaming request with a plain JSON completion, as some servers do.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAI:
    """Serve a script of replies; ``requests`` holds ``{"body", "headers"}`` per request."""

    def __init__(self, replies: list[dict[str, Any]] | None = None) -> None:
        self.replies = list(replies or [])
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        with self._lock:
            self.requests.append({"body": body, "headers": headers})
            if not self.replies:
                return {"status": 500, "error": "the fake server has no reply left"}
            return self.replies.pop(0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def do_POST(self) -> None:
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                reply = fake._next(body, {k.lower(): v for k, v in self.headers.items()})
                if reply.get("hang"):
                    fake._stopping.wait()
                    self.close_connection = True
                    return
                if "status" in reply:
                    message = reply["error"]
                    if reply.get("echo_authorization"):
                        message += f" (you sent {self.headers.get('Authorization')})"
                    error = {"error": {"message": message, "type": "server_error"}}
                    self._json(reply["status"], error, reply.get("headers", {}))
                elif body.get("stream") and not reply.get("plain_json"):
                    self._stream(body, reply)
                else:
                    self._json(200, _completion(body, reply))

            def _json(self, status: int, data: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                raw = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

            def _stream(self, body: dict[str, Any], reply: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in _chunks(body, reply):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

        return Handler


def _tool_calls(reply: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {
                "name": call["name"],
                "arguments": call.get("raw_arguments", json.dumps(call.get("arguments", {}))),
            },
        }
        for i, call in enumerate(reply.get("tool_calls", []))
    ]


def _completion(body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("text")}
    calls = _tool_calls(reply)
    if calls:
        message["tool_calls"] = calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", ""),
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
    }


def _chunk(body: dict[str, Any], delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": body.get("model", ""),
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _chunks(body: dict[str, Any], reply: dict[str, Any]) -> list[dict[str, Any]]:
    chunks = [_chunk(body, {"role": "assistant", "content": ""})]
    for piece in re.findall(r"\S+\s*", reply.get("text") or ""):
        chunks.append(_chunk(body, {"content": piece}))
    for index, call in enumerate(_tool_calls(reply)):
        arguments = call["function"]["arguments"]
        half = len(arguments) // 2
        first = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": arguments[:half]},
        }
        chunks.append(_chunk(body, {"tool_calls": [first]}))
        chunks.append(_chunk(body, {"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]}))
    chunks.append(_chunk(body, {}, "tool_calls" if reply.get("tool_calls") else "stop"))
    return chunks
