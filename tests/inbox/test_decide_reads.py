"""What a decision through the inbox reads: the item's session interrupt once, with the item, and
the item as stored after the decision in one query with what its answer shows (issue 18 target 4:
the decide view was 40 % of the web processes' CPU per session; it read the interrupt row three
times and the queue again)."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse


def _selects(captured: CaptureQueriesContext, table: str) -> int:
    return sum(1 for q in captured.captured_queries if q["sql"].startswith(f'SELECT "{table}"."id"'))


def test_a_decision_reads_the_interrupt_with_the_item(start_session, personas, client):
    _, [item] = start_session("email-review", {"complaint": "Order #5 arrived late."})
    client.force_login(personas.reviewer)
    url = reverse("inbox:decide", kwargs={"pk": item.pk})
    form = {"action": "revise", "feedback": "Shorter, please.", "interrupt_id": item.interrupt_id}
    with CaptureQueriesContext(connection) as captured:
        answer = client.post(url, form, HTTP_ACCEPT="application/json")
    assert answer.status_code == 200
    body = answer.json()
    assert body["receipt"]["decision"] == "revise"
    assert body["item"]["queue"] == item.queue.slug
    assert _selects(captured, "workflow_sessions_interrupt") == 0  # joined to the item's reads
    assert _selects(captured, "inbox_queue") == 0
    assert _selects(captured, "inbox_item") == 3  # item_for, the claim in the answer's transaction, after
