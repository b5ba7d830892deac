"""Due times and expiry: escalation, timeouts with their documented payloads, runs once (H17)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.tasks.base import Task
from django.utils import timezone

from reviewconsole.audit.models import AuditEntry
from reviewconsole.demo import refund_approval
from reviewconsole.inbox.errors import ExpiredError
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.items.expiry import due_fields, expire_due_interrupts, interrupt_expire, timeout_payload
from reviewconsole.inbox.items.selectors import item_for
from reviewconsole.inbox.models import Item, QueueChange
from reviewconsole.inbox.tasks import schedule_expiry
from reviewconsole.workflow_sessions.models import Answer
from tests.conftest import end_message

NOW = dt.datetime(2030, 1, 1, 12, 0, tzinfo=dt.UTC)


def _after_due(item, seconds=1):
    return item.due_at + dt.timedelta(seconds=seconds)


@pytest.fixture
def expiry(settings):
    """Set ``EXPIRY`` for workflows: ``expiry({"vip-discount": {...}})``."""

    def configure(value):
        settings.REVIEWCONSOLE = {**settings.REVIEWCONSOLE, "EXPIRY": value}

    return configure


def test_the_interrupt_beats_the_setting_which_beats_the_workflow(expiry):
    assert due_fields("email-review", {}, NOW) == {
        "due_at": NOW + dt.timedelta(hours=4),
        "on_expiry": "escalate",
        "escalate_to": "support-leads",
    }
    expiry({"email-review": {"due_in_seconds": 60, "on_expiry": "timeout"}})
    assert due_fields("email-review", {}, NOW)["on_expiry"] == "timeout"
    assert due_fields("email-review", {}, NOW)["due_at"] == NOW + dt.timedelta(seconds=60)
    own = {"due_in_seconds": 5, "on_expiry": "escalate", "escalate_to": "finance"}
    assert due_fields("email-review", own, NOW) == {
        "due_at": NOW + dt.timedelta(seconds=5),
        "on_expiry": "escalate",
        "escalate_to": "finance",
    }


@pytest.mark.parametrize("metadata", [{"due_in_seconds": "soon"}, {"due_in_seconds": -1}, {"due_in_seconds": None}])
def test_a_bad_due_time_means_no_due_time(metadata):
    assert due_fields("incident-triage", metadata, NOW) == {"due_at": None, "on_expiry": "", "escalate_to": ""}


def test_an_unknown_on_expiry_is_ignored():
    assert due_fields("incident-triage", {"due_in_seconds": 5, "on_expiry": "explode"}, NOW)["on_expiry"] == ""


@pytest.mark.parametrize(
    ("kind", "payload"),
    [
        ("input", {"timeout": True}),
        ("confirmation", {"confirmed": False, "timeout": True}),
        ("long_running", {"status": "timeout"}),
    ],
)
def test_the_documented_timeout_payloads(kind, payload):
    assert timeout_payload(kind) == payload


def test_an_item_escalates_once_and_the_old_queue_gets_a_readable_409(start_review, personas, on_commit):
    _, item = start_review()
    assert (item.queue.slug, item.on_expiry, item.escalate_to) == ("support", "escalate", "support-leads")
    assert interrupt_expire(pk=item.pk, now=item.due_at - dt.timedelta(seconds=1)) == "not_due"
    with on_commit():
        assert interrupt_expire(pk=item.pk, now=_after_due(item)) == "escalated"
    assert interrupt_expire(pk=item.pk, now=_after_due(item, 2)) == "done"  # the task ran twice: once only
    item.refresh_from_db()
    assert (item.status, item.queue.slug, item.escalated_from.slug) == ("pending", "support-leads", "support")
    assert item.expired_at == _after_due(item)
    assert AuditEntry.objects.filter(action="interrupt.escalate", target_id=str(item.pk)).count() == 1
    events = set(QueueChange.objects.filter(item=item).values_list("queue__slug", "event"))
    assert {("support", "interrupt.escalated"), ("support-leads", "interrupt.created")} <= events

    seen = item_for(personas.reviewer, item.pk)  # still readable from the queue it left
    with pytest.raises(ExpiredError) as caught:
        interrupt_decide(interrupt=seen, user=personas.reviewer, action="approve")
    assert caught.value.message.startswith("This request expired at ")
    assert caught.value.message.endswith("and was escalated to Support Leads; nothing was recorded.")
    assert Answer.objects.count() == 0

    lead = personas.admin  # a member of every queue, the new one included
    with on_commit():
        decided = interrupt_decide(interrupt=item_for(lead, item.pk), user=lead, action="approve")
    decided.refresh_from_db()  # the outbox relay resolved the item when the decision committed
    assert decided.status == "resolved"


def test_a_decision_loses_to_an_escalation_after_its_permission_check(start_review, personas, monkeypatch):
    """The support reviewer's check passes, then the item escalates to support-leads, then the
    decision's UPDATE runs: the escalated branch of the guard ("decided in its new queue") must
    not let a reviewer of the old queue decide it."""
    from reviewconsole.inbox.items import decisions as services

    _, item = start_review()
    check = services._check_may_decide

    def check_then_escalate(interrupt, user):
        override = check(interrupt, user)
        assert interrupt_expire(pk=interrupt.pk, now=_after_due(interrupt)) == "escalated"
        return override

    monkeypatch.setattr(services, "_check_may_decide", check_then_escalate)
    with pytest.raises(ExpiredError) as caught:
        interrupt_decide(interrupt=item, user=personas.reviewer, action="approve")
    assert caught.value.message.endswith("and was escalated to Support Leads; nothing was recorded.")
    row = Item.objects.get(pk=item.pk)
    assert (row.status, row.queue.slug, Answer.objects.count()) == ("pending", "support-leads", 0)


def test_a_timeout_resumes_the_workflow_once(start_session, personas, on_commit):
    """H17: the item expires, the workflow goes on with the timeout, a late decision gets 409."""
    session, [item] = start_session("vip-discount", {"customer_id": "c123"})
    assert (item.on_expiry, round((item.due_at - item.created_at).total_seconds())) == ("timeout", 3600)
    with on_commit():
        assert interrupt_expire(pk=item.pk, now=_after_due(item)) == "timed_out"
    assert interrupt_expire(pk=item.pk, now=_after_due(item, 5)) == "done"
    item.refresh_from_db()
    session.refresh_from_db()
    assert (item.status, item.decision, item.decided_by_label) == ("resolved", "timeout", "system (expired)")
    assert item.response == {"timeout": True}
    assert session.status == "completed"
    assert end_message(session) == "Ada Lovelace (Verified VIP Member) gets 5% off (VIP declined)."
    assert Answer.objects.filter(session=session).count() == 1
    with pytest.raises(ExpiredError) as caught:
        interrupt_decide(interrupt=item, user=personas.admin, action="approve")
    assert caught.value.message.endswith(": the workflow went on with a timeout; nothing was recorded.")
    assert QueueChange.objects.filter(item=item, event="interrupt.expired").count() == 1


def test_a_decision_after_the_due_time_is_refused_before_the_task_runs(start_session, personas):
    _, [item] = start_session("vip-discount", {"customer_id": "c123"})
    Item.objects.filter(pk=item.pk).update(due_at=timezone.now() - dt.timedelta(seconds=1))
    item.refresh_from_db()
    with pytest.raises(ExpiredError):
        interrupt_decide(interrupt=item, user=personas.admin, action="approve")
    stale = Item.objects.get(pk=item.pk)
    stale.due_at = timezone.now() + dt.timedelta(hours=1)  # a page that still shows it due later
    with pytest.raises(ExpiredError):  # the database's guard refuses it all the same
        interrupt_decide(interrupt=stale, user=personas.admin, action="approve")
    assert (Item.objects.get(pk=item.pk).status, Answer.objects.count()) == ("pending", 0)


def test_a_tool_confirmation_times_out_as_declined(start_session, expiry, on_commit):
    expiry({"refund-approval": {"due_in_seconds": 30, "on_expiry": "timeout"}})
    submitted = len(refund_approval.submitted_refunds)
    session, [item] = start_session("refund-approval", {"order_id": "o-1", "amount": 20, "reason": "late"})
    assert item.kind == "confirmation"
    with on_commit():
        assert interrupt_expire(pk=item.pk, now=_after_due(item)) == "timed_out"
    item.refresh_from_db()
    session.refresh_from_db()
    assert item.response == {"confirmed": False, "timeout": True}
    assert len(refund_approval.submitted_refunds) == submitted
    assert session.status == "completed"


def test_a_long_running_approval_times_out_with_status_timeout(start_session, expiry, on_commit):
    expiry({"refund-approval": {"due_in_seconds": 30, "on_expiry": "timeout"}})
    session, [item] = start_session("refund-approval", {"order_id": "o-2", "amount": 500, "reason": "late"})
    assert item.kind == "long_running"
    with on_commit():
        interrupt_expire(pk=item.pk, now=_after_due(item))
    item.refresh_from_db()
    session.refresh_from_db()
    assert item.response == {"status": "timeout"}
    assert end_message(session) == "Your refund for order o-2 was not approved."


def test_a_form_that_cannot_take_a_timeout_escalates_to_triage(start_session, expiry, on_commit):
    expiry({"incident-triage": {"due_in_seconds": 30, "on_expiry": "timeout"}})
    _, [item] = start_session("incident-triage", {"title": "Checkout down"})
    with on_commit():
        assert interrupt_expire(pk=item.pk, now=_after_due(item)) == "escalated"
    item.refresh_from_db()
    assert (item.status, item.queue.slug) == ("pending", "triage")


def test_an_overdue_item_without_a_policy_is_marked_and_still_decidable(start_session, expiry, personas, on_commit):
    expiry({"incident-triage": {"due_in_seconds": 30}})
    _, [item] = start_session("incident-triage", {"title": "Checkout down"})
    assert interrupt_expire(pk=item.pk, now=_after_due(item)) == "marked"
    item.refresh_from_db()
    assert item.expired_at is not None and item.status == "pending"
    assert QueueChange.objects.filter(item=item, event="interrupt.expired").exists()


def test_the_sweep_expires_what_is_due(start_review, start_session, on_commit):
    _, email = start_review()
    _, [vip] = start_session("vip-discount", {"customer_id": "c123"})
    later = max(email.due_at, vip.due_at) + dt.timedelta(seconds=1)
    with on_commit():
        assert expire_due_interrupts(now=later) == {"escalated": 1, "timed_out": 1}
        assert expire_due_interrupts(now=later) == {}


def test_a_due_item_is_scheduled_on_a_backend_that_defers(start_review, monkeypatch):
    from django_tasks_db.backend import DatabaseBackend
    from django_tasks_db.models import DBTaskResult

    _, item = start_review()
    assert schedule_expiry(item.pk, item.due_at) is False  # the test suite's immediate backend
    backend = DatabaseBackend(alias="default", params={"QUEUES": ["default"]})
    monkeypatch.setattr(Task, "get_backend", lambda self: backend)
    assert schedule_expiry(item.pk, item.due_at) is True
    row = DBTaskResult.objects.get(task_path="reviewconsole.inbox.tasks.expire_interrupt")
    assert (row.args_kwargs["args"], row.run_after) == ([item.pk], item.due_at)


def test_an_item_reopened_by_a_checkpoint_restore_is_fresh(start_review, personas, on_commit):
    from reviewconsole.inbox.items.claims import interrupt_claim
    from reviewconsole.inbox.items.outbox_consumer import inbox_consume
    from reviewconsole.workflow_sessions.domain_events import InterruptOpened
    from reviewconsole.workflow_sessions.models import Interrupt as SessionInterrupt
    from reviewconsole.workflow_sessions.restore import _reopen
    from reviewconsole.workflow_sessions.store_rows import interrupt_asked

    session, item = start_review()
    interrupt_claim(interrupt=item, user=personas.reviewer)
    with on_commit():
        interrupt_expire(pk=item.pk, now=_after_due(item))  # escalated to support-leads, claim dropped
    Item.objects.filter(pk=item.pk).update(status="resolved", reason="old", claimed_by=personas.admin)
    SessionInterrupt.objects.filter(item=item).update(status="resolved", reason="old")
    later = timezone.now()
    asked = _reopen(session, item.interrupt_id, later)
    opened = InterruptOpened(session.id, asked.pk, session.workflow, session.title, interrupt_asked(asked), True, True)
    inbox_consume(opened, 1)
    inbox_consume(opened, 1)  # relayed again: still one item
    copy = Item.objects.get(session_interrupt=asked)
    assert (copy.status, copy.queue.slug, copy.claimed_by, copy.expired_at, copy.reason) == (
        "pending",
        "support",
        None,
        None,
        "",
    )
    assert round((copy.due_at - later).total_seconds()) == 4 * 3600


def test_the_recovery_loop_runs_the_inbox_sweep(start_session, monkeypatch, on_commit):
    from reviewconsole.inbox.items import expiry

    _, [vip] = start_session("vip-discount", {"customer_id": "c123"})
    Item.objects.filter(pk=vip.pk).update(due_at=timezone.now() - dt.timedelta(seconds=1))
    monkeypatch.setattr(expiry, "_last_prune", float("-inf"))
    with on_commit():
        assert expiry.inbox_sweep() == {"timed_out": 1, "pruned": 0}
        assert expiry.inbox_sweep() == {}  # pruned at most once an hour


def test_on_the_database_backend_an_items_tasks_commit_with_it_exactly_once(start_review, monkeypatch):
    """The expiry and the new-item mail are task rows written in the relay's transaction: a
    consumer failing after the inbox's rolls them back with the item, and the relay that then
    succeeds writes each once."""
    from django_tasks_db.backend import DatabaseBackend
    from django_tasks_db.models import DBTaskResult

    from reviewconsole.inbox import tasks
    from reviewconsole.inbox.models import Item
    from reviewconsole.workflow_sessions import outbox

    backend = DatabaseBackend(alias="default", params={"QUEUES": ["default"]})
    real = Task.get_backend
    ours = {tasks.notify_new_item.module_path, tasks.expire_interrupt.module_path}
    monkeypatch.setattr(Task, "get_backend", lambda self: backend if self.module_path in ours else real(self))
    seen: list[int] = []  # task rows in the relay's transaction when the failing consumer runs

    def fail_once(event, outbox_id):
        if not seen:
            seen.append(DBTaskResult.objects.count())
            raise RuntimeError("a later consumer failed")

    outbox.register_consumer("test-fail-once", fail_once, order=500)
    try:
        start_review()
    finally:
        outbox.unregister_consumer("test-fail-once")
    [item] = Item.objects.all()
    rows = DBTaskResult.objects.order_by("task_path").values_list("task_path", "args_kwargs", "run_after")
    assert [(path, args["args"]) for path, args, _ in rows] == [
        (tasks.expire_interrupt.module_path, [item.pk]),
        (tasks.notify_new_item.module_path, [item.pk]),
    ]
    assert rows[0][2] == item.due_at
    assert seen == [2]  # written beside the item, then rolled back with it: once in the end
