"""A rewind of an AG-UI thread's session to an earlier pause (AG-UI 1.0 RunAgentInput:
``forwardedProps.checkpointId``, with or without ``resume`` answers for the interrupts of that pause).

A rewind is known by its ``runId`` with what it asked (:func:`rewind_key`; a ``runId`` reused for
another request is a new run: ``../shared/cases/hitl-scenarios.md`` H34) and claimed under that key
before anything changes (:class:`~.models.AguiRewind`):

- the same request arriving again once it was made (a retry whose reply was lost, a late network
  duplicate, even after later rewinds stored other answers at that pause) is left alone: rewinding
  again would undo what was decided since;
- a copy arriving while the first is being made is ``session_busy`` (retry); a claim older than
  ``AGUI_LEASE_WAIT`` (a request that died halfway) is taken over;
- a refused one releases its claim, so that the same request sent again is judged again.

Then, before the session is touched, what would be refused once it waits at that pause is refused
(``resume.check_rewind``; a new message the workflow rejects while it waits: ``interrupts_pending``),
so a refused rewind changes nothing; what only the engine refuses as it stores the answers (an
approval's arguments digest, edited arguments), or an error, comes after the session went back:
it goes forward again to the pause it came from (:meth:`Rewind.abandon`). A retry with a new
``runId`` is still told apart by its answers (``resume.rewind_replayed``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ag_ui.core import ResumeEntry, RunAgentInput
from django.db import IntegrityError, transaction
from django.utils import timezone

from engine import CheckpointDecidedError, SessionBusyError, SessionClosedError, SessionStatus, UnknownCheckpointError

from ..api.models import ApiClient
from ..workflow_sessions.models import Checkpoint
from ..workflow_sessions.services import interrupt_get, pending_interrupts, session_record, session_restore
from .answers import decider
from .arrivals import while_waiting
from .errors import Refusal
from .hops import hop
from .live import lease_wait
from .models import AguiRewind, AguiThread
from .resume import check_rewind, rewind_replayed

__all__ = ["Rewind", "rewind", "rewind_key"]

logger = logging.getLogger("reviewconsole.agui")

CLAIMED, DONE, BUSY = "claimed", "done", "busy"


@dataclass
class Rewind:
    """A rewind claimed by this request: ``again`` when it was made already (leave everything
    alone), ``restored`` when the session went back to the pause now, from the pause
    ``came_from`` (its checkpoint id; "" when it waited at none)."""

    thread: AguiThread
    key: str
    again: bool = False
    restored: bool = False
    came_from: str | None = None

    async def done(self) -> None:
        """What the rewind asked is stored: the same request again is left alone from now on."""
        await hop(_finish)(self.thread, self.key)

    async def abandon(self, client: ApiClient) -> None:
        """The rewind was refused after its claim: the same request again is judged again. When
        it was refused after the session went back (what only the engine checks as the answers
        are stored, an error), the session goes forward again to the pause it came from, so the
        refused request leaves it waiting where it waited (the same interrupts, asked anew)."""
        if self.restored and self.came_from:
            try:
                await session_restore(self.thread.session_id, self.came_from, decided_by=decider(client))
            except Exception:  # the refusal stands; the session waits at the rewind's pause
                logger.exception("Could not undo the refused rewind of session %s", self.thread.session_id)
        await hop(_release)(self.thread, self.key)


async def rewind(
    client: ApiClient,
    thread: AguiThread,
    run: RunAgentInput,
    checkpoint_id: Any,
    message: tuple[str, Any] | None,
    on_arrival: str,
) -> Rewind:
    """Claim the rewind ``run`` asks for, check it, and go back to the pause unless the session
    waits there already or the request is a retry; the caller stores the answers, then calls
    :meth:`Rewind.done` (or :meth:`Rewind.abandon` when they are refused).

    Raises:
        Refusal: ``session_busy`` (the same request is being made; a run holds the session),
            ``session_closed``, ``checkpoint_unknown``, ``checkpoint_decided``,
            ``interrupts_pending`` (a new message the workflow does not queue while waiting: its
            ``on_arrival`` is not ``queue``; audited as the door's other refusals) and
            whatever ``resume.check_rewind`` refuses; nothing changed.
    """
    key = rewind_key(run.run_id, checkpoint_id, run.resume or [])
    claim = await hop(_claim)(thread, key, dt.timedelta(seconds=lease_wait()))
    if claim == DONE:
        return Rewind(thread, key, again=True)
    if claim == BUSY:
        raise Refusal("session_busy")
    try:
        came_from = await _restore(client, thread, run, str(checkpoint_id), message if on_arrival != "queue" else None)
    except BaseException:
        await hop(_release)(thread, key)
        raise
    return Rewind(thread, key, restored=came_from is not None, came_from=came_from)


async def _restore(
    client: ApiClient, thread: AguiThread, run: RunAgentInput, checkpoint_id: str, refused: tuple[str, Any] | None
) -> str | None:
    """Check, then go back to ``checkpoint_id``; the checkpoint id of the pause the session went
    back from ("" when it waited at none), or None when it did not go back (it waits there already; a retry:
    :func:`~.resume.rewind_replayed`). ``refused``: the request's user message, refused when it
    is new (the workflow would not queue it)."""
    session_id = thread.session_id
    record = await session_record(session_id)
    if record.status in SessionStatus.CLOSED:
        raise Refusal("session_closed")
    if record.status == SessionStatus.WAITING and record.checkpoint_id == checkpoint_id:
        return None
    at = await hop(_checkpoint_pending)(session_id, checkpoint_id)
    if at is not None and run.resume:
        pending = await pending_interrupts(session_id)
        if await rewind_replayed(session_id, run.resume, at, pending, decided_by=decider(client)):
            return None
        await check_rewind(session_id, run.resume, at, decided_by=decider(client))
    elif at is not None and refused is not None and refused[0] != thread.last_message_id:
        records = [r for wire in at if (r := await interrupt_get(session_id, wire)) is not None]
        await while_waiting(client, thread, refused, records, "reject")
    try:
        await session_restore(session_id, checkpoint_id, decided_by=decider(client))
    except UnknownCheckpointError:
        raise Refusal("checkpoint_unknown") from None
    except SessionClosedError:
        raise Refusal("session_closed") from None
    except CheckpointDecidedError as exc:
        raise Refusal("checkpoint_decided", _decided_message(exc)) from None
    except SessionBusyError:  # a run took the session meanwhile (another request of the thread)
        raise Refusal("session_busy") from None
    return record.checkpoint_id or ""


def _decided_message(exc: CheckpointDecidedError) -> str:
    """The refusal's message: which interrupt blocks the rewind, and who decided it when."""
    when = exc.details.get("decided_at")
    return (
        f"Interrupt {exc.details.get('interrupt_id')} was decided by {exc.details.get('decided_by') or 'someone else'}"
        + (f" at {when}" if when else "")
        + "; a decision made outside this thread is final, so the thread cannot be rewound to that checkpoint."
    )


def rewind_key(run_id: str, checkpoint_id: Any, entries: Sequence[ResumeEntry]) -> str:
    """Which rewind a request is, as a SHA-256 hex digest (64 characters) of its ``runId``, its
    checkpoint id and its ``resume`` entries (in interrupt id order, as JSON with sorted keys)."""
    asked = sorted(
        (entry.model_dump(mode="json", by_alias=True, exclude_none=True) for entry in entries),
        key=lambda entry: str(entry.get("interruptId", "")),
    )
    text = json.dumps({"runId": run_id, "checkpointId": checkpoint_id, "resume": asked}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _claim(thread: AguiThread, key: str, stale: dt.timedelta) -> str:
    """Claim the rewind ``key`` for this request: :data:`CLAIMED`; :data:`DONE` when it was made;
    :data:`BUSY` while another request has been making it for less than ``stale``."""
    now = timezone.now()
    try:
        with transaction.atomic():
            AguiRewind.objects.create(thread=thread, key=key, claimed_at=now)
        return CLAIMED
    except IntegrityError:
        pass
    row = AguiRewind.objects.filter(thread=thread, key=key)
    if row.filter(done=True).exists():
        return DONE
    taken = row.filter(done=False, claimed_at__lt=now - stale).update(claimed_at=now)
    return CLAIMED if taken else BUSY


def _checkpoint_pending(session_id: str, checkpoint_id: str) -> list[str] | None:
    """The wire ids of the interrupts the session waited on at its pause checkpoint
    ``checkpoint_id``, or None when it has no such pause (the restore refuses it then)."""
    found = Checkpoint.objects.filter(session_id=session_id, pk=checkpoint_id).values_list("pending", flat=True).first()
    return [str(wire) for wire in found] if found else None


def _finish(thread: AguiThread, key: str) -> None:
    AguiRewind.objects.filter(thread=thread, key=key).update(done=True)


def _release(thread: AguiThread, key: str) -> None:
    AguiRewind.objects.filter(thread=thread, key=key, done=False).delete()
