"""Input arriving while a session of its key is open: ``WorkflowSpec.on_arrival`` (reject, queue,
supersede) in the session service (``workflow_sessions/arrivals.py``), each outcome audited."""

from __future__ import annotations

import dataclasses
import threading

import pytest
from django.db import connections

from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.errors import SupersededError
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.arrivals import SessionWaitingError, session_arrive
from reviewconsole.workflow_sessions.models import Arrival, WorkflowSession
from reviewconsole.workflow_sessions.services import session_cancel
from reviewconsole.workflows import registry

VIP = {"customer_id": "c123"}


def with_policy(monkeypatch, policy, workflow="vip-discount"):
    specs = registry.current().specs
    monkeypatch.setitem(specs, workflow, dataclasses.replace(specs[workflow], on_arrival=policy))


def arrive(data=VIP, key="ticket-1"):
    return session_arrive(workflow="vip-discount", data=data, user_id="webhook:vip", correlation_key=key)


def pending_item(session):
    return Item.objects.get(session=session, status="pending")


def outcomes():
    return [e.detail["outcome"] for e in AuditEntry.objects.filter(action="session.arrival").order_by("id")]


def test_without_a_key_every_input_starts_a_session(demo, on_commit):
    with on_commit():
        first, second = arrive(key=""), arrive(key="")
    assert (first.outcome, second.outcome) == ("started", "started")
    assert first.session.id != second.session.id and WorkflowSession.objects.count() == 2


def test_reject_refuses_input_for_an_open_session_naming_it_and_its_interrupt(demo, on_commit):
    with on_commit():
        first = arrive()
    item = pending_item(first.session)
    with pytest.raises(SessionWaitingError) as caught, on_commit():
        arrive()
    assert caught.value.code == "session_waiting"
    assert caught.value.details == {
        "session_id": first.session.id,
        "pending": [item.interrupt_id],
        "correlation_key": "ticket-1",
    }
    assert first.session.id in caught.value.message and item.interrupt_id in caught.value.message
    assert WorkflowSession.objects.count() == 1 and not Arrival.objects.exists()
    with on_commit():  # another key is another thread
        assert arrive(key="ticket-2").outcome == "started"


def test_queue_keeps_each_input_and_starts_them_in_order_once_the_session_ends(demo, monkeypatch, personas, on_commit):
    with_policy(monkeypatch, "queue")
    with on_commit():
        first = arrive()
        second, third = arrive({"customer_id": "c123", "message": "2"}), arrive({"customer_id": "c123", "message": "3"})
    assert (second.outcome, third.outcome) == ("queued", "queued")
    assert second.session.id == first.session.id and WorkflowSession.objects.count() == 1
    assert [a.data.get("message") for a in Arrival.objects.all()] == ["2", "3"]

    with on_commit():
        interrupt_decide(interrupt=pending_item(first.session), user=personas.admin, action="approve")
    first.session.refresh_from_db()
    assert first.session.status == "completed"
    started = Arrival.objects.get(pk=second.arrival.pk).started_session
    assert started is not None and started.correlation_key == "ticket-1"
    assert Arrival.objects.get(pk=third.arrival.pk).status == "queued"  # behind the session just started

    with on_commit():
        interrupt_decide(interrupt=pending_item(started), user=personas.admin, action="reject", reason="no")
    last = Arrival.objects.get(pk=third.arrival.pk)
    assert last.status == "started" and last.started_session.status == "waiting"
    assert WorkflowSession.objects.filter(correlation_key="ticket-1").count() == 3
    assert outcomes() == ["queued", "queued", "started", "started"]


def test_input_queued_behind_a_session_that_ended_unreleased_goes_before_newer_input(demo, monkeypatch, on_commit):
    with_policy(monkeypatch, "queue")
    with on_commit():
        first = arrive()
        older = arrive({"customer_id": "c123", "message": "older"})
    WorkflowSession.objects.filter(pk=first.session.id).update(status="completed")  # its release never ran
    with on_commit():
        newer = arrive({"customer_id": "c123", "message": "newer"})
    started = Arrival.objects.get(pk=older.arrival.pk)
    assert started.status == "started" and newer.outcome == "queued"
    assert newer.session.id == started.started_session_id
    assert Arrival.objects.get(pk=newer.arrival.pk).status == "queued"


