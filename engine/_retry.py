"""Retrying a failed session from its last checkpoint (:meth:`engine.Runner.retry`).

A failed run keeps the last checkpoint it wrote as the session's checkpoint and lists the
interrupts its failure cancelled under ``error[REOPEN_ON_RETRY]`` (see ``engine._root_run.finish_root``). A
retry takes the lease, checks the session failed, re-opens those interrupts under the same wire
ids, appends a retry event and sets the session running; the next ``run_pending`` resumes there.
"""

from __future__ import annotations

from ._errors import SessionBusyError, SessionNotFailedError
from ._events import Event, NodeInfo
from ._store import Commit, InterruptRecord, SessionRecord, SessionStatus, Store

__all__ = ["REOPEN_ON_RETRY", "RETRY_KEY", "retry_failed"]

RETRY_KEY = "retryFailedSession"
"""Key of :attr:`Event.custom_metadata` on the event that marks a retry (:meth:`Runner.retry`)."""
REOPEN_ON_RETRY = "reopen_on_retry"
"""Key of a failed session's ``error``: the interrupts its failure cancelled, opened again by a retry."""


async def retry_failed(
    store: Store, session_id: str, *, owner: str, ttl: float, retried_by: str | None = None
) -> SessionRecord:
    """See :meth:`engine.Runner.retry` (``owner`` and ``ttl``: the lease taken meanwhile).

    Raises:
        SessionNotFailedError: the session is not failed (``details["status"]``); nothing changed.
        SessionBusyError: a run holds the lease; try again.
    """
    if not await store.acquire_lease(session_id, owner, ttl):
        raise SessionBusyError("The session is running; try again.", session_id=session_id)
    try:
        record = await store.get_session(session_id)
        checkpoint = record.checkpoint or {}
        root = checkpoint.get("root") or {}
        if record.status != SessionStatus.FAILED or root.get("status") not in ("running", "waiting"):
            raise SessionNotFailedError(
                f"Only a failed session can be retried; session {session_id} is {record.status}.",
                session_id=session_id,
                status=record.status,
            )
        error = record.error or {}
        reopened: list[InterruptRecord] = []
        for wire in error.get(REOPEN_ON_RETRY, []):
            found = await store.get_interrupt(session_id, wire)
            if found is not None and found.status == "cancelled":
                found.status, found.response, found.decided_by, found.decided_at = "pending", None, None, None
                reopened.append(found)
        event = Event(
            author="user",
            invocation_id=record.invocation_id,
            node_info=NodeInfo(path=""),
            custom_metadata={RETRY_KEY: {"error_code": error.get("code", ""), "retried_by": retried_by}},
        )
        return await store.commit(
            session_id,
            Commit(
                events=[event],
                checkpoint=checkpoint,
                status=SessionStatus.RUNNING,
                expected_version=record.version,
                lease_owner=owner,
                invocation_id=record.invocation_id,
                opened=reopened,
                state=record.state,
            ),
        )
    finally:
        await store.release_lease(session_id, owner)
