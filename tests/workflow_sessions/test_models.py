"""One ``SessionStatus``: the session model's status choices are the engine's statuses."""

from __future__ import annotations

import pytest

from engine import SessionStatus
from reviewconsole.workflow_sessions import models
from reviewconsole.workflow_sessions.models import SESSION_STATUS_LABELS, WorkflowSession


def test_the_status_choices_are_the_engines_statuses_with_a_label_each():
    choices = WorkflowSession._meta.get_field("status").choices
    assert [value for value, _ in choices] == [s.value for s in SessionStatus]
    assert all(type(value) is str for value, _ in choices)  # stored and migrated as plain strings
    assert dict(choices)["waiting"] == "Waiting for input"
    assert set(SESSION_STATUS_LABELS) == set(SessionStatus)
    assert models.SessionStatus is SessionStatus  # no second definition


@pytest.mark.django_db
def test_a_stored_status_reads_back_as_the_engines_value():
    session = WorkflowSession.objects.create(workflow="email_review", user_id="test")
    session.refresh_from_db()
    assert session.status == SessionStatus.NEW
    assert session.get_status_display() == "New"
    WorkflowSession.objects.filter(pk=session.pk).update(status=SessionStatus.FAILED)
    assert WorkflowSession.objects.filter(status__in=SessionStatus.CLOSED).get().get_status_display() == "Failed"