def test_queued_input_starts_when_the_waiting_session_is_cancelled(demo, monkeypatch, on_commit):
    with_policy(monkeypatch, "queue")
    with on_commit():
        first = arrive()
        queued = arrive()
    from asgiref.sync import async_to_sync

    with on_commit():
        async_to_sync(session_cancel)(first.session.id, reason="manager")
    arrival = Arrival.objects.get(pk=queued.arrival.pk)
    assert arrival.status == "started" and arrival.started_session.status == "waiting"


def test_supersede_cancels_the_open_session_and_its_item_cannot_be_decided(
    demo, monkeypatch, personas, on_commit, client
):
    with_policy(monkeypatch, "supersede")
    with on_commit():
        first = arrive()
    old = pending_item(first.session)
    with on_commit():
        newer = arrive({"customer_id": "c123", "message": "newer"})
    assert newer.outcome == "superseded" and newer.superseded == [first.session.id]
    first.session.refresh_from_db()
    old.refresh_from_db()
    assert first.session.status == "cancelled" and old.display_status == "superseded"
    assert newer.session.metadata["supersedes_session"] == first.session.id
    assert pending_item(newer.session).pk != old.pk
    with pytest.raises(SupersededError):
        interrupt_decide(interrupt=old, user=personas.admin, action="approve")
    client.force_login(personas.admin)
    response = client.post(
        f"/inbox/items/{old.pk}/decide/", {"action": "approve"}, headers={"Accept": "application/json"}
    )
    assert response.status_code == 409 and response.json()["error"]["code"] == "superseded"
    old.refresh_from_db()
    assert old.decision != "approve"
    assert outcomes() == ["superseded"]


@pytest.mark.django_db(transaction=True)
def test_two_inputs_arriving_at_once_are_both_queued_in_order(demo_tx, monkeypatch, personas):
    with_policy(monkeypatch, "queue")
    first = arrive()
    barrier = threading.Barrier(2)
    results, errors = {}, []

    def send(n):
        try:
            barrier.wait()
            results[n] = arrive({"customer_id": "c123", "message": str(n)})
        except Exception as exc:  # reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=send, args=(n,)) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and {r.outcome for r in results.values()} == {"queued"}
    kept = list(Arrival.objects.order_by("id"))
    assert len(kept) == 2 and {a.data["message"] for a in kept} == {"1", "2"}
    interrupt_decide(interrupt=pending_item(first.session), user=personas.admin, action="approve")
    assert [a.status for a in Arrival.objects.order_by("id")] == ["started", "queued"]  # the older one first


def test_supersede_keeps_a_decision_not_yet_applied(demo, monkeypatch, personas, on_commit):
    """Found by this session's attack: an approval stored but not yet applied by its run was
    thrown away when newer input superseded the session. Now the newer input is refused with a
    retryable 409 and the approval goes on."""
    from engine import SessionBusyError
    from reviewconsole.workflow_sessions import outbox
    from reviewconsole.workflow_sessions.models import Answer

    with_policy(monkeypatch, "supersede")
    with on_commit():
        first = arrive()
    interrupt_decide(interrupt=pending_item(first.session), user=personas.admin, action="approve")  # run not yet run
    outbox.relay(session_id=first.session.id)
    assert Answer.objects.filter(session=first.session, applied_at__isnull=True).exists()
    with pytest.raises(SessionBusyError):
        arrive({"customer_id": "c123", "message": "newer"})
    first.session.refresh_from_db()
    assert first.session.status != "cancelled"
    assert WorkflowSession.objects.filter(correlation_key="ticket-1").count() == 1


def test_the_recovery_sweep_releases_input_a_lost_release_left_queued(demo, monkeypatch, personas, on_commit):
    """Found by this session's attack: when the process died between a run's end and its release,
    queued input waited until more input of the key arrived. The sweep releases it."""
    from reviewconsole.workflow_sessions import tasks
    from reviewconsole.workflow_sessions.arrivals import release_stranded

    with_policy(monkeypatch, "queue")
    with on_commit():
        first = arrive()
        queued = arrive({"customer_id": "c123", "message": "2"})
    monkeypatch.setattr(tasks, "_release", lambda session_id: None)  # the process died here
    with on_commit():
        interrupt_decide(interrupt=pending_item(first.session), user=personas.admin, action="approve")
    first.session.refresh_from_db()
    assert first.session.status == "completed"
    assert Arrival.objects.get(pk=queued.arrival.pk).status == "queued"
    with on_commit():
        assert release_stranded() == 1
    assert Arrival.objects.get(pk=queued.arrival.pk).status == "started"
