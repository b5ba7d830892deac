"""The review lifecycle beyond claim and decide: defer, return to the queue, escalate, cancel.

- **defer** (:func:`interrupt_defer`): back to the queue, unclaimed, with a note and a new due
  time (``due_at`` and ``deferred_until``; a new expiry is scheduled for it, and an item marked
  overdue is due again);
- **return to queue** (:func:`interrupt_release`): a claim released with a note for whoever takes
  it next;
- **escalate** (:func:`interrupt_escalate`): to another queue the workflow allows
  (``escalation.escalation_targets``), unclaimed, keeping its due time; the old queue's reviewers get a
  409 ``moved`` when they try to decide it;
- **cancel** (:func:`interrupt_cancel`): a queue manager answers the request with the cancelled
  answer (``engine.cancelled_answer``: ADK 2.11's synthesized abort response, AG-UI 1.0's
  ``status: "cancelled"``), recorded like a decision (``decision = "cancelled"``, who and why), so
  the workflow routes on it (the email review ends "Draft cancelled."); with ``whole_session``
  the session itself is cancelled (``session_cancel``: nothing runs again).

Who: a person (``Actor.person``) must be a reviewer of the item's queue to defer, return or
escalate it, and a manager of it to cancel; while someone else's claim is in force only a queue
manager acts on it. An API client (``Actor.client``) has been scoped by its door; it acts on a
claimed item only with the ``override_claims`` scope.

Once: each action locks the item row (``SELECT … FOR UPDATE``, as a decision's ``InboxGuard``
does), re-reads it, refuses with the 409s of ``refusals.py`` what changed since the caller saw it
(decided, expired, moved, claimed by someone else) and then changes it with an UPDATE conditional
on that state, so of a defer (or escalation, or cancel) racing a decision, a claim or an expiry
exactly one wins and the loser's 409 names who. A cancel goes through the session service as an
answer (first answer wins). Each is audited (``interrupt.defer``, ``.release``, ``.escalate``,
``.cancel``, ``session.cancel``), leaves its note as a :class:`~reviewconsole.inbox.models.Comment`
and is logged in the queues' change logs (``interrupt.deferred``, ``interrupt.released``,
``interrupt.escalated`` + ``interrupt.created`` in the new queue; a cancel's
``interrupt.cancelled`` comes from the outbox consumer when the answer is relayed).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q
from django.http import HttpRequest
from django.utils import timezone

from engine import AlreadyDecidedError, Decision, cancelled_answer

from ...workflow_sessions.outcome import cancel_reason
from ...workflow_sessions.services import enqueue_run, interrupt_answer_sync, session_cancel_sync
from ..errors import DecisionError, NotClaimedError
from ..models import CANCELLED, CommentKind, Item, ItemStatus
from ..tasks import notify_enqueue, schedule_expiry
from .answer_guard import InboxGuard
from .comments import check_note, comment_write
from .escalation import escalation_targets
from .recording import item_change_record
from .refusals import claimed_conflict, moved_conflict, refusal_for
from .selectors import is_queue_manager, queues_for

__all__ = [
    "MAX_DEFER",
    "Actor",
    "interrupt_cancel",
    "interrupt_defer",
    "interrupt_escalate",
    "interrupt_release",
    "pending_item_ids",
    "session_items_cancelled",
]

MAX_DEFER = dt.timedelta(days=90)
"""How far ahead a defer may put an item's due time."""


@dataclass(frozen=True, slots=True)
class Actor:
    """Who acts: a person (``user``; checked against the item's queue here) or an API client
    (``label`` ``client:<name>``; its door checked its scope). ``override_claims``: may act on an
    item someone else has claimed (a queue manager; a client with that scope)."""

    user: AbstractBaseUser | None
    label: str
    override_claims: bool = False

    @classmethod
    def person(cls, user: AbstractBaseUser) -> Actor:
        return cls(user=user, label=user.get_username())

    @classmethod
    def client(cls, label: str, *, override_claims: bool = False) -> Actor:
        return cls(user=None, label=label, override_claims=override_claims)

    @property
    def audit(self) -> dict[str, Any]:
        """``audit_record``'s ``user`` or ``actor`` for this actor."""
        return {"user": self.user} if self.user is not None else {"actor": self.label}


