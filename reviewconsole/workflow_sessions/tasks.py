"""The task that runs a session: start it, apply stored answers, or pick up a crashed run."""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from django.tasks import task

from engine import EngineError

from .models import WorkflowSession
from .runners import runner_for

logger = logging.getLogger("reviewconsole.runs")

__all__ = ["run_session"]


@task()
def run_session(session_id: str) -> str:
    """Run whatever ``session_id`` has to do; returns its status afterwards.

    Engine errors (e.g. a version mismatch) are logged and recorded on the session; they do not
    crash the worker.
    """
    workflow = WorkflowSession.objects.values_list("workflow", flat=True).get(pk=session_id)
    runner = runner_for(workflow)
    try:
        result = async_to_sync(runner.run_pending)(session_id)
    except EngineError as exc:
        logger.error("Session %s could not run: %s", session_id, exc)
        WorkflowSession.objects.filter(pk=session_id).update(error=exc.to_dict())
        return "error"
    return result.status
