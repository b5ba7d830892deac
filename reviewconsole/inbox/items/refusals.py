"""Why an item refuses an action, in words a reviewer understands (all answered 409).

One place builds every conflict message, from the row as stored, so a reviewer reads the same
sentence whether the race was lost in a pre-check or in the database's conditional update.
"""

from __future__ import annotations

import copy
import datetime as dt
import re

from django.utils import timezone

from engine import AlreadyDecidedError

from ...preferences.times import absolute
from ..errors import CancelledError, ClaimConflictError, DeferredError, ExpiredError, MovedError, SupersededError
from ..models import CANCELLED, SESSION_FAILED, CommentKind, Item, ItemStatus, OnExpiry

__all__ = [
    "DONE",
    "cancelled_conflict",
    "claimed_conflict",
    "deferred_conflict",
    "expired_conflict",
    "moved_conflict",
    "newer_request",
    "refusal_for",
    "retried_request",
    "superseded_conflict",
    "with_answer",
]


def _utc(at: dt.datetime | None) -> str:
    """`` at <at>`` in the zone active for the request: the person's on a page, UTC for the API."""
    return f" at {absolute(at)}" if at else ""


def claimed_conflict(row: Item) -> ClaimConflictError:
    """The 409 for an item someone else has claimed: "… claimed by alice at T (until T2)…"."""
    owner = row.claimed_by.get_username() if row.claimed_by else "someone"
    until = row.claim_expires_at
    until_text = f" (until {absolute(until)})" if until else ""
    return ClaimConflictError(
        f"This request is claimed by {owner}{_utc(row.claimed_at)}{until_text}; "
        "only they or a queue manager can act on it.",
        claimed_by=owner,
        claimed_at=row.claimed_at.isoformat() if row.claimed_at else None,
        claim_expires_at=until.isoformat() if until else None,
    )


def expired_conflict(row: Item) -> ExpiredError:
    """The 409 for an item whose due time passed."""
    at = row.expired_at or row.due_at
    if row.on_expiry == OnExpiry.ESCALATE:
        where = f" and was escalated to {row.queue.name}" if row.escalated_from_id else " and is being escalated"
        message = f"This request expired{_utc(at)}{where}; nothing was recorded."
    else:
        message = f"This request expired{_utc(at)}: the workflow went on with a timeout; nothing was recorded."
    return ExpiredError(message, expired_at=(at or timezone.now()).isoformat())


def deferred_conflict(row: Item) -> DeferredError:
    """The 409 for a decision on an item someone deferred since the decider loaded it: names who,
    until when, and their note (the reviewer reads it before deciding again)."""
    note = row.comments.filter(kind=CommentKind.DEFER).order_by("-id").first()
    by = note.author_label if note is not None else "someone"
    until = row.deferred_until
    text = f": {note.text[:500]}" if note is not None else ""
    return DeferredError(
        f"This request was deferred by {by} until {_utc(until).removeprefix(' at ')} since you opened it{text}; "
        "nothing was recorded.",
        deferred_by=by,
        deferred_until=until.isoformat() if until else None,
    )


def moved_conflict(row: Item) -> MovedError:
    """The 409 for an item a manager moved to another queue while the caller was deciding it.

    It does not name the queue: the caller may not be one of its reviewers."""
    return MovedError("This request was moved to another queue; nothing was recorded.")


def cancelled_conflict(row: Item) -> CancelledError:
    """The 409 for a request someone cancelled (``decision == "cancelled"``: its client through the
    API or AG-UI, ``client:<name>``; a queue manager, the request or its whole session): who, when
    and the reason they gave."""
    who = row.decided_by_label
    by = f" by {who}" if who else ""
    if who.startswith("client:"):
        by = f" by its client ({who})"
    why = f": {row.reason[:500]}" if row.reason else ""
    return CancelledError(
        f"This request was cancelled{by}{_utc(row.decided_at)}{why}; nothing was recorded.",
        cancelled_by=who or None,
        cancelled_at=row.decided_at.isoformat() if row.decided_at else None,
        reason=row.reason or None,
    )


def _node(path: str) -> str:
    """A node path without its run counts: ``wf@1/review@2`` → ``wf/review``."""
    return re.sub(r"@[^/]*", "", path)


def newer_request(row: Item) -> Item | None:
    """The newest request that replaced ``row``: a later interrupt of the same session asked by
    the same function at the same node, in any run of it (the next draft of a review loop), or
    one of another session that declares it replaces ``row``'s (``metadata["supersedes_session"]``:
    an API review's revision), or None."""
    later = Item.objects.filter(session_id=row.session_id, function_name=row.function_name, pk__gt=row.pk)
    node = _node(row.node_path)
    found = next((r for r in later.order_by("-pk")[:50] if _node(r.node_path) == node), None)
    if found is None:
        revisions = Item.objects.filter(workflow=row.workflow, pk__gt=row.pk)
        found = revisions.filter(metadata__supersedes_session=row.session_id).order_by("-pk").first()
    return found


