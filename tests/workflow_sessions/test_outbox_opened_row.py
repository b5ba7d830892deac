"""An ``interrupt.opened`` outbox row holds no copy of what was asked: a relay of the row reads it
from the session's ``Interrupt`` row, and consumers get the event the commit handed them."""

from __future__ import annotations

import pytest

from reviewconsole.workflow_sessions import outbox
from reviewconsole.workflow_sessions.domain_events import InterruptOpened
from reviewconsole.workflow_sessions.models import OutboxEvent


@pytest.fixture
def opened():
    """A consumer recording every ``InterruptOpened`` it is handed."""
    calls: list[InterruptOpened] = []

    def record(event, outbox_id):
        if isinstance(event, InterruptOpened):
            calls.append(event)

    outbox.register_consumer("test-opened", record, order=50)
    yield calls
    outbox.unregister_consumer("test-opened")


def _relay_again(row: OutboxEvent) -> int:
    OutboxEvent.objects.filter(pk=row.pk).update(published_at=None)
    return outbox.relay(session_id=row.session_id)


def test_the_row_refers_to_the_interrupt_and_a_relay_of_it_gives_the_same_event(start_review, opened):
    session, item = start_review()
    [on_commit] = opened
    row = OutboxEvent.objects.get(session_id=session.id, kind=InterruptOpened.KIND)
    assert "record" not in row.data and row.data["interrupt_pk"] == item.session_interrupt_id
    assert on_commit.record["message"] == item.message and on_commit.record["interrupt_id"] == item.interrupt_id
    assert outbox.row_event(row.kind, row.data) == on_commit
    assert _relay_again(row) == 1
    assert opened == [on_commit, on_commit]  # the sweep's relay hands consumers the same event


def test_a_row_written_with_its_record_relays_as_it_is(start_review, opened):
    session, _ = start_review()
    [on_commit] = opened
    row = OutboxEvent.objects.get(session_id=session.id, kind=InterruptOpened.KIND)
    old = {**row.data, "record": {**on_commit.record, "message": "as the row said"}}
    OutboxEvent.objects.filter(pk=row.pk).update(data=old)
    assert _relay_again(row) == 1
    assert opened[1].record == {**on_commit.record, "message": "as the row said"}
