"""A lifecycle action and a decision at the same moment: exactly one wins, the loser's 409 names who.

Real threads on the real (SQLite) database, committed for real (``transaction=True``), as in
``test_concurrency.py``: the race is decided by the database, not by the test.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone

from engine import AlreadyDecidedError
from reviewconsole.inbox.errors import CancelledError, DeferredError
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.inbox.items.lifecycle import Actor, interrupt_cancel, interrupt_defer
from reviewconsole.inbox.models import Comment, Item
from reviewconsole.workflow_sessions.models import Answer
from tests.inbox.test_concurrency import _run_at_once, _waiting_review

pytestmark = pytest.mark.django_db(transaction=True)


def _people():
    reviewer = User.objects.create_user("racer", password="x")
    reviewer.groups.add(Group.objects.get(name="queue:support"))
    manager = User.objects.create_user("boss", password="x")
    manager.groups.add(Group.objects.get(name="queue:support"), Group.objects.get(name="managers:support"))
    return reviewer, manager


def test_cancel_and_decide_at_once_exactly_one_wins(demo_tx):
    reviewer, manager = _people()
    session, interrupt = _waiting_review()

    seen_by_reviewer, seen_by_manager = Item.objects.get(pk=interrupt.pk), Item.objects.get(pk=interrupt.pk)
    results = _run_at_once(
        [
            lambda: interrupt_decide(interrupt=seen_by_reviewer, user=reviewer, action="approve"),
            lambda: interrupt_cancel(interrupt=seen_by_manager, actor=Actor.person(manager), reason="Withdrawn"),
        ]
    )

    winners = [r for r in results if isinstance(r, Item)]
    losers = [r for r in results if isinstance(r, AlreadyDecidedError | CancelledError)]
    assert (len(winners), len(losers)) == (1, 1), results
    row = Item.objects.get(pk=interrupt.pk)
    assert row.decision in ("approve", "cancelled")
    said = {"approve": "already approved by", "cancelled": "cancelled by"}[row.decision]
    assert f"{said} {row.decided_by_label}" in losers[0].message
    assert Answer.objects.filter(session=session, interrupt_id=interrupt.interrupt_id).count() == 1
    assert Comment.objects.filter(item=row, kind="cancel").count() == (row.decision == "cancelled")


def test_defer_and_decide_at_once_exactly_one_wins(demo_tx):
    reviewer, manager = _people()
    session, interrupt = _waiting_review()
    until = timezone.now() + dt.timedelta(hours=4)

    # Both loaded the item before either acted (two open pages).
    seen_by_reviewer, seen_by_manager = Item.objects.get(pk=interrupt.pk), Item.objects.get(pk=interrupt.pk)
    results = _run_at_once(
        [
            lambda: interrupt_decide(interrupt=seen_by_reviewer, user=reviewer, action="approve"),
            lambda: interrupt_defer(
                interrupt=seen_by_manager, actor=Actor.person(manager), until=until, note="Hold on"
            ),
        ]
    )

    winners = [r for r in results if isinstance(r, Item)]
    losers = [r for r in results if isinstance(r, AlreadyDecidedError | DeferredError)]
    assert (len(winners), len(losers)) == (1, 1), results
    row = Item.objects.get(pk=interrupt.pk)
    if isinstance(losers[0], DeferredError):  # the defer won: still pending, deferred, undecided
        assert (row.is_pending, row.deferred_until) == (True, until)
        assert "deferred by boss" in losers[0].message
        assert not Answer.objects.filter(session=session).exists()
    else:  # the decision won: no deferral recorded
        assert "approved by racer" in losers[0].message
        assert (row.decision, row.deferred_until) == ("approve", None)
        assert not Comment.objects.filter(item=row).exists()
