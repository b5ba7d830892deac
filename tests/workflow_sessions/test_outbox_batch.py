"""The relay after a commit (``outbox._relay_commit``): a commit's rows relayed together and in
order, a failure or an earlier unpublished row falling back to the row-by-row relay, and events
no consumer wants written already published. These need real commits (``on_commit`` runs)."""

from __future__ import annotations

import pytest
from django.db import transaction

from reviewconsole.outbound.models import Subscription
from reviewconsole.workflow_sessions import outbox
from reviewconsole.workflow_sessions.domain_events import SessionStatusChanged
from reviewconsole.workflow_sessions.models import OutboxEvent

pytestmark = pytest.mark.django_db(transaction=True)


def _ended(session_id: str, n: int, status: str = "completed") -> SessionStatusChanged:
    return SessionStatusChanged(session_id=session_id, workflow="email-review", status=status, output=n)


def _commit(session_id: str, *numbers: int) -> None:
    with transaction.atomic():
        outbox.outbox_write(session_id, [_ended(session_id, n) for n in numbers])


def _rows(session_id: str) -> list[OutboxEvent]:
    return list(OutboxEvent.objects.filter(session_id=session_id).order_by("id"))


@pytest.fixture
def seen():
    """A consumer recording the outputs it is given; ``fail`` holds outputs that raise (once each)."""
    calls: list[int] = []
    fail: dict[int, int] = {}

    def record(event, outbox_id):
        if fail.get(event.output, 0) > 0:
            fail[event.output] -= 1
            raise RuntimeError("consumer down")
        calls.append(event.output)

    outbox.register_consumer("test-batch", record, order=50)
    yield calls, fail
    outbox.unregister_consumer("test-batch")


def test_a_commits_rows_are_relayed_on_commit_in_order_each_once(seen):
    calls, _ = seen
    _commit("s", 1, 2, 3)
    assert calls == [1, 2, 3]
    assert all(row.published_at is not None and row.attempts == 0 for row in _rows("s"))
    assert outbox.relay() == 0  # nothing left for the sweep


def test_a_failing_consumer_in_a_batch_falls_back_to_row_by_row_and_loses_nothing(seen):
    calls, fail = seen
    fail[2] = 2
    _commit("s", 1, 2, 3)
    # The batch saw 1, failed on 2 and rolled back (at least once: 1 is handed over again);
    # row by row, 1 goes, 2 fails again and 3 waits behind it.
    assert calls == [1, 1]
    first, second, third = _rows("s")
    assert first.published_at is not None
    assert (second.attempts, second.published_at, third.published_at) == (1, None, None)
    assert outbox.relay() == 2
    assert calls == [1, 1, 2, 3]


def test_a_commit_behind_an_unpublished_row_of_its_session_waits_for_it(seen):
    calls, fail = seen
    fail[1] = 2  # the commit's batch, then the row-by-row relay it falls back to
    _commit("s", 1)
    assert calls == [] and _rows("s")[0].published_at is None
    _commit("s", 2)  # the earlier row goes first (its consumer is back), then this one
    assert calls == [1, 2]


def test_an_event_no_consumer_wants_is_written_published():
    _commit("s", 1)  # a session's end: the inbox has no work for it, and no subscription exists
    [row] = _rows("s")
    assert row.published_at == row.created_at and row.attempts == 0


def test_an_event_a_subscription_wants_is_relayed_to_outbound():
    from reviewconsole.outbound.models import OutboundMessage
    from reviewconsole.outbound.services import forget_subscriptions

    Subscription.objects.create(name="crm", url="https://crm.example.com/events", events=["session.completed"])
    try:
        _commit("s", 1)
        [row] = _rows("s")
        assert row.published_at is not None and row.published_at != row.created_at
        [message] = OutboundMessage.objects.filter(event_type="session.completed")
        assert message.outbox_id == row.pk
    finally:
        forget_subscriptions()  # the flush after this test removes the row, not the cached list
