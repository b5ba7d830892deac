"""``run_session``: runs what a session has to do, and nothing when it has nothing to do."""

from __future__ import annotations

from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.workflow_sessions.models import Event
from reviewconsole.workflow_sessions.tasks import run_session


def test_a_waiting_session_without_answers_does_not_run_again(start_review):
    session, _ = start_review()
    events = Event.objects.filter(session=session).count()
    assert run_session.call(session.id) == "waiting"
    session.refresh_from_db()
    assert session.status == "waiting"
    assert Event.objects.filter(session=session).count() == events


def test_a_completed_session_does_not_run_again(start_review, manager, on_commit):
    session, interrupt = start_review()
    with on_commit():
        interrupt_decide(interrupt=interrupt, user=manager, action="approve")
    events = Event.objects.filter(session=session).count()
    assert run_session.call(session.id) == "completed"
    assert Event.objects.filter(session=session).count() == events
    assert Event.objects.filter(session=session, node_path__endswith="/send_email@1").count() == 1
