"""The admin for auditors (issue 17): the record up front, internals for superusers only, people's
names for models, sessions with their outcome, decisions, and times without microseconds.

The session list at 1280 px in a real browser is ``tests/browser/test_admin_auditor.py``.
"""

from __future__ import annotations

import re

import pytest
from django.contrib import admin
from django.utils import timezone

from reviewconsole.admin_site import INTERNAL, RECORD
from reviewconsole.console.session_outcomes import session_outcome_word
from reviewconsole.inbox.items.decisions import interrupt_decide
from reviewconsole.workflow_sessions.models import WorkflowSession

SESSIONS = "/admin/workflow_sessions/workflowsession/"
DECISIONS = "/admin/console/decision/"


def _sections(page: str) -> list[tuple[str, list[str]]]:
    """The index's sections, each ``(caption, [model names])`` in the page's order."""
    found = []
    for caption, body in re.findall(r"<caption>\s*<a[^>]*>([^<]+)</a>\s*</caption>(.*?)</table>", page, re.DOTALL):
        names = re.findall(r'<th scope="row"[^>]*>\s*<a href="[^"]*"[^>]*>([^<]+)</a>', body)
        found.append((caption.strip(), names))
    return found


def _url(label: str) -> str:
    app_label, model = label.split(".")
    return f"/admin/{app_label}/{model}/"


RECORD_NAMES = ["Workflow sessions", "Items", "Decisions", "Webhook deliveries", "Outbound messages", "Audit entries"]


def test_the_auditor_sees_the_record_first_and_no_internals(client, personas):
    client.force_login(personas.auditor)
    sections = _sections(client.get("/admin/").content.decode())
    assert sections[0] == ("The record", RECORD_NAMES)
    listed = [name for _, names in sections for name in names]
    assert len(listed) == len(set(listed)), "a model listed twice"
    for hidden in ("Checkpoints", "Outbox events", "Idempotency records", "Task results", "Access attempts", "Answers"):
        assert hidden not in listed
    assert [caption for caption, _ in sections][:3] == ["The record", "Workflow sessions", "Inbox"]
    assert "API clients" in listed and "Api clients" not in listed


def test_the_auditor_cannot_open_an_internal_model_whatever_its_permissions(client, personas):
    from django.contrib.auth.models import Permission

    auditor = personas.auditor
    auditor.user_permissions.add(*Permission.objects.filter(codename__in=["view_checkpoint", "view_accessattempt"]))
    client.force_login(auditor)
    for label in INTERNAL:
        assert client.get(_url(label)).status_code == 403, label
    for label in RECORD:
        assert client.get(_url(label)).status_code == 200, label


def test_the_superuser_sees_the_internals_after_the_rest(client, personas):
    client.force_login(personas.admin)
    sections = _sections(client.get("/admin/").content.decode())
    assert sections[0] == ("The record", RECORD_NAMES)
    captions = [caption for caption, _ in sections]
    assert captions[-2:] == ["Axes", "Tasks Database Backend"]
    listed = [name for _, names in sections for name in names]
    for shown in ("Checkpoints", "Outbox events", "Idempotency records", "Answers", "Access attempts"):
        assert shown in listed
    for label in INTERNAL:
        assert client.get(_url(label)).status_code == 200, label


def test_every_registered_model_is_listed_once_for_the_superuser(client, personas):
    client.force_login(personas.admin)
    page = client.get("/admin/").content.decode().split('id="content-related"')[0]  # not "Recent actions"
    for model in admin.site._registry:
        assert page.count(f'href="{_url(model._meta.label_lower)}">') == 1, model._meta.label_lower  # its name


@pytest.mark.parametrize(
    ("status", "last_decision", "word"),
    [
        ("completed", "approve", "approved"),
        ("completed", "reject", "rejected"),
        ("completed", "answer", "answered"),
        ("completed", "timeout", "expired"),
        ("completed", "cancelled", "cancelled"),
        ("completed", None, "completed"),
        ("failed", None, "failed"),
        ("cancelled", None, "cancelled"),
        ("waiting", "revise", "waiting"),
        ("running", None, "running"),
    ],
)
def test_a_session_s_outcome_in_one_word(status, last_decision, word):
    assert session_outcome_word(status, last_decision) == word


def _row(page: str, session_id: str) -> str:
    [row] = [r for r in re.findall(r"<tr>.*?</tr>", page, re.DOTALL) if session_id in r]
    return row


