"""A double click: the same decision posted twice at once on one item. One request records it; the
other, having passed its own checks while the item was still pending, loses the database's race
to it and answers 200 with the same receipt (not 409, not a second decision).

Real threads on the real database, committed for real (``transaction=True``). The interleaving is
forced without sleeping: each request waits at the workflow's checks before a decision
(``decision_checks.check_before_decision``, after the pending checks, before the store) until
both have reached it, so both are past their checks before either stores.
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection
from django.test import Client

from reviewconsole.audit.models import AuditEntry
from reviewconsole.inbox.items import decisions
from reviewconsole.inbox.models import Item
from reviewconsole.workflow_sessions.models import Answer
from tests.inbox.test_concurrency import DEADLINE, _reviewers, _waiting_review

pytestmark = pytest.mark.django_db(transaction=True)

JSON = {"Accept": "application/json"}


@pytest.fixture
def both_past_their_checks(monkeypatch):
    """Hold each decision at the workflow's checks until two decisions are there."""
    meeting = threading.Barrier(2)
    checks = decisions.check_before_decision

    def meet(*args, **kwargs):
        meeting.wait(timeout=DEADLINE)
        return checks(*args, **kwargs)

    monkeypatch.setattr(decisions, "check_before_decision", meet)
    return meeting


def _post_at_once(user, url, posts):
    """Post each of ``posts`` (form fields) to ``url`` as ``user``, each from its own thread, at
    once; the responses in the same order."""
    results = [None] * len(posts)

    def post(n):
        client = Client()
        client.force_login(user)
        try:
            results[n] = client.post(url, posts[n], headers=JSON)
        except BaseException as exc:
            results[n] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=post, args=(n,)) for n in range(len(posts))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLINE)
        assert not thread.is_alive(), "a decision did not finish in time"
    return results


@pytest.mark.parametrize(
    "fields",
    [
        {"action": "approve"},
        {"action": "reject", "reason": "Wrong tone"},
        {"action": "revise", "feedback": "shorter"},
    ],
    ids=["approve", "reject", "feedback"],
)
def test_the_same_decision_posted_twice_at_once_is_one_decision_and_two_receipts(
    demo_tx, both_past_their_checks, fields
):
    [reviewer] = _reviewers(1)
    session, item = _waiting_review()

    first, second = _post_at_once(reviewer, f"/inbox/items/{item.pk}/decide/", [fields, fields])

    assert (first.status_code, second.status_code) == (200, 200), (first.content, second.content)
    assert first.json()["receipt"] == second.json()["receipt"]
    assert first.json()["receipt"]["decision"] == fields["action"]
    assert first.json()["receipt"]["decided_by"] == reviewer.username
    assert "approvals" not in first.json() and "approvals" not in second.json()  # no four-eyes "1 of 2"
    assert Answer.objects.filter(session=session, interrupt_id=item.interrupt_id).count() == 1
    assert AuditEntry.objects.filter(action="interrupt.decide", target_id=str(item.pk)).count() == 1
    assert not AuditEntry.objects.filter(action__in=("interrupt.refuse", "interrupt.decide_refused")).exists()
    stored = Item.objects.get(pk=item.pk)
    assert (stored.decision, stored.decided_by_label) == (fields["action"], reviewer.username)


def test_two_different_decisions_posted_at_once_are_one_decision_and_a_409(demo_tx, both_past_their_checks):
    [reviewer] = _reviewers(1)
    session, item = _waiting_review()
    posts = [{"action": "reject", "reason": "Wrong tone"}, {"action": "reject", "reason": "Too long"}]

    results = _post_at_once(reviewer, f"/inbox/items/{item.pk}/decide/", posts)

    codes = sorted(r.status_code for r in results)
    assert codes == [200, 409], [r.content for r in results]
    refused = next(r for r in results if r.status_code == 409).json()["error"]
    assert (refused["code"], refused["decided_by"]) == ("already_decided", reviewer.username)
    assert Answer.objects.filter(session=session, interrupt_id=item.interrupt_id).count() == 1
