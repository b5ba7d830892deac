"""Re-deriving a waiting point from the checkpoint (internal): answers a run must not wait for.

A session must never wait with nothing to resume it (stores refuse such a commit, see
:class:`~engine.Store`). Two things could leave a checkpoint waiting on an interrupt that is no
longer pending although its answer is stored: a run that died after it marked the answer's
delivery applied and before it wrote the checkpoint showing the answer applied, and sessions
stored before the stores checked. The interrupt's stored answer (its record's ``response``) is
then delivered again, so the waiting point is re-derived from the checkpoint instead of waiting
for good.
"""

from __future__ import annotations

from typing import Any

from ._runtime import RunSession
from ._store import Store

__all__ = ["lost_answers", "stored_answers"]


async def lost_answers(store: Store, session: RunSession, waited: list[str], tried: set[str]) -> dict[str, Any]:
    """Answers the run's outcome waits on (``waited``: wire ids) although the store has them.

    Interrupts still pending (in the run's registry), answers already delivered in this run
    (``tried``) and answers stored but not applied yet (the runner's next pass applies those) are
    left out. Returns wire id → stored answer.
    """
    missing = [wire for wire in waited if wire not in session.registry and wire not in tried]
    if not missing:
        return {}
    unapplied = {d.interrupt_id for d in await store.take_deliveries(session.session_id)}
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
