"""The task that runs a session: start it, apply stored answers, or pick up a crashed run."""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from django.tasks import task

from engine import EngineError

from .models import WorkflowSession
from .runners import runner_for_session

logger = logging.getLogger("reviewconsole.runs")

__all__ = ["run_session"]


@task()
def run_session(session_id: str) -> str:
    """Run whatever ``session_id`` has to do; returns its status afterwards.

    Engine errors (e.g. a version that is no longer deployed, or a lease lost halfway) are logged
    and recorded on the session; they do not crash the worker. A run that stopped halfway is picked
    up again by :mod:`.recovery` once its lease expires.
    """
    session = WorkflowSession.objects.only("workflow", "workflow_version").get(pk=session_id)
    try:
        # The definition the session started under, even after a newer version was deployed.
        runner = runner_for_session(session)
        result = async_to_sync(runner.run_pending)(session_id)
    except EngineError as exc:
        if exc.retryable:  # e.g. the lease was lost: the session is picked up again, no error to keep
            logger.warning("Session %s stopped: %s", session_id, exc)
            return "interrupted"
        logger.error("Session %s could not run: %s", session_id, exc)
        WorkflowSession.objects.filter(pk=session_id).update(error=exc.to_dict())
        return "error"
    return result.status
