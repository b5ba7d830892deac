"""The sweep's relay is fair: rows that keep failing (not yet given up) do not hide the rows behind
them, however many there are (``outbox.relay`` pages through its candidates by id)."""

from __future__ import annotations

import pytest
from django.db import transaction

from reviewconsole.workflow_sessions import outbox
from reviewconsole.workflow_sessions.domain_events import SessionStatusChanged
from reviewconsole.workflow_sessions.models import OutboxEvent

PAGE = 200
"""``relay``'s default ``limit``: the candidates it reads at a time."""


def _ended(session_id: str) -> SessionStatusChanged:
    return SessionStatusChanged(session_id=session_id, workflow="email-review", status="completed", output=0)


@pytest.fixture
def failing():
    """A consumer (for this test only) that raises for every session whose id starts with ``bad-``
    and records the others."""
    heard: list[str] = []

    def consume(event, outbox_id):
        if isinstance(event, SessionStatusChanged):
            if event.session_id.startswith("bad-"):
                raise RuntimeError("consumer down")
            heard.append(event.session_id)

    outbox.register_consumer("test-failing", consume, order=50)
    yield heard
    outbox.unregister_consumer("test-failing")


def test_more_failing_rows_than_a_page_ahead_of_a_good_one_do_not_starve_it(db, failing):
    with transaction.atomic():
        for n in range(PAGE + 5):  # each its session's first row: every one is a candidate
            outbox.outbox_write(f"bad-{n}", [_ended(f"bad-{n}")])
        outbox.outbox_write("good", [_ended("good")])
    good = OutboxEvent.objects.get(session_id="good")
    assert OutboxEvent.objects.filter(published_at__isnull=True, id__lt=good.pk).count() == PAGE + 5

    assert outbox.relay() == 1  # the sweep's relay
    assert failing == ["good"]
    good.refresh_from_db()
    assert good.published_at is not None
    bad = OutboxEvent.objects.filter(session_id__startswith="bad-")
    assert sorted(set(bad.values_list("attempts", flat=True))) == [1]  # each tried once, none given up yet
    assert not bad.filter(published_at__isnull=False).exists()


def test_a_row_behind_failing_rows_of_its_own_session_still_waits(db, failing):
    with transaction.atomic():
        for n in range(PAGE + 5):
            outbox.outbox_write(f"bad-{n}", [_ended(f"bad-{n}")])
        outbox.outbox_write("bad-0", [_ended("bad-0")])  # behind bad-0's failing first row
        outbox.outbox_write("good", [_ended("good")])
    assert outbox.relay() == 1
    assert failing == ["good"]
    later = OutboxEvent.objects.filter(session_id="bad-0").order_by("id").last()
    assert (later.attempts, later.published_at) == (0, None)  # per-session order holds
