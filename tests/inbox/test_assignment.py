"""Which queue an interrupt goes to: its own, its workflow's, or triage, never none."""

from __future__ import annotations

from reviewconsole.inbox.items.assignment import queue_for
from reviewconsole.inbox.models import Queue


def test_the_workflows_queue(demo):
    assert queue_for("email-review", {}).slug == "support"


def test_a_queue_named_by_the_interrupt(demo):
    assert queue_for("email-review", {"queue": "finance"}).slug == "finance"


def test_a_missing_queue_falls_back_to_triage(demo):
    assert queue_for("email-review", {"queue": "nope"}).slug == "triage"
    assert queue_for("unknown-workflow", {}).slug == "triage"


def test_triage_is_created_when_missing(db):
    assert not Queue.objects.exists()
    queue = queue_for("unknown-workflow", {})
    assert (queue.slug, queue.group.name) == ("triage", "queue:triage")
