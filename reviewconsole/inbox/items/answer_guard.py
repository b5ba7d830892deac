"""The inbox's rule for a reviewer's decision, as the engine's :class:`engine.AnswerGuard`.

The ORM store calls :meth:`InboxGuard.check` inside the answer's transaction, before the
conditional UPDATE of the session's interrupt. It locks the item (``SELECT … FOR UPDATE``) and
refuses, with the 409s of ``refusals.py``, a decision on an item that since the decider's
permission check moved to another queue, is claimed by someone else (unless the decider may
override claims), is past a due time that expires it, or (``deferral_seen``) was deferred since
the decider loaded it (the decider reads the deferral's note first; ``lifecycle.py``). A claim, a
move, a defer or an expiry landing at the same moment waits for the lock, so it cannot overtake
the decision (nor the other way round).
Answers without a guard (systems resuming through the API) are not checked.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.utils import timezone

from ..models import Item, ItemStatus
from .refusals import claimed_conflict, deferred_conflict, expired_conflict, moved_conflict

__all__ = ["InboxGuard"]


_CHECKED = (
    "id",
    "queue",
    "escalated_from",
    "expired_at",
    "deferred_until",
    "claimed_by",
    "claimed_at",
    "claim_expires_at",
    "due_at",
    "on_expiry",
)
"""The item's fields :meth:`InboxGuard.check` reads."""


@dataclass(frozen=True, slots=True)
class InboxGuard:
    """``user_id`` decides; ``queue_id`` is the queue the permission check saw; ``override_claim``:
    a manager may decide an item someone else claimed; ``check_deferral``: refuse when the item's
    ``deferred_until`` is no longer ``deferral_seen`` (the value the decider loaded)."""

    user_id: int
    queue_id: int
    override_claim: bool = False
    check_deferral: bool = False
    deferral_seen: dt.datetime | None = None

    def check(self, session_id: str, interrupt_id: str) -> None:
        """Raise the 409 that refuses the decision, or return.

        Raises:
            MovedError: a manager moved the item to another queue since the permission check.
            ClaimConflictError: someone else holds the claim.
            ExpiredError: the due time passed and the item expires (escalates or times out), or it
                escalated away from the queue the decider saw.
            DeferredError: someone deferred it since the decider loaded it (``check_deferral``).
        """
        row = (
            Item.objects.select_for_update()
            .filter(session_id=session_id, interrupt_id=interrupt_id, status=ItemStatus.PENDING)
            .only(*_CHECKED)  # on every decision: not the payloads; a refusal's message reads what else it needs
            .order_by("-id")
            .first()
        )
        if row is None:
            return  # not pending: the store's conditional UPDATE says who decided it
        now = timezone.now()
        if row.queue_id != self.queue_id:
            if row.expired_at is not None and row.escalated_from_id == self.queue_id:
                raise expired_conflict(row)
            raise moved_conflict(row)
        if self.check_deferral and row.deferred_until != self.deferral_seen:
            raise deferred_conflict(row)
        holder = row.claim_holder(now)
        if holder and holder != self.user_id and not self.override_claim:
            raise claimed_conflict(row)
        if row.due_at is not None and row.due_at <= now and row.on_expiry and row.expired_at is None:
            raise expired_conflict(row)
