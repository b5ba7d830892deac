"""Simultaneous decisions on one interrupt: one is stored and resumes once, the others conflict.

Real threads on the real (SQLite) database, committed for real (``transaction=True``), so each
thread has its own connection and the race is decided by the database, not by the test.
"""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.tasks.signals import task_enqueued
from django.test import Client

from engine import AlreadyDecidedError
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer, Event
from reviewconsole.workflow_sessions.services import session_start
from tests.conftest import COMPLAINT, end_message

pytestmark = pytest.mark.django_db(transaction=True)

DEADLINE = 30  # seconds a thread may take before the test gives up on it


def _reviewers(count):
    support = Group.objects.get(name="queue:support")
    users = []
    for n in range(count):
        user = User.objects.create_user(f"reviewer{n}", password="x")
        user.groups.add(support)
        users.append(user)
    return users


def _waiting_review():
    session = session_start(workflow="email-review", data={"complaint": COMPLAINT}, user_id="test")
    return session, Item.objects.get(session=session, status="pending")


def _run_at_once(targets):
    """Run each callable on its own thread, released together; return what each returned or raised."""
    barrier = threading.Barrier(len(targets))
    results = [None] * len(targets)

    def run(n, target):
        try:
            barrier.wait(timeout=DEADLINE)
            results[n] = target()
        except BaseException as exc:
            results[n] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(n, t)) for n, t in enumerate(targets)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE)
        assert not thread.is_alive(), "a decision did not finish in time"
    return results


@pytest.fixture
def enqueued():
    """Session ids of the runs (``run_session`` tasks) enqueued while the test runs."""
    ids: list[str] = []

    def record(sender, task_result, **kwargs):
        if task_result.task.name == "run_session":
            ids.extend(task_result.args)

    task_enqueued.connect(record, weak=False)
    yield ids
    task_enqueued.disconnect(record)


def test_two_simultaneous_decisions_store_one_and_resume_once(demo_tx, enqueued):
    first, second = _reviewers(2)
    session, interrupt = _waiting_review()
    enqueued.clear()

    results = _run_at_once(
        [
            lambda: interrupt_decide(interrupt=Item.objects.get(pk=interrupt.pk), user=first, action="approve"),
            lambda: interrupt_decide(
                interrupt=Item.objects.get(pk=interrupt.pk), user=second, action="reject", reason="no"
            ),
        ]
    )

    winners = [r for r in results if isinstance(r, Item)]
    losers = [r for r in results if isinstance(r, AlreadyDecidedError)]
    assert (len(winners), len(losers)) == (1, 1), results
    interrupt.refresh_from_db()
    session.refresh_from_db()
    assert losers[0].details["decided_by"] == interrupt.decided_by_label
    done = {"approve": "approved", "reject": "rejected"}[interrupt.decision]
    assert losers[0].message.startswith(f"This request was already {done} by {interrupt.decided_by_label} at ")
    assert Answer.objects.filter(session=session, interrupt_id=interrupt.interrupt_id).count() == 1
    responses = [
        part
        for data in Event.objects.filter(session=session).values_list("data", flat=True)
        for part in data.get("content", {}).get("parts", [])
        if part.get("functionResponse", {}).get("id") == interrupt.interrupt_id
    ]
    assert len(responses) == 1
    assert enqueued == [session.id]
    assert session.status == "completed"
    expected = "Draft approved and sent successfully." if interrupt.decision == "approve" else "Draft rejected."
    assert end_message(session) == expected


def test_many_simultaneous_form_posts_get_one_redirect_and_the_rest_409(demo_tx, enqueued):
    """H8: eight reviewers press a button on the same item at once."""
    reviewers = _reviewers(8)
    session, interrupt = _waiting_review()
    enqueued.clear()
    clients = []
    for user in reviewers:
        client = Client()
        client.force_login(user)
        clients.append(client)
    url = f"/inbox/items/{interrupt.pk}/decide/"

    results = _run_at_once(
        [
            (
                lambda c=c, n=n: c.post(
                    url, {"action": "revise", "feedback": f"note {n}"} if n % 2 else {"action": "approve"}
                )
            )
            for n, c in enumerate(clients)
        ]
    )

    codes = sorted(r.status_code for r in results)
    assert codes == [302] + [409] * 7, results
    interrupt.refresh_from_db()
    assert Answer.objects.filter(session=session, interrupt_id=interrupt.interrupt_id).count() == 1
    assert enqueued == [session.id]
    conflicts = [r.context["conflict"] for r in results if r.status_code == 409]
    by = f"by {interrupt.decided_by_label} at"
    assert all(c.startswith("This request was already ") and by in c for c in conflicts)