def test_the_session_list_shows_and_filters_the_outcome(client, auditor, manager, start_review, on_commit):
    approved, item = start_review("Approve me")
    with on_commit():
        interrupt_decide(interrupt=item, user=manager, action="approve")
    rejected, item = start_review("Reject me")
    with on_commit():
        interrupt_decide(interrupt=item, user=manager, action="reject", reason="Not our tone")
    waiting, _ = start_review("Leave me")
    failed = WorkflowSession.objects.create(workflow="email-review", user_id="test", status="failed")
    cancelled = WorkflowSession.objects.create(workflow="email-review", user_id="test", status="cancelled")

    client.force_login(auditor)
    page = client.get(SESSIONS).content.decode()
    expected = {
        approved: "approved",
        rejected: "rejected",
        waiting: "waiting",
        failed: "failed",
        cancelled: "cancelled",
    }
    for session, word in expected.items():
        assert f'<td class="field-outcome">{word}</td>' in _row(page, session.pk), word
    assert ">Completed<" not in page.split('id="result_list"')[1].split("</table>")[0]
    for session, word in expected.items():
        listed = client.get(SESSIONS, {"outcome": word}).content.decode()
        assert f"/{session.pk}/change/" in listed
        others = [s for s in expected if expected[s] != word]
        assert not any(f"/{s.pk}/change/" in listed for s in others), word


def test_times_in_the_lists_and_the_timeline_have_no_microseconds(client, auditor, manager, start_review, on_commit):
    session, item = start_review()
    with on_commit():
        interrupt_decide(interrupt=item, user=manager, action="approve")
    client.force_login(auditor)
    for url in (SESSIONS, DECISIONS, "/admin/inbox/item/", f"{SESSIONS}{session.pk}/change/"):
        page = client.get(url).content.decode()
        assert not re.search(r"\d\d:\d\d:\d\d[.,]\d{3,6}", page), url
    listed = client.get(SESSIONS).content.decode()
    assert re.search(rf'<td class="field-created">{timezone.now():%Y-%m-%d} \d\d:\d\d UTC</td>', listed)


def test_decisions_list_who_decided_what_and_filter_people_from_policy(
    client, auditor, manager, start_review, start_session, on_commit
):
    _, item = start_review()
    with on_commit():
        interrupt_decide(interrupt=item, user=manager, action="reject", reason="Too long")
    start_session("refund-approval", {"order_id": "A-7", "amount": 40, "reason": "Late"})  # a policy approves
    client.force_login(auditor)
    page = client.get(DECISIONS).content.decode()
    assert "manager" in page and "Too long" in page and "policy: small-refunds" in page
    people = client.get(DECISIONS, {"decider": "people"}).content.decode()
    assert "manager" in people and "policy: small-refunds" not in people
    policy = client.get(DECISIONS, {"decider": "policy"}).content.decode()
    assert "policy: small-refunds" in policy and "Too long" not in policy
    assert client.get(f"{DECISIONS}add/").status_code == 403


@pytest.mark.parametrize("url", ["/admin/inbox/item/", DECISIONS])
def test_the_decision_filter_names_each_decision_once(client, personas, demo, url):
    """Items are ordered by time: a ``distinct()`` over the decision kept that ordering's columns
    and listed "approve" once per item decided (a fresh user saw it seven times)."""
    from reviewconsole.inbox.models import Item, Queue
    from tests.inbox.factories import make_items

    support = Queue.objects.get(slug="support")
    made = make_items(support, 4)
    Item.objects.filter(pk__in=[i.pk for i in made[:3]]).update(status="resolved", decision="approve")
    Item.objects.filter(pk=made[3].pk).update(status="resolved", decision="reject")
    client.force_login(personas.auditor)
    page = client.get(url).content.decode()
    assert page.count("?decision=approve") == 1 and page.count("?decision=reject") == 1


def test_an_item_and_a_first_approval_are_named_for_people(personas, demo):
    """The admin's titles: the request's title and the approver's name, not row numbers and hex ids."""
    from reviewconsole.inbox.models import Queue
    from reviewconsole.policies.models import FirstApproval
    from reviewconsole.workflow_sessions.models import Interrupt
    from tests.inbox.factories import make_items

    [item] = make_items(Queue.objects.get(slug="finance"), 1, title="Refund A-8")
    assert str(item) == "Refund A-8 (pending)"
    interrupt = Interrupt.objects.get(session=item.session, interrupt_id=item.interrupt_id)
    first = FirstApproval.objects.create(session_interrupt=interrupt, user=personas.queue_manager)
    assert str(first).startswith(f"first approval by {personas.queue_manager.get_username()} at ")