def _may_override(interrupt: Item, actor: Actor) -> bool:
    """Raise unless ``actor`` may act on ``interrupt``'s queue; return whether it may override a claim.

    Raises:
        PermissionDenied: a person who is not a reviewer of the item's queue.
    """
    if actor.user is None:
        return actor.override_claims
    if not queues_for(actor.user).filter(pk=interrupt.queue_id).exists():
        raise PermissionDenied("You are not a reviewer of this queue.")
    return is_queue_manager(actor.user, interrupt.queue_id)


def _locked(interrupt: Item, actor: Actor, override: bool, now: dt.datetime) -> Item:
    """The item row locked for the action, as stored now; raise the 409 that refuses the action.

    Raises:
        MovedError: it left the queue the caller saw. AlreadyDecidedError / SupersededError /
            ExpiredError: it takes no action now. ClaimConflictError: someone else's claim is in
            force and ``actor`` may not override it.
    """
    row = (
        Item.objects.select_for_update(of=("self",))
        .select_related("queue", "claimed_by", "session")
        .get(pk=interrupt.pk)
    )
    if row.queue_id != interrupt.queue_id:
        raise moved_conflict(row)
    refusal = refusal_for(row, now)
    if refusal is not None:
        raise refusal
    holder = row.claim_holder(now)
    mine = actor.user is not None and holder == actor.user.pk
    if holder and not mine and not override:
        raise claimed_conflict(row)
    return row


def _update(row: Item, now: dt.datetime, **changes: Any) -> None:
    """The conditional UPDATE: still pending in the same queue with the same claim and due time,
    and its session's interrupt still unanswered; else the 409 the row as stored now gives."""
    holder = row.claim_holder(now)
    if holder:
        claim = Q(claimed_by_id=holder, claim_expires_at__gt=now)
    else:
        claim = Q(claimed_by__isnull=True) | Q(claim_expires_at__lte=now)
    unanswered = Q(session_interrupt__isnull=True) | Q(session_interrupt__status=ItemStatus.PENDING)
    due = Q(due_at=row.due_at) if row.due_at else Q(due_at__isnull=True)
    rows = Item.objects.filter(claim, unanswered, due, pk=row.pk, status=ItemStatus.PENDING, queue_id=row.queue_id)
    if rows.update(**changes) == 1:
        return
    fresh = _reload(row)
    if fresh.queue_id != row.queue_id:
        raise moved_conflict(fresh)
    raise refusal_for(fresh) or claimed_conflict(fresh)


def _reload(interrupt: Item) -> Item:
    return Item.objects.select_related("queue", "claimed_by", "session").get(pk=interrupt.pk)


UNCLAIMED = {"claimed_by": None, "claimed_at": None, "claim_expires_at": None}


def interrupt_defer(
    *, interrupt: Item, actor: Actor, until: dt.datetime, note: str, request: HttpRequest | None = None
) -> Item:
    """Put a pending item back in its queue, unclaimed, due again at ``until`` (aware datetime),
    with ``note`` (required) for whoever takes it up. Expiry then runs at ``until`` as the item
    declares (escalate, time out, or stay overdue).

    Raises:
        PermissionDenied: a person who is not a reviewer of its queue.
        DecisionError: no note, a note too long, ``until`` naive, not in the future or past
            :data:`MAX_DEFER`.
        ClaimConflictError / MovedError / AlreadyDecidedError / SupersededError / ExpiredError (409).
    """
    note = check_note(note, what="defer")
    now = timezone.now()
    if until.tzinfo is None:
        raise DecisionError("Give the new due time with its time zone (e.g. 2026-05-01T09:00:00Z).")
    if until <= now:
        raise DecisionError("Choose a new due time in the future.")
    if until > now + MAX_DEFER:
        raise DecisionError(f"A request can be deferred by at most {MAX_DEFER.days} days.")
    override = _may_override(interrupt, actor)
    with transaction.atomic():
        row = _locked(interrupt, actor, override, now)
        _update(row, now, due_at=until, deferred_until=until, expired_at=None, **UNCLAIMED)
        comment_write(interrupt=row, kind=CommentKind.DEFER, text=note, actor=actor)
        item_change_record(
            action="interrupt.defer",
            interrupt=row,
            changes=[(row.queue_id, "interrupt.deferred")],
            request=request,
            before={"due_at": row.due_at.isoformat() if row.due_at else None, "claimed_by": _owner(row, now)},
            after={"due_at": until.isoformat(), "claimed_by": None},
            detail={"note": note},
            **actor.audit,
        )
        pk = row.pk
        transaction.on_commit(lambda: schedule_expiry(pk, until), robust=True)
    return _reload(interrupt)


