"""The outbox relay (``workflow_sessions/outbox.py``): per-session order, a failing consumer
retried and given up, two relays racing on the same rows, and the consumers' idempotence."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import close_old_connections, transaction

from reviewconsole.inbox.items.claims import interrupt_claim
from reviewconsole.inbox.items.outbox_consumer import inbox_consume
from reviewconsole.inbox.models import Item, QueueChange
from reviewconsole.outbound.models import OutboundMessage, Subscription
from reviewconsole.outbound.outbox_consumer import outbound_consume
from reviewconsole.workflow_sessions import outbox
from reviewconsole.workflow_sessions.domain_events import InterruptAnswered, SessionStatusChanged, from_row
from reviewconsole.workflow_sessions.models import Interrupt as SessionInterrupt
from reviewconsole.workflow_sessions.models import OutboxEvent
from reviewconsole.workflow_sessions.services import interrupt_answer_sync


def _ended(session_id: str, n: int = 0) -> SessionStatusChanged:
    return SessionStatusChanged(session_id=session_id, workflow="email-review", status="completed", output=n)


def _write(session_id: str, *numbers: int) -> list[int]:
    with transaction.atomic():
        outbox.outbox_write(session_id, [_ended(session_id, n) for n in numbers])
    return list(OutboxEvent.objects.filter(session_id=session_id).order_by("id").values_list("id", flat=True))


@pytest.fixture
def seen():
    """A consumer recording ``(session_id, output)``; ``fail`` holds outputs that raise (once each, or always)."""
    calls: list[tuple[str, int]] = []
    fail: dict[int, int] = {}  # output -> failures left

    def record(event, outbox_id):
        if isinstance(event, SessionStatusChanged):
            if fail.get(event.output, 0) > 0:
                fail[event.output] -= 1
                raise RuntimeError("consumer down")
            calls.append((event.session_id, event.output))

    outbox.register_consumer("test-seen", record, order=50)
    yield calls, fail
    outbox.unregister_consumer("test-seen")


def test_rows_round_trip_as_their_events(db):
    [pk] = _write("s-1", 7)
    row = OutboxEvent.objects.get(pk=pk)
    assert (row.kind, from_row(row.kind, row.data)) == ("session.status_changed", _ended("s-1", 7))


def test_a_failing_row_holds_back_its_session_only_and_order_is_kept(db, seen):
    calls, fail = seen
    first, second = _write("a", 1, 2)
    _write("b", 3)
    fail[1] = 1
    assert outbox.relay() == 1  # b's row; a's first failed, its second waits behind it
    assert calls == [("b", 3)]
    row = OutboxEvent.objects.get(pk=first)
    assert (row.attempts, row.last_error, row.published_at) == (1, "RuntimeError", None)
    assert OutboxEvent.objects.get(pk=second).published_at is None
    assert outbox.relay() == 2
    assert calls == [("b", 3), ("a", 1), ("a", 2)]
    assert outbox.relay() == 0  # nothing twice


def test_a_row_that_keeps_failing_is_given_up_and_releases_its_session(db, seen):
    calls, fail = seen
    first, _ = _write("a", 1, 2)
    fail[1] = outbox.MAX_ATTEMPTS
    for _ in range(outbox.MAX_ATTEMPTS - 1):
        outbox.relay()
    assert calls == [] and OutboxEvent.objects.get(pk=first).failed_at is None
    assert outbox.relay() == 1  # the last try gives the first up; the second goes through
    given_up = OutboxEvent.objects.get(pk=first)
    assert given_up.attempts == outbox.MAX_ATTEMPTS and given_up.failed_at is not None
    assert calls == [("a", 2)]
    assert outbox.outbox_prune() == 0  # kept a week, and a given-up row is kept for the admin


def test_published_rows_older_than_a_week_are_pruned(db):
    import datetime as dt

    from django.utils import timezone

    [pk] = _write("s", 1)
    outbox.relay()
    assert outbox.outbox_prune(now=timezone.now() + outbox.KEEP + dt.timedelta(minutes=1)) == 1
    assert not OutboxEvent.objects.filter(pk=pk).exists()


@pytest.mark.django_db(transaction=True)
def test_two_relays_racing_publish_each_row_once(seen):
    calls, _ = seen
    for n in range(5):
        _write(f"s{n}", *(10 * n + k for k in range(4)))
    start = threading.Barrier(2)

    def run():
        start.wait()
        try:
            outbox.relay()
        finally:
            close_old_connections()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert Counter(calls) == Counter((f"s{n}", 10 * n + k) for n in range(5) for k in range(4))
    for n in range(5):
        assert [out for sid, out in calls if sid == f"s{n}"] == [10 * n + k for k in range(4)]
    assert not OutboxEvent.objects.filter(published_at__isnull=True).exists()


def _answered(item: Item) -> InterruptAnswered:
    return InterruptAnswered(
        session_id=item.session_id,
        interrupt_pk=item.session_interrupt_id,
        interrupt_id=item.interrupt_id,
        decision="approve",
        decided_by="p-reviewer",
        decided_by_id=None,
        reason="fine",
        edit_diff="",
        response={"result": "approve"},
        decided_at="2026-01-01T00:00:00+00:00",
    )


def test_the_inbox_consumer_applies_an_event_once(start_review):
    _, item = start_review()
    assert item.session_interrupt is not None and item.session_interrupt.interrupt_id == item.interrupt_id
    assert QueueChange.objects.filter(item=item, event="interrupt.created").count() == 1
    event = _answered(item)
    inbox_consume(event, 1)
    inbox_consume(event, 1)  # relayed again after a crash
    item.refresh_from_db()
    assert (item.status, item.decision, item.reason, item.decided_by_label) == (
        "resolved",
        "approve",
        "fine",
        "p-reviewer",
    )
    assert QueueChange.objects.filter(item=item, event="interrupt.resolved").count() == 1


def test_the_outbound_consumer_writes_one_message_per_outbox_event(start_review):
    _, item = start_review()
    Subscription.objects.create(name="crm", url="https://crm.example.com/events", events=["interrupt.resolved"])
    inbox_consume(_answered(item), 9)
    outbound_consume(_answered(item), 9)
    outbound_consume(_answered(item), 9)
    [message] = OutboundMessage.objects.filter(event_type="interrupt.resolved")
    assert message.outbox_id == 9
    data = message.payload["data"]
    assert (data["queue"], data["status"], data["decision"]) == (item.queue.slug, "resolved", "approve")


def test_a_claim_on_an_item_lagging_its_answer_is_refused(start_review, personas):
    from engine import AlreadyDecidedError

    session, item = start_review()
    # Answered, its commit hooks (the relay) not run: the item still says pending.
    interrupt_answer_sync(session, {item.interrupt_id: {"result": "approve"}}, decided_by="client:partner")
    assert SessionInterrupt.objects.get(item=item).status == "resolved"
    item.refresh_from_db()
    assert item.status == "pending"
    with pytest.raises(AlreadyDecidedError) as refused:
        interrupt_claim(interrupt=item, user=personas.reviewer)
    assert "already" in str(refused.value) and "client:partner" in str(refused.value)
    assert Item.objects.get(pk=item.pk).claimed_by is None


def test_the_relay_after_a_commit_publishes_an_earlier_waiting_row_first(db, seen, django_capture_on_commit_callbacks):
    calls, fail = seen
    fail[1] = 2  # the commit's relay, then its row-by-row fallback
    with django_capture_on_commit_callbacks(execute=True):
        _write("a", 1)  # its relay fails: the row waits
    assert calls == []
    with django_capture_on_commit_callbacks(execute=True):
        _write("a", 2)  # this commit's relay finds the earlier row first
    assert calls == [("a", 1), ("a", 2)]
    assert not OutboxEvent.objects.filter(published_at__isnull=True).exists()
