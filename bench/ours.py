"""Our engine on the peers' workload and harness (``bench/peers/common.py``).

The workflow is the product's email review (``reviewconsole/workflows/email_review.py``): an LLM
agent drafts, so each draft goes through our real agent path (instruction template, model
request, event with ``output_key``). The model is deterministic and returns
``common.draft_email_text(complaint, feedback)`` in one piece, the same cost as the peers' fake
LLM.

Variants:
    memory -- ``InMemoryStore``.
    orm    -- the console's ORM store on SQLite (WAL, a temp directory), Django configured
              in-process with the embedded settings.

Run from the project venv: ``python -m bench.ours --sessions 20 --reps 1 --loops 1,10``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # executed as a script
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.peers import common

SYSTEM = "reviewconsole"


class BenchModel:
    """Returns the peers' fake-LLM draft for the complaint and feedback in the instruction."""

    name = "bench-model"
    offline = True

    async def generate(self, request: Any) -> AsyncIterator[Any]:
        from engine import Content, LlmResponse, Part

        text = request.instruction
        complaint = text.split("Customer complaint:\n", 1)[1].split("\n\nReviewer feedback", 1)[0]
        feedback = text.split("(apply it if present):\n", 1)[1].strip()
        yield LlmResponse(Content(role="model", parts=[Part(text=common.draft_email_text(complaint, feedback))]))


def _setup_django(var_dir: str) -> None:
    os.environ["REVIEWCONSOLE_VAR_DIR"] = var_dir
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewconsole.settings.embedded")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


class OursDriver(common.AsyncPeerDriver):
    """Start = create a session and run it to the first pause; resume = answer and run."""

    def __init__(self, variant: str) -> None:
        super().__init__(variant)
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._sessions: dict[str, str] = {}

    def open(self) -> None:
        if self.variant == "orm":
            # Django is set up and migrated before the event loop exists (migrate is sync-only).
            self._tmp = tempfile.TemporaryDirectory(prefix="bench-ours-")
            _setup_django(self._tmp.name)
        super().open()

    async def aopen(self) -> None:
        from engine import InMemoryStore, Runner
        from reviewconsole.workflows import email_review

        if self.variant == "orm":
            from reviewconsole.workflow_sessions.store import OrmStore

            store: Any = OrmStore()
        else:
            store = InMemoryStore()
        model = BenchModel()
        self.runner = Runner(email_review.build(model), store, app_name="email-review", model=model)

    async def aclose(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()

    def _outcome(self, result: Any) -> common.Outcome:
        if result.status == "waiting":
            return common.Paused(result.session.state["draft"])
        texts = [e.text for e in result.events if e.text and e.author != "draft_email"]
        return common.Finished(texts[-1] if texts else "")

    async def astart(self, session_id: str, complaint: str) -> common.Outcome:
        record = await self.runner.create_session()
        self._sessions[session_id] = record.id
        return self._outcome(await self.runner.run(record.id, complaint))

    async def aresume(self, session_id: str, answer: str) -> common.Outcome:
        result = await self.runner.resume(self._sessions[session_id], {None: answer})
        if result.status != "waiting":
            self._sessions.pop(session_id, None)
        return self._outcome(result)

    def storage_bytes(self) -> int | None:
        if self._tmp is None:
            return None
        return common.sqlite_file_bytes(Path(self._tmp.name) / "reviewconsole.sqlite3")

    def versions(self) -> dict[str, str]:
        return {"reviewconsole": "main"}

    def notes(self) -> str:
        return "email-review workflow with an LLM agent drafting; deterministic model"


if __name__ == "__main__":
    raise SystemExit(common.run_cli(SYSTEM, {"memory": OursDriver, "orm": OursDriver}))