def interrupt_release(*, interrupt: Item, actor: Actor, note: str, request: HttpRequest | None = None) -> Item:
    """Return a claimed item to its queue with ``note`` (required): one's own claim, or (a queue
    manager, a client with ``override_claims``) anyone's.

    Raises:
        PermissionDenied: a person who is not a reviewer of its queue.
        DecisionError: no note, or a note too long.
        NotClaimedError: nobody holds its claim (409; e.g. released meanwhile).
        ClaimConflictError / MovedError / AlreadyDecidedError / SupersededError / ExpiredError (409).
    """
    note = check_note(note, what="return")
    now = timezone.now()
    override = _may_override(interrupt, actor)
    with transaction.atomic():
        row = _locked(interrupt, actor, override, now)
        owner = _owner(row, now)
        if owner is None:
            raise NotClaimedError(
                "Nobody holds this request's claim: there is nothing to return; nothing was recorded."
            )
        _update(row, now, **UNCLAIMED)
        comment_write(interrupt=row, kind=CommentKind.RELEASE, text=note, actor=actor)
        item_change_record(
            action="interrupt.release",
            interrupt=row,
            changes=[(row.queue_id, "interrupt.released")],
            request=request,
            before={"claimed_by": owner},
            after={"claimed_by": None},
            detail={"note": note},
            **actor.audit,
        )
    return _reload(interrupt)


def interrupt_escalate(
    *,
    interrupt: Item,
    actor: Actor,
    note: str,
    to_queue: str = "",
    request: HttpRequest | None = None,
) -> Item:
    """Move a pending item to ``to_queue`` (a slug among :func:`escalation_targets`; empty: the
    first of them, the workflow's ``escalate_to``), unclaimed, keeping its due time, with ``note``
    (required); the new queue's members are mailed as for a new item.

    Raises:
        PermissionDenied: a person who is not a reviewer of its queue.
        DecisionError: no note, a note too long, no queue to escalate to, or ``to_queue`` not
            among the allowed ones (``details["allowed"]`` lists their slugs).
        ClaimConflictError / MovedError / AlreadyDecidedError / SupersededError / ExpiredError (409).
    """
    note = check_note(note, what="escalation")
    now = timezone.now()
    override = _may_override(interrupt, actor)
    targets = escalation_targets(interrupt)
    if not targets:
        raise DecisionError("There is no queue this request can be escalated to.")
    target = targets[0] if not to_queue else next((q for q in targets if q.slug == to_queue), None)
    if target is None:
        error = DecisionError("This request cannot be escalated to that queue.")
        error.details = {"allowed": [q.slug for q in targets]}
        raise error
    with transaction.atomic():
        row = _locked(interrupt, actor, override, now)
        _update(row, now, queue=target, escalated_from=row.queue, **UNCLAIMED)
        comment_write(interrupt=row, kind=CommentKind.ESCALATE, text=note, actor=actor)
        item_change_record(
            action="interrupt.escalate",
            interrupt=row,
            changes=[(row.queue_id, "interrupt.escalated"), (target.pk, "interrupt.created")],
            request=request,
            before={"queue": row.queue.slug, "claimed_by": _owner(row, now)},
            after={"queue": target.slug},
            detail={"note": note},
            **actor.audit,
        )
        pk = row.pk
        transaction.on_commit(lambda: notify_enqueue(pk), robust=True)
    return _reload(interrupt)


