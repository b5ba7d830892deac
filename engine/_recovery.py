"""Re-deriving a waiting point from the checkpoint (internal): answers a run must not wait for.

A session must never wait with nothing to resume it (stores refuse such a commit, see
:class:`~engine.Store`). Two things could leave a checkpoint waiting on an interrupt that is no
longer pending although its answer is stored: a run that died after it marked the stored
answer applied and before it wrote the checkpoint showing the answer applied, and sessions
stored before the stores checked. The interrupt's stored answer (its record's ``response``) is
then delivered again, so the waiting point is re-derived from the checkpoint instead of waiting
for good. A session stored waiting on interrupts none of which is pending or answered is failed
with ``session_stuck`` (:func:`fail_stuck`).
"""

from __future__ import annotations

import logging
from typing import Any

from ._errors import StuckSessionError
from ._events import Event, NodeInfo
from ._runtime import RunSession
from ._store import Commit, SessionRecord, SessionStatus, Store

__all__ = ["fail_stuck", "lost_answers", "stored_answers"]

logger = logging.getLogger("engine")


async def lost_answers(store: Store, session: RunSession, waited: list[str], tried: set[str]) -> dict[str, Any]:
    """Answers the run's outcome waits on (``waited``: wire ids) although the store has them.

    Interrupts still pending (in the run's registry), answers already delivered in this run
    (``tried``) and answers stored but not applied yet (the runner's next pass applies those) are
    left out. Returns wire id → stored answer.
    """
    missing = [wire for wire in waited if wire not in session.registry and wire not in tried]
    if not missing:
        return {}
    unapplied = {a.interrupt_id for a in await store.take_answers(session.session_id)}
    return await stored_answers(store, session.session_id, [w for w in missing if w not in unapplied], tried)


async def stored_answers(store: Store, session_id: str, wires: list[str], tried: set[str]) -> dict[str, Any]:
    """The stored answers (``response``) of the resolved interrupts among ``wires``, not in ``tried``."""
    found: dict[str, Any] = {}
    for wire in wires:
        if wire in tried:
            continue
        record = await store.get_interrupt(session_id, wire)
        if record is not None and record.status == "resolved":
            found[wire] = record.response
    return found


async def fail_stuck(store: Store, record: SessionRecord, owner: str, author: str, waited: list[str]) -> SessionRecord:
    """Fail a session stored waiting on interrupts none of which is pending or answered (``waited``):
    nothing can resume it, and a failure with ``session_stuck`` says so instead of waiting for good.

    ``owner`` holds the lease; ``author`` authors the error event. Returns the failed record.
    """
    logger.error("Session %s waits on %s, none of them pending or answered", record.id, waited)
    error = StuckSessionError(
        "The session waited on interrupts that are neither pending nor answered.",
        session_id=record.id,
        interrupts=waited,
    )
    event = Event(
        author=author,
        invocation_id=record.invocation_id,
        node_info=NodeInfo(path=""),
        error_code=error.code,
        error_message=str(error),
    )
    commit = Commit(
        events=[event],
        checkpoint=record.checkpoint,
        status=SessionStatus.FAILED,
        expected_version=record.version,
        lease_owner=owner,
        invocation_id=record.invocation_id,
        error=error.to_dict(),
        state=record.state,
    )
    return await store.commit(record.id, commit)
