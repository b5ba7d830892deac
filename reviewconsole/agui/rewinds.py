"""The rewinds a thread made, by ``runId`` and what they asked (AG-UI 1.0 RunAgentInput: ``runId``,
``forwardedProps.checkpointId``, ``resume``).

The same request arriving again (a retry whose reply was lost, a late network duplicate) must not
rewind again: that would undo what was decided since. Its answers alone cannot tell it apart once a
later rewind stored other answers at the same pause; its ``runId`` with the same request can. A
``runId`` reused for another request is a new run (``../shared/cases/hitl-scenarios.md`` H34), so a
rewind is known by both.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from ag_ui.core import ResumeEntry

from .models import AguiRewind, AguiThread

__all__ = ["rewind_key", "rewind_record", "rewind_seen"]


def rewind_key(run_id: str, checkpoint_id: Any, entries: Sequence[ResumeEntry]) -> str:
    """Which rewind a request is, as a SHA-256 hex digest (64 characters) of its ``runId``, its
    checkpoint id and its ``resume`` entries (in interrupt id order, as JSON with sorted keys)."""
    asked = sorted(
        (entry.model_dump(mode="json", by_alias=True, exclude_none=True) for entry in entries),
        key=lambda entry: str(entry.get("interruptId", "")),
    )
    text = json.dumps(
        {"runId": run_id, "checkpointId": checkpoint_id, "resume": asked}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(text.encode()).hexdigest()


def rewind_seen(thread: AguiThread, key: str) -> bool:
    """Whether ``thread`` made the rewind ``key`` (:func:`rewind_key`) already."""
    return AguiRewind.objects.filter(thread=thread, key=key).exists()


def rewind_record(thread: AguiThread, key: str) -> None:
    """Note that ``thread`` made the rewind ``key``; noting it twice is harmless."""
    AguiRewind.objects.bulk_create([AguiRewind(thread=thread, key=key)], ignore_conflicts=True)
