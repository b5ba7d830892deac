"""The demo's first requests: one of each kind waiting in the inbox when the console first starts.

``manage.py demo --seed`` (``./run`` passes it) starts one session of each demo workflow with the
README's example input (the "Send a webhook" table): an email draft to review (``email-review``),
a VIP discount to confirm (``vip-discount``), a refund's approval (``refund-approval``, $250: a
person decides) and a triage form (``incident-triage``). It does so only while the database holds
no session at all, so it runs on the first start and never again (a restart, or a database people
have used, gets nothing new). Each start goes through the session service like any door's, is
audited as ``session.start`` by ``demo`` and runs on the task worker (``serve``'s): the requests
appear in the inbox within a second or two of the console starting.
"""

from __future__ import annotations

from typing import Any

from ..audit.services import audit_record
from ..workflow_sessions.models import WorkflowSession
from ..workflow_sessions.services import session_start
from ..workflows import UnknownWorkflowError, get

__all__ = ["SEEDS", "SEED_USER_ID", "seed_requests"]

SEED_USER_ID = "demo:seed"
"""The ``user_id`` of the sessions the seed starts (who started them, as the admin shows)."""

SEEDS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("email-review", {"complaint": "My phone battery drains too fast"}),
    ("vip-discount", {"customer_id": "c123"}),
    ("refund-approval", {"order_id": "A-1001", "amount": 250, "reason": "Arrived broken"}),
    ("incident-triage", {"title": "Checkout down", "details": "502 errors since 14:05"}),
)
"""``(workflow, input)`` per request kind, the README's examples."""


def seed_requests() -> list[WorkflowSession]:
    """Start one session of each of :data:`SEEDS` whose workflow is registered, when no session
    exists yet; returns those started (none on any later call). Call it inside a transaction: the
    runs are queued when it commits."""
    if WorkflowSession.objects.exists():
        return []
    started = []
    for workflow, data in SEEDS:
        try:
            get(workflow)
        except UnknownWorkflowError:  # REVIEWCONSOLE_WORKFLOWS without the demo
            continue
        session = session_start(workflow=workflow, data=data, user_id=SEED_USER_ID)
        audit_record(
            action="session.start", actor="demo", target=session, detail={"workflow": workflow, "door": "seed"}
        )
        started.append(session)
    return started
