"""Claims: a reviewer says "I am on this one", so nobody else decides it meanwhile.

A claim lasts the queue's claim time (``Queue.claim_ttl``); an expired claim counts as none, so
nobody has to release it. While a claim is in force only its owner or a queue manager decides
the item. Managers may also take a claimed item over or reassign it to another reviewer or queue.

Every claim change is a conditional UPDATE on the state the caller saw, its queue included (the
races it guards: two reviewers pressing "Claim" at once, exactly one changes the row and the other
gets a 409 naming the owner; a claim racing a manager's move to a queue the claimer may not be
in, which gets the 409 ``moved``), audited, and logged in the queue's change log, all in one
transaction. A claim or take-over also requires the session's interrupt to be still unanswered
(the item may lag an answer by the outbox relay): an answered one is refused as decided
(``refusals.with_answer``).
"""

from __future__ import annotations

import datetime as dt

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q
from django.http import HttpRequest
from django.utils import timezone

from ..errors import DecisionError
from ..models import Item, ItemStatus, Queue
from .recording import item_change_record
from .refusals import claimed_conflict, moved_conflict, refusal_for
from .selectors import is_queue_manager, queues_for

__all__ = ["interrupt_claim", "interrupt_reassign", "interrupt_take_over", "interrupt_unclaim"]


UNANSWERED = Q(session_interrupt__isnull=True) | Q(session_interrupt__status=ItemStatus.PENDING)
"""The session's interrupt behind the item takes answers still (checked in the claim's UPDATE)."""


def _owner(row: Item) -> str | None:
    return row.claimed_by.get_username() if row.claim_holder() and row.claimed_by else None


def _record_claimed(
    action: str, interrupt: Item, user: AbstractBaseUser, request: HttpRequest | None, expires: dt.datetime
) -> None:
    """Audit a claim or take-over (who held it before, who now, until when) and log ``interrupt.claimed``."""
    item_change_record(
        action=action,
        interrupt=interrupt,
        changes=[(interrupt.queue_id, "interrupt.claimed")],
        user=user,
        request=request,
        before={"claimed_by": _owner(interrupt)},
        after={"claimed_by": user.get_username(), "until": expires.isoformat()},
    )


def _require_member(interrupt: Item, user: AbstractBaseUser) -> None:
    if not queues_for(user).filter(pk=interrupt.queue_id).exists():
        raise PermissionDenied("You are not a reviewer of this queue.")


def _require_manager(interrupt: Item, user: AbstractBaseUser) -> None:
    if not is_queue_manager(user, interrupt.queue_id):
        raise PermissionDenied("Only a manager of this queue can do that.")


def _reload(interrupt: Item) -> Item:
    return Item.objects.select_related("queue", "claimed_by", "session").get(pk=interrupt.pk)


def _refuse_after_race(interrupt: Item) -> Exception:
    row = _reload(interrupt)
    if row.queue_id != interrupt.queue_id:
        return moved_conflict(row)
    return refusal_for(row) or claimed_conflict(row)


def interrupt_claim(*, interrupt: Item, user: AbstractBaseUser, request: HttpRequest | None = None) -> Item:
    """Claim (or renew one's claim on) a pending item for the queue's claim time.

    Raises:
        PermissionDenied: not a reviewer of its queue.
        ClaimConflictError: someone else holds it (names who, since when, until when).
        AlreadyDecidedError / SupersededError / ExpiredError: the item takes no claims now.
    """
    _require_member(interrupt, user)
    now = timezone.now()
    free = Q(claimed_by__isnull=True) | Q(claim_expires_at__lte=now) | Q(claimed_by_id=user.pk)
    with transaction.atomic():
        refusal = refusal_for(interrupt, now)
        if refusal is not None:
            raise refusal
        expires = now + interrupt.queue.claim_ttl()
        changed = (
            Item.objects.filter(pk=interrupt.pk, status=ItemStatus.PENDING, queue_id=interrupt.queue_id)
            .filter(free, UNANSWERED)
            .update(claimed_by=user, claimed_at=now, claim_expires_at=expires)
        )
        if changed != 1:
            raise _refuse_after_race(interrupt)
        _record_claimed("interrupt.claim", interrupt, user, request, expires)
    return _reload(interrupt)


