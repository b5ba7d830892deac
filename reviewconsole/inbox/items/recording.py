"""One call that records a change to an item: its audit entry and its queue change log rows.

Every reviewer action that changes an item (claims, take-overs, the lifecycle actions of
``lifecycle.py``) writes both in the action's transaction: the audit entry says who did what
(``audit.services.audit_record``), the ``QueueChange`` rows make open inboxes hear of it
(``live/changes.py``: published after commit). Call it last in the transaction (the change log
locks the queue rows).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest

from ...audit.services import audit_record
from ..live.changes import queue_changes_record
from ..models import Item

__all__ = ["item_change_record"]


def item_change_record(
    *,
    action: str,
    interrupt: Item,
    changes: Sequence[tuple[int, str]],
    user: AbstractBaseUser | None = None,
    actor: str | None = None,
    request: HttpRequest | None = None,
    before: Any = None,
    after: Any = None,
    detail: dict[str, Any] | None = None,
) -> None:
    """Audit ``action`` on ``interrupt`` and log ``changes`` (``(queue_id, event)`` pairs, e.g.
    ``(queue.pk, "interrupt.claimed")``) in the queues' change logs.

    ``user`` is the person acting, ``actor`` an API client's ``client:<name>`` (one of them, as
    ``audit_record`` takes them). Must run inside the action's transaction.
    """
    audit_record(
        action=action,
        user=user,
        actor=actor,
        target=interrupt,
        request=request,
        before=before,
        after=after,
        detail=detail,
    )
    queue_changes_record(changes=[(queue_id, event, interrupt.pk) for queue_id, event in changes])
