"""Recovery: sessions with work and no live run are scheduled once; live or idle ones are left alone."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from reviewconsole.demo import probes
from reviewconsole.workflow_sessions import runners
from reviewconsole.workflow_sessions.models import Answer, WorkflowSession
from reviewconsole.workflow_sessions.recovery import recover, sessions_to_recover
from reviewconsole.workflows import registry

LONG_AGO = dt.timedelta(minutes=10)


@pytest.fixture
def probe(monkeypatch):
    """The probe workflow registered (version 1), runners rebuilt around it."""
    monkeypatch.setitem(registry.current().specs, "probe", probes.probe_spec("1"))
    runners._runner.cache_clear()
    yield
    runners._runner.cache_clear()


def _session(status: str, *, owner: str = "", expires: dt.timedelta | None = None, age=LONG_AGO) -> WorkflowSession:
    now = timezone.now()
    row = WorkflowSession.objects.create(workflow="email-review", user_id="t", status=status)
    WorkflowSession.objects.filter(pk=row.pk).update(
        lease_owner=owner, lease_expires=now + expires if expires is not None else None, updated_at=now - age
    )
    return row


def _ids():
    return {r["id"] for r in sessions_to_recover()}


def test_it_finds_a_running_session_whose_holder_died(db):
    dead = _session("running", owner="worker-1:abc", expires=dt.timedelta(seconds=-1), age=dt.timedelta(0))
    alive = _session("running", owner="worker-2:def", expires=dt.timedelta(seconds=30))
    assert _ids() == {dead.pk}
    assert alive.pk not in _ids()


def test_it_finds_sessions_that_lost_their_task_after_the_grace_period(db):
    lost = _session("running")
    fresh = _session("running", age=dt.timedelta(0))  # its task is probably still queued
    waiting = _session("waiting")
    answered = _session("waiting")
    Answer.objects.create(session=answered, interrupt_id="x", value={"result": "approve"})
    done = _session("completed")
    assert _ids() == {lost.pk, answered.pk}
    assert not {fresh.pk, waiting.pk, done.pk} & _ids()


def test_each_session_is_scheduled_once_per_grace_period(db, django_capture_on_commit_callbacks):
    dead = _session("running", owner="worker-1:abc", expires=dt.timedelta(seconds=-1))
    with django_capture_on_commit_callbacks() as callbacks:
        assert recover() == [dead.pk]
        assert recover() == []  # another worker sweeping right after finds it scheduled
    assert len(callbacks) == 1
    dead.refresh_from_db()
    assert dead.lease_owner == ""  # free: the scheduled run takes it at once
    assert dead.lease_expires > timezone.now()


def test_a_killed_run_is_completed_from_its_checkpoint(db, probe, on_commit, tmp_path, monkeypatch):
    log = tmp_path / "exec.log"
    monkeypatch.setenv("REVIEWCONSOLE_EXEC_LOG", str(log))
    from reviewconsole.workflow_sessions.services import session_start

    # Started but never run: as if the worker that claimed its task died before the first commit.
    session = session_start(workflow="probe", data={"label": "a", "ask": False}, user_id="t")
    WorkflowSession.objects.filter(pk=session.pk).update(
        lease_owner="dead-worker", lease_expires=timezone.now() - dt.timedelta(seconds=1)
    )
    with on_commit():
        assert recover() == [session.pk]
    session.refresh_from_db()
    assert session.status == "completed"
    assert [line.split()[1] for line in log.read_text().splitlines()] == ["intake", "work", "review", "finish"]


def test_it_finds_a_session_stored_waiting_on_interrupts_none_of_which_is_pending(db):
    """Issue 16: such a session (stored before the store refused it) gets a run, which re-derives
    its waiting point from the checkpoint; one awaiting a user message, or with a checkpoint that
    waits on nothing, is left alone."""
    from django.contrib.auth.models import Group

    from reviewconsole.inbox.models import Item, Queue
    from tests.inbox.factories import session_interrupts

    waits_on = {"format": 1, "root": {"status": "waiting", "run": "1", "interrupts": {"ok": "ok"}}}
    stuck = _session("waiting")
    talking = _session("waiting")
    asking = _session("waiting")
    WorkflowSession.objects.filter(pk__in=[stuck.pk, asking.pk]).update(checkpoint=waits_on)
    WorkflowSession.objects.filter(pk=talking.pk).update(
        checkpoint={"format": 1, "root": {**waits_on["root"], "awaiting_message": True}}
    )
    queue = Queue.objects.create(slug="q", name="Q", group=Group.objects.create(name="reviewers"))
    item = Item(session=asking, interrupt_id="ok", kind="input", queue=queue)
    session_interrupts([item])
    item.save()
    found = _ids()
    assert stuck.pk in found
    assert not {talking.pk, asking.pk} & found
