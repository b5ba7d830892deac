"""Services on sessions: start one, and enqueue its runs. Doors (webhooks, the API, AG-UI) call these."""

from __future__ import annotations

import json
from typing import Any

from asgiref.sync import async_to_sync
from django.db import transaction

from .models import WorkflowSession
from .runners import runner_for
from .tasks import run_session

__all__ = ["enqueue_run", "session_start"]


def enqueue_run(session_id: str) -> None:
    """Queue a run of the session once the current transaction commits.

    ``robust``: should the enqueue fail (the database went away right after the commit), the
    caller still gets its answer, since what it asked for was stored; recovery runs the session.
    """
    transaction.on_commit(lambda: run_session.enqueue(session_id), robust=True)


def _title(data: Any) -> str:
    if isinstance(data, dict):
        text = next((v for v in data.values() if isinstance(v, str)), json.dumps(data, ensure_ascii=False))
    else:
        text = str(data)
    return " ".join(text.split())[:200]


@transaction.atomic
def session_start(*, workflow: str, data: Any, user_id: str, metadata: dict[str, Any] | None = None) -> WorkflowSession:
    """Create a session of ``workflow`` with ``data`` as its first message and queue its run.

    Raises:
        UnknownWorkflowError: no such workflow.
        engine.WorkflowDataError: ``data`` does not fit the workflow's input schema
            (``details["errors"]`` lists the fields); nothing is stored.
    """
    runner = runner_for(workflow)
    runner.app.validate_input(data)
    record = async_to_sync(runner.create_session)(user_id=user_id, metadata=metadata)
    async_to_sync(runner.start)(record.id, data)
    WorkflowSession.objects.filter(pk=record.id).update(title=_title(data))
    enqueue_run(record.id)
    return WorkflowSession.objects.get(pk=record.id)
