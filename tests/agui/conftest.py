"""AG-UI test helpers: an API token, a scripted model per workflow, and a client that reads the SSE."""

from __future__ import annotations

import dataclasses
import json
import uuid

import pytest

from engine import ScriptedModel


@pytest.fixture
def token(demo_tx):
    """A token of an API client scoped to every workflow."""
    from reviewconsole.api.models import ApiClient

    value = ApiClient.new_token()
    client = ApiClient(name="agui-tests", workflows=["*"])
    client.set_token(value)
    client.save()
    return value


@pytest.fixture
def scripted(monkeypatch):
    """``scripted(workflow, [responses])``: that workflow's agents answer from a ScriptedModel (streamed)."""
    from reviewconsole.workflow_sessions.runners import runner_for

    def use(workflow, responses):
        model = ScriptedModel(responses, stream=True)
        monkeypatch.setattr(runner_for(workflow), "model", model)
        return model

    return use


def body(thread_id, text=None, *, resume=None, forwarded=None, message_id=None, run_id=None):
    """A RunAgentInput as the TS HttpAgent sends it."""
    messages = []
    if text is not None:
        messages.append({"id": message_id or f"m-{uuid.uuid4().hex[:8]}", "role": "user", "content": text})
    data = {
        "threadId": thread_id,
        "runId": run_id or f"r-{uuid.uuid4().hex[:8]}",
        "state": {},
        "messages": messages,
        "tools": [],
        "context": [],
        "forwardedProps": forwarded or {},
        "protocolVersion": "1.0",
    }
    if resume is not None:
        data["resume"] = resume
    return data


class Run:
    """One response: ``status``, ``frames`` (raw text), ``events`` (parsed), and helpers."""

    def __init__(self, status, headers, text):
        self.status = status
        self.headers = headers
        self.text = text
        self.frames = [f for f in text.split("\n\n") if f]
        self.events = [json.loads(f.removeprefix("data: ")) for f in self.frames] if status == 200 else []

    @property
    def types(self):
        return [e["type"] for e in self.events]

    @property
    def last(self):
        return self.events[-1]

    @property
    def interrupts(self):
        outcome = self.last.get("outcome") or {}
        return outcome.get("interrupts", [])

    def of(self, kind, name=None):
        return [e for e in self.events if e["type"] == kind and (name is None or e.get("name") == name)]

    def text_of_messages(self):
        buffers = {}
        for e in self.events:
            if e["type"] == "TEXT_MESSAGE_CONTENT":
                buffers[e["messageId"]] = buffers.get(e["messageId"], "") + e["delta"]
        return list(buffers.values())


@pytest.fixture
def agui(token):
    """``await agui(workflow, body, token=...)`` posts to /agui/<workflow>/ and reads the whole stream."""
    from django.test import AsyncClient

    async def post(workflow, data, *, auth=token, raw=None):
        client = AsyncClient()
        headers = {"Authorization": f"Bearer {auth}"} if auth else {}
        payload = raw if raw is not None else json.dumps(data)
        response = await client.post(f"/agui/{workflow}/", payload, content_type="application/json", headers=headers)
        if getattr(response, "streaming", False):
            chunks = [chunk async for chunk in response.streaming_content]
            text = b"".join(c if isinstance(c, bytes) else c.encode() for c in chunks).decode()
        else:
            text = response.content.decode()
        return Run(response.status_code, response.headers, text)

    return post


@pytest.fixture
def on_arrival(monkeypatch):
    """Give a workflow another ``on_arrival`` for the test: ``on_arrival("email-review", "queue")``."""
    from reviewconsole.workflows import registry

    def use(workflow, name):
        specs = registry.current().specs
        monkeypatch.setitem(specs, workflow, dataclasses.replace(specs[workflow], on_arrival=name))

    return use
