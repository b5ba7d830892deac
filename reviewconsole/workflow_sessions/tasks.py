"""The task that runs a session: start it, apply stored answers, or pick up a crashed run."""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from django.tasks import task

from engine import EngineError

from .listeners import SessionRunListener, run_listener
from .models import WorkflowSession
from .runners import runner_for_session

logger = logging.getLogger("reviewconsole.runs")

__all__ = ["run_session"]


@task()
def run_session(session_id: str, metadata: dict[str, Any] | None = None) -> str:
    """Run whatever ``session_id`` has to do; returns its status afterwards.

    ``metadata`` (JSON: host data such as AG-UI forwarded props) reaches the run's nodes as
    ``ctx.metadata``. The listeners registered for the session (:mod:`.listeners`) hear the run,
    and its end in any case, after input queued behind the session was released
    (:func:`.arrivals.arrivals_release`: a stream hearing of the end sees the next run due).

    Engine errors (e.g. a version that is no longer deployed, or a lease lost halfway) are logged
    and recorded on the session; they do not crash the worker. A run that stopped halfway is picked
    up again by :mod:`.recovery` once its lease expires.
    """
    session = WorkflowSession.objects.only("workflow", "workflow_version", "metadata").get(pk=session_id)
    listener = run_listener(session)
    status = "error"
    try:
        status = _run(session, metadata, listener)
        _release(session_id)
    finally:
        if listener is not None:
            listener.on_run_end(status)
    return status


def _release(session_id: str) -> None:
    from .arrivals import arrivals_release  # a cycle: arrivals enqueues this task through the services

    try:
        arrivals_release(session_id)
    except Exception:  # the run itself is done and stored; the next run's end or a cancel releases again
        logger.exception("Releasing the input queued behind session %s failed", session_id)


def _run(session: WorkflowSession, metadata: dict[str, Any] | None, listener: SessionRunListener | None) -> str:
    try:
        # The definition the session started under, even after a newer version was deployed.
        runner = runner_for_session(session)
        result = async_to_sync(runner.run_pending)(session.pk, metadata=metadata, listener=listener)
    except EngineError as exc:
        if exc.retryable:  # e.g. the lease was lost: the session is picked up again, no error to keep
            logger.warning("Session %s stopped: %s", session.pk, exc)
            return "interrupted"
        logger.error("Session %s could not run: %s", session.pk, exc)
        WorkflowSession.objects.filter(pk=session.pk).update(error=exc.to_dict())
        return "error"
    return result.status
