"""Shared fixtures: demo data, personas, signed webhooks, and a guard on failed runs.

Runs are synchronous in tests: ``reviewconsole.settings.test`` uses Django's ``ImmediateBackend``,
so the ``run_session`` task runs inside the commit hook that enqueues it. With the ``db`` fixture
(one transaction per test) commit hooks fire only inside ``on_commit()``; ``transaction=True``
tests commit for real and need nothing more.
"""

from __future__ import annotations

import json
import signal
import time
import uuid

import pytest
from django.tasks.base import TaskResultStatus
from django.tasks.signals import task_finished

# A run started in the background by a shell without job control inherits SIGINT ignored, and so
# would every console the tests start and stop with Ctrl-C (tests/browser/test_main_job.Console):
# each would ignore it and wait out its stop deadline (300 s). The tests take Ctrl-C back.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

DEMO_PASSWORD = "test-pass-1234"
DEMO_SECRET = "whsec_MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
COMPLAINT = "My phone battery drains too fast"


@pytest.fixture(autouse=True)
def runs_must_not_fail():
    """Fail the test when a ``run_session`` task raised (ImmediateBackend only records it)."""
    failures: list[str] = []

    def record(sender, task_result, **kwargs):
        if task_result.status == TaskResultStatus.FAILED:
            failures.extend(e.traceback for e in task_result.errors)

    task_finished.connect(record, weak=False)
    yield
    task_finished.disconnect(record)
    assert not failures, "a task failed:\n" + "\n".join(failures)


@pytest.fixture(autouse=True)
def fresh_cache():
    """An empty cache per test: the inbox caches queue counts under the queues' versions, which
    restart at 0 in every test's database."""
    from django.core.cache import cache

    from reviewconsole.inbox.items.assignment import forget_queues
    from reviewconsole.outbound.services import forget_subscriptions

    cache.clear()
    forget_queues()  # process caches too: each test's database starts from nothing
    forget_subscriptions()


@pytest.fixture
def on_commit(django_capture_on_commit_callbacks):
    """``with on_commit(): …`` runs the commit hooks (enqueued runs, live messages) at the end."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def _run_demo(monkeypatch):
    from django.core.management import call_command

    monkeypatch.setenv("DEMO_PASSWORD", DEMO_PASSWORD)
    monkeypatch.setenv("DEMO_WEBHOOK_SECRET", DEMO_SECRET)
    with open("/dev/null", "w") as devnull:
        call_command("demo", stdout=devnull)
    return {"password": DEMO_PASSWORD, "secret": DEMO_SECRET}


@pytest.fixture
def demo(db, monkeypatch):
    """Run ``manage.py demo`` with a known password and webhook secret; returns them."""
    return _run_demo(monkeypatch)


@pytest.fixture
def demo_tx(transactional_db, monkeypatch):
    """:func:`demo` for ``transaction=True`` tests (threads and websockets see committed rows)."""
    return _run_demo(monkeypatch)


def _user(username):
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username=username)


@pytest.fixture
def manager(demo):
    """The demo reviewer: a member of every demo queue (``support`` holds the email review)."""
    return _user("manager")


@pytest.fixture
def auditor(demo):
    """The demo auditor: staff with view permissions only."""
    return _user("auditor")


def make_outsider(username="outsider"):
    """A reviewer of the ``finance`` queue only: not of ``support``, where email reviews go."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    user = get_user_model().objects.create_user(username, password=DEMO_PASSWORD)
    user.groups.add(Group.objects.get(name="queue:finance"))
    return user


@pytest.fixture
def outsider(demo):
    return make_outsider()


def signed_headers(body, *, secret=DEMO_SECRET, webhook_id=None, timestamp=None):
    """Standard Webhooks headers for ``body`` (str), as ``Client.post(headers=…)`` takes them."""
    from reviewconsole.hooks.services import sign

    webhook_id = webhook_id or f"msg_{uuid.uuid4().hex}"
    timestamp = int(time.time()) if timestamp is None else timestamp
    return {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(secret, webhook_id, timestamp, body),
    }


def post_webhook(client, data, *, slug="email-review", **kwargs):
    """POST ``data`` (JSON-encoded here) to ``/hooks/<slug>/``, signed with that endpoint's demo
    secret (``DEMO_SECRET`` for ``email-review``; each other endpoint has its own) unless ``secret=``."""
    if "secret" not in kwargs and slug != "email-review":
        from reviewconsole.hooks.models import WebhookSecret

        own = WebhookSecret.objects.filter(endpoint__slug=slug).values_list("secret", flat=True).first()
        kwargs["secret"] = own or DEMO_SECRET
    body = json.dumps(data)
    return client.post(f"/hooks/{slug}/", body, content_type="application/json", headers=signed_headers(body, **kwargs))


@pytest.fixture
def start_review(demo, client, on_commit):
    """Start an email review through the webhook and run it to its first interrupt.

    Returns ``(session, interrupt)``: the session waiting, the interrupt pending in ``support``.
    """
    from reviewconsole.inbox.models import Item
    from reviewconsole.workflow_sessions.models import WorkflowSession

    def start(complaint=COMPLAINT):
        with on_commit():
            response = post_webhook(client, {"complaint": complaint})
        assert response.status_code == 202, response.content
        session = WorkflowSession.objects.get(pk=response.json()["session_id"])
        return session, Item.objects.get(session=session, status="pending")

    return start


@pytest.fixture
def personas(demo):
    """The personas of ``tests/personas.py`` as users, one attribute each: ``reviewer`` (the
    ``support`` queue), ``other_reviewer`` (``finance`` only), ``queue_manager`` (``support``'s
    manager and member), ``auditor`` (reads the admin, no queue), ``staff`` (staff with no
    permissions, no queue) and ``admin`` (a superuser)."""
    from types import SimpleNamespace

    from tests.personas import USERS, persona_user

    return SimpleNamespace(**{name: persona_user(name) for name in USERS})


@pytest.fixture
def start_session(demo, on_commit):
    """Start a session of any workflow and run it to its first pause.

    ``start_session("vip-discount", {"customer_id": "c123"})`` returns ``(session, items)``: the
    session and its pending interrupt rows, oldest first; ``user_id`` names who started it
    (``user:<username>`` for a person in the console).
    """
    from reviewconsole.inbox.models import Item
    from reviewconsole.workflow_sessions.services import session_start

    def start(workflow, data, user_id="test"):
        with on_commit():
            session = session_start(workflow=workflow, data=data, user_id=user_id)
        session.refresh_from_db()
        return session, list(Item.objects.filter(session=session, status="pending").order_by("id"))

    return start


def texts(session):
    """The texts of the session's events, in order."""
    found = []
    for data in session.events.order_by("seq").values_list("data", flat=True):
        text = "".join(p.get("text", "") for p in (data.get("content") or {}).get("parts", []))
        if text:
            found.append(text)
    return found


def end_message(session):
    """The newest text of the session: its end message once it completes."""
    return texts(session)[-1]
