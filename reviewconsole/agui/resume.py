"""A request's ``resume`` array checked against the thread's pending interrupts, then applied.

AG-UI 1.0, docs/concepts/interrupts (rules 2-5), as this door applies them:

- each interrupt has at most one entry (two for one id, e.g. one ``resolved`` and one
  ``cancelled``, are ``input_invalid``, naming the id: no entry silently wins);
- an entry for an interrupt a newer request of the thread replaced (the next draft of a review
  loop) is ``interrupt_superseded``, naming the newer id, unless the request answers that one too;
- a request whose every entry is this client's own decision sent again (a retried request whose
  answers were applied, the session since moved on) is left alone, as the API's repeat is: nothing
  is stored and the stream shows where the session is now (e.g. the next draft's interrupt); a
  rewind's (``checkpointId``) is not rewound again either (``runs``, :func:`rewind_replayed`), which
  would undo the decisions made since;
- every pending interrupt of the thread must have an entry (else ``resume_incomplete``);
- an entry for an id the thread never had is ``interrupt_unknown`` (``interrupt_not_ready``, retryable,
  while an earlier answer is stored and not yet applied: its run may open that id);
- a ``resolved`` entry for an interrupt already decided is ``interrupt_decided``, naming who decided
  what and when (first decision wins: a reviewer in the inbox, another client, a concurrent request
  of this one), unless it is this client's same answer sent again (a retried request: left alone,
  so sending the same answer twice is harmless);
- a ``resolved`` entry for an interrupt a reviewer has claimed is ``interrupt_claimed`` unless the
  token has the ``override_claims`` scope (the claim is the reviewer's: the inbox's rule);
- a ``resolved`` entry needs a payload valid for the interrupt, its strings' ``format`` too
  (``answer_invalid``, naming each field and why), one that stands
  for a decision its request kind supports (``action_not_supported``: feedback to a VIP
  confirmation; ``answer_missing``: an empty free-text answer; see ``inbox/items/actions.py``), must
  pass the workflow's checks before a decision (``decision_refused``, the workflow's message), and must
  not be past its due time (``interrupt_expired``; a ``cancelled`` entry is accepted then);
- a ``resolved`` approval naming an argument digest other than its interrupt's ``argsDigest`` is
  ``args_changed`` (``engine._digest``): the call changed since it was shown;
- a ``cancelled`` entry abandons the run (``interrupt_decided`` when a decision on its interrupt
  was stored first, even one its run has not applied yet: that decision stands): the session is
  cancelled (its pending interrupts leave
  the inbox, shown "cancelled by" the client: ``inbox.items.lifecycle.session_items_cancelled``)
  and the run ends with outcome ``cancelled``; answers sent with it are not applied.

Nothing is stored unless every entry passes. Answers go through the session service (``interrupt_answer``) (one
transaction, first decision wins), so the inbox item is resolved and leaves reviewers' screens.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from collections.abc import Sequence
from typing import Any

from ag_ui.core import ResumeEntry

from engine import (
    AlreadyDecidedError,
    AnswerInvalidError,
    AnswerMissingError,
    ArgsChangedError,
    EngineError,
    InterruptNotReadyError,
    InterruptRecord,
    SessionBusyError,
    SessionClosedError,
    UnknownInterruptError,
)

from ..inbox.items.lifecycle import pending_item_ids, session_items_cancelled
from ..inbox.items.policy_gate import record_refused
from ..inbox.items.receipts import refusal_record
from ..workflow_sessions.services import answer_waiting, interrupt_get, session_cancel
from .answers import answers_store, decided_conflict, newer_interrupt, reopened, replayed, rewind_answers_check
from .errors import Refusal, answer_invalid
from .hops import hop
from .interrupts import answer_value

__all__ = ["CANCELLED", "SUBMITTED", "UNCHANGED", "apply_resume", "check_rewind", "rewind_replayed"]

logger = logging.getLogger("reviewconsole.agui")

SUBMITTED = "submitted"
CANCELLED = "cancelled"
UNCHANGED = "unchanged"


async def apply_resume(
    session_id: str,
    entries: Sequence[ResumeEntry],
    *,
    pending: list[InterruptRecord],
    due: dict[str, dt.datetime],
    decided_by: str,
    now: dt.datetime,
    override_claims: bool = False,
    queue_run: dict[str, Any] | None = None,
) -> str:
    """Check and apply ``entries``; returns :data:`SUBMITTED`, :data:`CANCELLED` or :data:`UNCHANGED`.

    ``queue_run`` (the run's metadata) queues the run in the answers' transaction
    (``answers.answers_store``): queued exactly when this returns :data:`SUBMITTED`.

    Raises:
        Refusal: ``input_invalid`` (two entries for one interrupt id), ``interrupt_superseded``, ``resume_incomplete``,
            ``interrupt_unknown``, ``interrupt_decided``, ``answer_invalid``, ``args_changed`` or
            ``interrupt_expired``; nothing was stored.
    """
    by_id = _by_id(entries)
    open_ = {record.id: record for record in pending}
    replays = await _replays(session_id, by_id, set(open_), decided_by)
    if replays and len(replays) == len(by_id):
        return UNCHANGED  # a retried request whose answers were applied: the stream shows what came of them
    for wire in by_id:
        if wire in replays:
            continue
        newer = None if wire in open_ else await hop(newer_interrupt)(session_id, wire)
        if newer is not None and newer not in by_id:
            raise Refusal("interrupt_superseded", f"superseded: a newer request exists ({newer[:200]}).")
    if any(wire not in by_id for wire in open_):
        raise Refusal("resume_incomplete")
    for wire, entry in by_id.items():
        if wire in open_:
            continue
        if (known := await interrupt_get(session_id, wire)) is None:
            if await answer_waiting(session_id):
                raise Refusal("interrupt_not_ready")
            await _record(UnknownInterruptError(f"No interrupt {wire[:200]!r}."), session_id, wire, decided_by)
            raise Refusal("interrupt_unknown")
        if entry.status == "cancelled":
            await _refuse_if_decided(session_id, wire, None, decided_by, cancel=True)
        else:
            await _refuse_if_decided(session_id, wire, _value(known, entry.payload), decided_by)
    answers: dict[str, object] = {}
    cancel = False
    for wire, record in open_.items():
        entry = by_id[wire]
        if entry.status == "cancelled":
            cancel = True
            continue
        if wire in due and due[wire] <= now:
            raise Refusal("interrupt_expired")
        if entry.payload is None:
            raise Refusal("answer_invalid")
        answers[wire] = _value(record, entry.payload)
    if cancel:
        for wire in open_:  # a decision stored since ``pending`` was read stands
            if by_id[wire].status == "cancelled":
                await _refuse_if_decided(session_id, wire, None, decided_by, cancel=True)
        pending_items = await hop(pending_item_ids)(session_id)
        with contextlib.suppress(SessionClosedError):  # cancelled (or finished) meanwhile: the outcome says which
            try:
                await session_cancel(session_id, reason="Cancelled by the AG-UI client.")
            except SessionBusyError:  # a run holds it, or a decision stored meanwhile waits for one
                raise Refusal("session_busy") from None
            # The inbox says who cancelled its items and why, rather than "superseded".
            await hop(session_items_cancelled)(pending_items, by=decided_by, reason="Cancelled by the AG-UI client.")
        return CANCELLED
    if not answers:
        return UNCHANGED
    try:
        await hop(answers_store)(
            session_id,
            answers,
            decided_by=decided_by,
            override_claims=override_claims,
            queue_run=queue_run,
        )
    except AnswerMissingError:
        raise Refusal("answer_missing") from None
    except ArgsChangedError as exc:
        await _record(exc, session_id, str(exc.details.get("interrupt_id") or ""), decided_by)
        raise Refusal("args_changed") from None
    except AnswerInvalidError as exc:
        raise answer_invalid(list(exc.details.get("errors") or [])) from None
    except AlreadyDecidedError:  # lost the race to another decision: each answer is judged
        for wire, value in answers.items():
            await _refuse_if_decided(session_id, wire, value, decided_by)
        return UNCHANGED  # this client's same answers, stored by the request it lost to
    except InterruptNotReadyError:
        raise Refusal("interrupt_not_ready") from None
    except UnknownInterruptError as exc:
        await _record(exc, session_id, "", decided_by)
        raise Refusal("interrupt_unknown") from None
    except EngineError:
        logger.exception("AG-UI resume of session %s was refused by the engine", session_id)
        raise Refusal("internal_error") from None
    return SUBMITTED


def _by_id(entries: Sequence[ResumeEntry]) -> dict[str, ResumeEntry]:
    """``entries`` by interrupt id.

    Raises:
        Refusal: ``input_invalid``, naming the id, when two entries name one interrupt.
    """
    by_id: dict[str, ResumeEntry] = {}
    for entry in entries:
        if entry.interrupt_id in by_id:
            raise Refusal(
                "input_invalid", f"The resume array has more than one entry for interrupt {entry.interrupt_id[:200]}."
            )
        by_id[entry.interrupt_id] = entry
    return by_id


async def check_rewind(session_id: str, entries: Sequence[ResumeEntry], at: list[str], *, decided_by: str) -> None:
    """Refuse, before a rewind to the pause whose pending interrupts were ``at`` (wire ids), a
    ``resume`` that :func:`apply_resume` would refuse once they are pending again, so that a
    refused rewind changes nothing: two entries for one id, an entry for an interrupt not of the
    pause (one the thread never had, or one asked after it, which the rewind cancels), an
    interrupt of the pause left unanswered, an answer its interrupt cannot read. A cancellation
    is checked by its own rules after the rewind; what only the engine checks as it stores the
    answers (an approval's ``argsDigest``, edited arguments) too: ``runs`` undoes the rewind then.

    Raises:
        Refusal: ``input_invalid``, ``interrupt_unknown``, ``interrupt_superseded``,
            ``resume_incomplete``, ``answer_invalid`` and the rest of ``answers.read_answers``'s
            (``answer_missing``, ``decision_refused``, …).
    """
    by_id = _by_id(entries)
    for wire in by_id:
        if wire not in at:  # the rewind cancels what was asked after the pause: nothing else is answerable
            if await interrupt_get(session_id, wire) is None:
                raise Refusal("interrupt_unknown")
            raise Refusal("interrupt_superseded", f"superseded: the rewind goes back before {wire[:200]}.")
    if any(wire not in by_id for wire in at):
        raise Refusal("resume_incomplete")
    if any(by_id[wire].status == "cancelled" for wire in at):
        return
    answers: dict[str, Any] = {}
    for wire in at:
        payload = by_id[wire].payload
        if payload is None:
            raise Refusal("answer_invalid")
        if (known := await interrupt_get(session_id, wire)) is not None:
            answers[wire] = _value(known, payload)
    await hop(rewind_answers_check)(session_id, answers, decided_by=decided_by)


async def rewind_replayed(
    session_id: str, entries: Sequence[ResumeEntry], at: list[str], pending: list[InterruptRecord], *, decided_by: str
) -> bool:
    """Whether a rewind's ``entries`` (at least one, each for an interrupt ``at`` the pause it
    names) were all applied already: each is ``decided_by``'s own stored decision on an interrupt
    no longer pending that a rewind opened again (asked more than once). Then the request is a
    retry of that rewind (``runs``: not rewound again, which would undo the decisions made since).
    A rewind to a pause never rewound to before is a new one, even with the answer first given
    there (the client asks for the step again)."""
    by_id = {entry.interrupt_id: entry for entry in entries}
    if len(by_id) != len(entries) or not set(by_id) <= set(at):
        return False
    replays = await _replays(session_id, by_id, {r.id for r in pending}, decided_by)
    return len(replays) == len(by_id) and all([await hop(reopened)(session_id, w) for w in replays])


async def _replays(session_id: str, by_id: dict[str, ResumeEntry], open_: set[str], decided_by: str) -> set[str]:
    """The interrupt ids of ``by_id`` whose entries are replays (:func:`_replayed`)."""
    return {w for w, e in by_id.items() if w not in open_ and await _replayed(session_id, w, e, decided_by)}


async def _replayed(session_id: str, interrupt_id: str, entry: ResumeEntry, decided_by: str) -> bool:
    """Whether ``entry`` resolves ``interrupt_id``, no longer pending, with ``decided_by``'s own
    stored decision (``answers.replayed``): a retried request."""
    if entry.status != "resolved" or entry.payload is None:
        return False
    if (known := await interrupt_get(session_id, interrupt_id)) is None:
        return False
    try:
        value = answer_value(known, entry.payload)
    except AnswerInvalidError:
        return False
    return await hop(replayed)(session_id, interrupt_id, value, decided_by=decided_by)


def _value(record: InterruptRecord, payload: Any) -> Any:
    """``interrupts.answer_value``, its refusal as ``answer_invalid``."""
    try:
        return answer_value(record, payload)
    except AnswerInvalidError as exc:
        raise answer_invalid(list(exc.details.get("errors") or [])) from None


async def _refuse_if_decided(
    session_id: str, interrupt_id: str, payload: Any, decided_by: str, *, cancel: bool = False
) -> None:
    """Refuse, audited, an answer to ``interrupt_id`` (or, with ``cancel``, its cancellation) that
    someone else decided, or this client otherwise (``answers.decided_conflict``).

    Raises:
        Refusal: ``interrupt_decided``, naming who decided what and when.
    """
    refused = await hop(decided_conflict)(session_id, interrupt_id, payload, decided_by=decided_by, cancel=cancel)
    if refused is not None:
        await _record(refused, session_id, interrupt_id, decided_by)
        raise Refusal("interrupt_decided", str(refused))


async def _record(exc: EngineError, session_id: str, interrupt_id: str, decided_by: str) -> None:
    """Audit a resume refused for the call it names (``inbox.items.receipts.refusal_record``; one a
    policy decided, ``inbox.items.policy_gate.record_refused``)."""
    if isinstance(exc, AlreadyDecidedError):
        await hop(record_refused)(session_id, interrupt_id, actor=decided_by)
    await hop(refusal_record)(exc, session_id=session_id, interrupt_id=interrupt_id, actor=decided_by)