def interrupt_unclaim(*, interrupt: Item, user: AbstractBaseUser, request: HttpRequest | None = None) -> Item:
    """Release a claim: one's own, or anyone's for a queue manager. Releasing no claim is a no-op.

    Raises:
        PermissionDenied: not a reviewer of its queue.
        ClaimConflictError: someone else holds it and the user is not a manager.
    """
    _require_member(interrupt, user)
    manager = is_queue_manager(user, interrupt.queue_id)
    holder = interrupt.claim_holder()
    if holder is None:
        return interrupt
    if holder != user.pk and not manager:
        raise claimed_conflict(interrupt)
    with transaction.atomic():
        changed = Item.objects.filter(
            pk=interrupt.pk, status=ItemStatus.PENDING, claimed_by_id=holder, queue_id=interrupt.queue_id
        ).update(claimed_by=None, claimed_at=None, claim_expires_at=None)
        if changed != 1:
            raise _refuse_after_race(interrupt)
        item_change_record(
            action="interrupt.unclaim",
            interrupt=interrupt,
            changes=[(interrupt.queue_id, "interrupt.unclaimed")],
            user=user,
            request=request,
            before={"claimed_by": _owner(interrupt)},
            after={"claimed_by": None},
        )
    return _reload(interrupt)


def interrupt_take_over(*, interrupt: Item, user: AbstractBaseUser, request: HttpRequest | None = None) -> Item:
    """A queue manager takes a claimed item from its owner (audited with both names).

    The UPDATE is conditional on the owner the manager saw (``interrupt`` as loaded), so two
    managers taking over at once do not silently overwrite each other.

    Raises:
        PermissionDenied: not a manager of its queue.
        ClaimConflictError: the claim changed hands since the page was loaded.
    """
    _require_manager(interrupt, user)
    now = timezone.now()
    seen = interrupt.claim_holder(now)
    expires = now + interrupt.queue.claim_ttl()
    with transaction.atomic():
        refusal = refusal_for(interrupt, now)
        if refusal is not None:
            raise refusal
        rows = Item.objects.filter(UNANSWERED, pk=interrupt.pk, status=ItemStatus.PENDING, queue_id=interrupt.queue_id)
        rows = (
            rows.filter(claimed_by_id=seen, claim_expires_at__gt=now)
            if seen
            else rows.filter(Q(claimed_by__isnull=True) | Q(claim_expires_at__lte=now))
        )
        changed = rows.update(claimed_by=user, claimed_at=now, claim_expires_at=expires)
        if changed != 1:
            raise _refuse_after_race(interrupt)
        _record_claimed("interrupt.take_over", interrupt, user, request, expires)
    return _reload(interrupt)


def interrupt_reassign(
    *,
    interrupt: Item,
    user: AbstractBaseUser,
    to_user: AbstractBaseUser | None = None,
    to_queue: Queue | None = None,
    request: HttpRequest | None = None,
) -> Item:
    """A queue manager gives a pending item to another reviewer (a claim in their name) or moves
    it to another queue (unclaimed). Exactly one of ``to_user`` and ``to_queue``.

    Raises:
        PermissionDenied: not a manager of its queue.
        DecisionError: no target, both targets, or ``to_user`` is not a reviewer of the queue.
        AlreadyDecidedError / SupersededError / ExpiredError: the item is no longer pending.
    """
    _require_manager(interrupt, user)
    if (to_user is None) == (to_queue is None):
        raise DecisionError("Choose a reviewer or a queue to reassign to.")
    if to_user is not None and not queues_for(to_user).filter(pk=interrupt.queue_id).exists():
        raise DecisionError(f"{to_user.get_username()} is not a reviewer of {interrupt.queue.name}.")
    now = timezone.now()
    with transaction.atomic():
        refusal = refusal_for(interrupt, now)
        if refusal is not None:
            raise refusal
        rows = Item.objects.filter(pk=interrupt.pk, status=ItemStatus.PENDING, queue_id=interrupt.queue_id)
        if to_user is not None:
            changes = {"claimed_by": to_user, "claimed_at": now, "claim_expires_at": now + interrupt.queue.claim_ttl()}
            log = [(interrupt.queue_id, "interrupt.claimed")]
            after = {"claimed_by": to_user.get_username()}
        else:
            assert to_queue is not None
            changes = {"queue": to_queue, "claimed_by": None, "claimed_at": None, "claim_expires_at": None}
            log = [(interrupt.queue_id, "interrupt.reassigned"), (to_queue.pk, "interrupt.created")]
            after = {"queue": to_queue.slug}
        if rows.update(**changes) != 1:
            raise _refuse_after_race(interrupt)
        item_change_record(
            action="interrupt.reassign",
            interrupt=interrupt,
            changes=log,
            user=user,
            request=request,
            before={"claimed_by": _owner(interrupt), "queue": interrupt.queue.slug},
            after=after,
        )
    return _reload(interrupt)