def interrupt_cancel(
    *,
    interrupt: Item,
    actor: Actor,
    reason: str,
    whole_session: bool = False,
    request: HttpRequest | None = None,
) -> Item:
    """Cancel a pending item with ``reason`` (required): the workflow receives the cancelled
    answer (``engine.cancelled_answer(kind, reason)``), recorded as the decision ``cancelled`` by
    ``actor``, and its run is queued; with ``whole_session`` its session is cancelled instead
    (``session_cancel``: every pending interrupt cancelled, nothing runs again).

    Raises:
        PermissionDenied: a person who is not a manager of its queue.
        DecisionError: no reason, or a reason too long.
        AlreadyDecidedError: someone decided first (names who and when). ClaimConflictError (a
            client without ``override_claims``) / MovedError / SupersededError / ExpiredError (409).
        engine.SessionClosedError / engine.SessionBusyError: the session ended, or a run holds it
            (``whole_session``; 409).
    """
    reason = check_note(reason, what="cancel", field="reason")
    if actor.user is not None and not is_queue_manager(actor.user, interrupt.queue_id):
        raise PermissionDenied("Only a manager of this queue can cancel its requests.")
    override = True if actor.user is not None else actor.override_claims
    now = timezone.now()
    if whole_session:
        return _cancel_session(interrupt, actor, override, reason, now, request)
    payload = cancelled_answer(interrupt.kind, reason)
    decision = Decision(kind=CANCELLED, reason=reason, user_id=actor.user.pk if actor.user is not None else None)
    user_id = actor.user.pk if actor.user is not None else 0  # 0: no user holds a claim
    guard = InboxGuard(user_id=user_id, queue_id=interrupt.queue_id, override_claim=override)
    try:
        with transaction.atomic():
            row = _locked(interrupt, actor, override, now)
            interrupt_answer_sync(
                row.session,
                {row.interrupt_id: payload},
                decided_by=actor.label,
                decisions={row.interrupt_id: decision},
                guard=guard,
            )
            comment_write(interrupt=row, kind=CommentKind.CANCEL, text=reason, actor=actor)
            item_change_record(
                action="interrupt.cancel",
                interrupt=row,
                changes=[],
                request=request,
                after={"decision": CANCELLED, "response": payload},
                detail={"reason": reason, "queue": row.queue.slug},
                **actor.audit,
            )
            enqueue_run(row.session_id)
    except AlreadyDecidedError:
        fresh = _reload(interrupt)
        raise refusal_for(fresh) or AlreadyDecidedError(f"This request was already {fresh.status}.") from None
    return _reload(interrupt)


def _cancel_session(
    interrupt: Item, actor: Actor, override: bool, reason: str, now: dt.datetime, request: HttpRequest | None
) -> Item:
    with transaction.atomic():
        row = _locked(interrupt, actor, override, now)
        before = row.session.status
        pending = pending_item_ids(row.session_id)
        record = session_cancel_sync(row.session, reason=cancel_reason(actor.label, reason))
        session_items_cancelled(pending, by=actor.label, reason=reason)
        comment_write(interrupt=row, kind=CommentKind.CANCEL, text=reason, actor=actor, whole_session=True)
        item_change_record(
            action="session.cancel",
            interrupt=row,
            changes=[],
            request=request,
            before={"status": before},
            after={"status": str(record.status)},
            detail={"reason": reason, "session": row.session_id},
            **actor.audit,
        )
    return _reload(interrupt)


def pending_item_ids(session_id: str) -> list[int]:
    """The ids of the session's pending items (read before cancelling it, for
    :func:`session_items_cancelled`)."""
    return list(Item.objects.filter(session_id=session_id, status=ItemStatus.PENDING).values_list("pk", flat=True))


def session_items_cancelled(pks: list[int], *, by: str, reason: str) -> int:
    """Say on the items ``pks`` (pending when their session was cancelled) that someone cancelled
    it: decision ``cancelled``, ``decided_by_label`` ``by``, ``reason``; the outbox consumer leaves
    that decision when it marks them cancelled (before or after this, whichever commits first), so
    they show "cancelled by …" rather than "superseded". Returns how many were marked. Call it
    after ``session_cancel`` succeeded (the AG-UI door does for a ``cancelled`` resume)."""
    rows = Item.objects.filter(pk__in=pks, decision="", status__in=[ItemStatus.PENDING, ItemStatus.CANCELLED])
    return rows.update(decision=CANCELLED, decided_by_label=by[:200], reason=reason[:2000])


def _owner(row: Item, now: dt.datetime) -> str | None:
    return row.claimed_by.get_username() if row.claim_holder(now) and row.claimed_by else None