def retried_request(row: Item) -> Item | None:
    """The request a Retry asked again in place of ``row`` (cancelled by its session's failure): the
    newest later row of the session with the same interrupt id, or None (not retried yet)."""
    if row.status != ItemStatus.CANCELLED or row.decision != SESSION_FAILED:
        return None
    later = Item.objects.filter(session_id=row.session_id, interrupt_id=row.interrupt_id, pk__gt=row.pk)
    return later.order_by("-pk").first()


def failed_conflict(row: Item) -> SupersededError:
    """The 409 for a request its session's failure cancelled; names the one a Retry asked again."""
    newer = retried_request(row)
    links = {"newer_item": newer.pk, "newer_url": f"/inbox/items/{newer.pk}/"} if newer is not None else {}
    after = "; a Retry asked it again" if newer is not None else ""
    return SupersededError(
        f"The session failed{_utc(row.decided_at)} before this request was answered{after}; nothing was recorded.",
        superseded_at=row.decided_at.isoformat() if row.decided_at else None,
        **links,
    )


def superseded_conflict(row: Item, newer: Item) -> SupersededError:
    """The 409 for a request a newer one of its session replaced: names the newer one
    (``newer_item``: its inbox id, ``newer_url``, ``newer_interrupt_id``) and what became of this one."""
    if row.status == ItemStatus.RESOLVED:
        by = f" by {row.decided_by_label}" if row.decided_by_label else ""
        what = f" (it was {DONE.get(row.decision, 'decided')}{by}{_utc(row.decided_at)})"
    else:
        what = ""
    return SupersededError(
        f"This request is superseded: a newer request exists{what}; nothing was recorded.",
        superseded_at=row.decided_at.isoformat() if row.decided_at else None,
        newer_item=newer.pk,
        newer_url=f"/inbox/items/{newer.pk}/",
        newer_interrupt_id=newer.interrupt_id,
    )


DONE = {  # a decision as "This request was already <done>" says it
    "approve": "approved",
    "reject": "rejected",
    "revise": "answered with feedback",
    "answer": "answered",
    CANCELLED: "cancelled",
}


def with_answer(row: Item) -> Item:
    """``row`` as its session's interrupt stands: a pending item may lag an answer (or a
    cancellation) by the outbox relay; then a copy with the session interrupt's status, decision,
    decider, reason, answer and time, else ``row`` itself."""
    if not row.is_pending or row.session_interrupt_id is None:
        return row
    asked = row.session_interrupt
    if asked is None or asked.status == ItemStatus.PENDING:
        return row
    seen = copy.copy(row)
    seen.status, seen.decided_at = asked.status, asked.decided_at
    if asked.status == ItemStatus.RESOLVED or row.decision != CANCELLED:
        seen.decision, seen.decided_by_label, seen.reason = asked.decision, asked.decided_by_label, asked.reason
        seen.response = asked.response
    # Else its session was cancelled and the door that did it said who on the item already
    # (``lifecycle.session_items_cancelled``): the session's interrupt does not know.
    return seen


def refusal_for(row: Item, now: dt.datetime | None = None) -> Exception | None:
    """Why ``row`` (as stored, or as its session interrupt stands: :func:`with_answer`) takes no
    decision or claim now, or None if it may.

    ``AlreadyDecidedError`` (decided by a person or a system: names who, what and when),
    ``CancelledError`` (cancelled by its client or a queue manager: names who, when and why),
    ``SupersededError`` (a newer request of the session replaced it: names it; or the session moved
    on without it), ``ExpiredError`` (timed out, or due and about to expire).
    """
    row = with_answer(row)
    if row.status == ItemStatus.CANCELLED and row.decision == SESSION_FAILED:
        return failed_conflict(row)
    if row.status in (ItemStatus.CANCELLED, ItemStatus.RESOLVED) and row.decision != "timeout":
        newer = newer_request(row)
        if newer is not None:
            return superseded_conflict(row, newer)
    if row.decision == CANCELLED and not row.is_pending:  # the request (resolved) or its session (cancelled)
        return cancelled_conflict(row)
    if row.status == ItemStatus.CANCELLED:
        return SupersededError(
            f"This request was superseded{_utc(row.decided_at)}: the session moved on without it; "
            "nothing was recorded.",
            superseded_at=row.decided_at.isoformat() if row.decided_at else None,
        )
    if row.status == ItemStatus.RESOLVED:
        if row.decision == "timeout":
            return expired_conflict(row)
        done = DONE.get(row.decision, "decided")
        by = f" by {row.decided_by_label}" if row.decided_by_label else ""
        return AlreadyDecidedError(
            f"This request was already {done}{by}{_utc(row.decided_at)}.",
            interrupt_id=row.interrupt_id,
            decided_by=row.decided_by_label or None,
            decided_at=row.decided_at.isoformat() if row.decided_at else None,
            decision=row.decision,
        )
    now = now or timezone.now()
    if row.due_at is not None and row.due_at <= now and row.on_expiry and row.expired_at is None:
        return expired_conflict(row)
    return None
