"""The data migration ``inbox.0005_session_interrupts``: every existing item gets its session's
own interrupt row, with what was asked and its decision, and is linked to it."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("inbox", "0004_interrupt_session_interrupt"), ("workflow_sessions", "0005_interrupt_outboxevent")]
AFTER = [("inbox", "0005_session_interrupts")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_existing_items_get_their_session_interrupts():
    old = _migrate(BEFORE)
    Group = old.get_model("auth", "Group")
    User = old.get_model("auth", "User")
    Queue = old.get_model("inbox", "Queue")
    Item = old.get_model("inbox", "Interrupt")
    Session = old.get_model("workflow_sessions", "WorkflowSession")
    queue = Queue.objects.create(slug="support", name="Support", group=Group.objects.create(name="queue:support"))
    reviewer = User.objects.create(username="ann")
    session = Session.objects.create(id="s" * 32, workflow="email-review", user_id="test")
    asked_at = timezone.now() - dt.timedelta(days=3)
    decided = Item.objects.create(
        session=session,
        interrupt_id="wire-1",
        kind="input",
        node_path="email@1/review@1",
        message="Draft 1",
        payload={"draft": "Hello"},
        queue=queue,
        status="resolved",
        response={"result": "approve"},
        decision="approve",
        reason="fine",
        decided_by=reviewer,
        decided_by_label="ann",
        decided_at=asked_at + dt.timedelta(hours=1),
        claimed_by=reviewer,
    )
    Item.objects.filter(pk=decided.pk).update(created_at=asked_at)
    pending = Item.objects.create(session=session, interrupt_id="wire-2", kind="confirmation", queue=queue)

    new = _migrate(AFTER)
    Item = new.get_model("inbox", "Interrupt")
    SessionInterrupt = new.get_model("workflow_sessions", "Interrupt")
    first, second = (Item.objects.get(pk=pk) for pk in (decided.pk, pending.pk))
    a, b = (SessionInterrupt.objects.get(pk=i.session_interrupt_id) for i in (first, second))
    assert (a.session_id, a.interrupt_id, a.kind, a.node_path, a.message, a.payload) == (
        session.pk,
        "wire-1",
        "input",
        "email@1/review@1",
        "Draft 1",
        {"draft": "Hello"},
    )
    assert (a.status, a.response, a.decision, a.reason, a.decided_by_id, a.decided_by_label) == (
        "resolved",
        {"result": "approve"},
        "approve",
        "fine",
        reviewer.pk,
        "ann",
    )
    assert a.created_at == asked_at and a.decided_at == decided.decided_at
    assert (b.interrupt_id, b.kind, b.status) == ("wire-2", "confirmation", "pending")
    assert SessionInterrupt.objects.count() == 2

    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())  # back to the latest schema
