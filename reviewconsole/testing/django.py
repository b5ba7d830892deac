"""A pytest plugin (pytest-django): run a registered workflow through the console's services and database.

Loaded automatically where reviewconsole is installed (the ``pytest11`` entry point
``reviewconsole``); or name it in a ``conftest.py``: ``pytest_plugins = ["reviewconsole.testing.django"]``.
Its fixture :func:`console_workflow` (it uses pytest-django's ``db``) starts a session with
``session_start``, as a webhook does, runs it on the ORM store with the console's model (the
offline model under the embedded settings) and decides its items with the inbox's
``interrupt_decide``, as a reviewer's click does::

    def test_a_claim_in_the_inbox(console_workflow):
        run = console_workflow("expense-claim", {"amount": 120, "reason": "Train ticket"})
        run.assert_waiting(kind="input")
        run.decide("approve")
        run.assert_outcome("completed", message="Paid 120.")

The workflow must be registered (``REVIEWCONSOLE_WORKFLOWS`` / ``settings.REVIEWCONSOLE["WORKFLOWS"]``).
Django settings must be configured (``DJANGO_SETTINGS_MODULE``, ``--ds`` or the pytest ini's
``DJANGO_SETTINGS_MODULE``, e.g. ``reviewconsole.settings.test``): without them a test using the
fixture errors with :data:`NO_SETTINGS`, where pytest-django alone would skip it quietly.
Runs happen at once, on the test's thread: the fixture sets Django's ``ImmediateBackend`` for
tasks and runs the commit hooks of each start and decision.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from reviewconsole.workflows import get

from . import RunChecks

__all__ = ["NO_SETTINGS", "ConsoleRun", "console_workflow", "pytest_runtest_setup"]

NO_SETTINGS = (
    "console_workflow needs Django settings and none are configured: set DJANGO_SETTINGS_MODULE, e.g. "
    "DJANGO_SETTINGS_MODULE=reviewconsole.settings.test in the environment, `pytest --ds "
    'reviewconsole.settings.test`, or DJANGO_SETTINGS_MODULE = "reviewconsole.settings.test" under '
    "[tool.pytest.ini_options]; register your workflow with REVIEWCONSOLE_WORKFLOWS."
)
"""The error of a test using :func:`console_workflow` when no Django settings are configured."""

REVIEWER = "workflow-tester"
"""The username of the reviewer the fixture decides with: a member and manager of the workflow's queue."""


def _reviewer_of(queue_slug: str) -> Any:
    # When used: pytest loads this plugin (pytest11) before Django is set up, and these import models.
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from reviewconsole.inbox.models import Queue

    group, _ = Group.objects.get_or_create(name=f"queue:{queue_slug}")
    managers, _ = Group.objects.get_or_create(name=f"managers:{queue_slug}")
    queue, _ = Queue.objects.get_or_create(slug=queue_slug, defaults={"name": queue_slug, "group": group})
    if queue.managers_id is None:
        queue.managers = managers
        queue.save(update_fields=["managers"])
    user, _ = get_user_model().objects.get_or_create(username=REVIEWER)
    user.groups.add(queue.group, queue.managers)
    return user


class ConsoleRun(RunChecks):
    """One session started through the console's services, as stored now.

    Attributes (read again after each decision; :meth:`refresh` reads them on demand):
        session: the :class:`reviewconsole.workflow_sessions.models.WorkflowSession` row.
        status, output, error: the session's (``"waiting"``, ``"completed"``, ``"failed"``…).
        pending: its pending :class:`reviewconsole.inbox.models.Item` rows (the inbox's
            items), oldest first.
        reviewer: the user decisions are made as (a member and manager of the workflow's queue).
    """

    def __init__(self, session: Any, reviewer: Any, run_hooks: Callable[[], Any]) -> None:
        self.session = session
        self.reviewer = reviewer
        self._run_hooks = run_hooks
        self.pending: list[Any] = []
        self.refresh()

    def refresh(self) -> ConsoleRun:
        """Read the session and its pending items again."""
        from reviewconsole.inbox.models import Item, ItemStatus  # models: the plugin loads before Django

        self.session.refresh_from_db()
        self.status, self.output, self.error = self.session.status, self.session.output, self.session.error
        rows = Item.objects.filter(session=self.session, status=ItemStatus.PENDING)
        self.pending = list(rows.order_by("created_at", "id"))
        return self

    @property
    def state(self) -> dict[str, Any]:
        """The session's state."""
        return dict(self.session.state)

    @property
    def messages(self) -> list[str]:  # type: ignore[override]
        """Texts the workflow wrote, oldest first (streamed parts left out)."""
        found = []
        for author, data in self.session.events.order_by("seq").values_list("author", "data"):
            if author == "user" or data.get("partial"):
                continue
            parts = (data.get("content") or {}).get("parts") or []
            text = "".join(p.get("text", "") for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))
            if text:
                found.append(text)
        return found

    def event_paths(self) -> list[str]:
        return list(self.session.events.order_by("seq").values_list("node_path", flat=True))

    def pending_kinds(self) -> list[tuple[str, str]]:
        return [(i.kind, i.node_path) for i in self.pending]

    def item(self, id: str | None = None, *, kind: str | None = None) -> Any:
        """The pending item with interrupt id ``id`` (wire or local), else the only one of
        ``kind``, else the only one pending.

        Raises:
            LookupError: none matches, or several do; the message lists what is pending.
        """
        found = [
            i
            for i in self.pending
            if (id is None or id in (i.interrupt_id, i.local_id)) and (kind is None or i.kind == kind)
        ]
        if len(found) == 1:
            return found[0]
        listed = ", ".join(f"{i.interrupt_id} ({i.kind} at {i.node_path})" for i in self.pending) or "nothing"
        raise LookupError(f"{len(found)} pending items match; pending: {listed}.")

    def decide(
        self,
        action: str,
        *,
        id: str | None = None,
        kind: str | None = None,
        text: str = "",
        reason: str = "",
        draft: str | None = None,
        form: dict[str, str] | None = None,
        user: Any = None,
    ) -> ConsoleRun:
        """Decide one pending item (chosen as :meth:`item` does) through the inbox's
        ``interrupt_decide`` and run the session on. Returns ``self``, refreshed.

        ``action``: ``"approve"``, ``"reject"`` (``reason``), ``"revise"`` (feedback ``text``) or
        ``"answer"`` with ``form``, the generated form's fields as a browser posts them
        (``{"f.approved": "1", "f.comment": "Fine"}``: names are ``f.<json path>``, booleans are
        present when ticked, enums and JSON fields are JSON text). ``user``: another decider.

        Raises:
            LookupError: no single item matches.
            reviewconsole.inbox.errors.DecisionError: the decision is incomplete, or the form
                fails the schema (``errors``); nothing is stored.
            django.core.exceptions.PermissionDenied: ``user`` is not a reviewer of the queue.
        """
        from reviewconsole.inbox.items.decisions import interrupt_decide  # imports models: loaded before Django

        target = self.item(id, kind=kind)
        with self._run_hooks():
            interrupt_decide(
                interrupt=target,
                user=user or self.reviewer,
                action=action,
                text=text,
                reason=reason,
                draft=draft,
                form=form,
            )
        return self.refresh()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Fail a test that uses :func:`console_workflow` without Django settings, before
    pytest-django's fixtures skip it quietly ("no Django settings", shown only with ``-rs``)."""
    if "console_workflow" not in getattr(item, "fixturenames", ()):
        return
    from pytest_django.lazy_django import django_settings_is_configured  # a test extra: loaded only when used

    if not django_settings_is_configured():
        pytest.fail(NO_SETTINGS, pytrace=False)


@pytest.fixture
def console_workflow(db: None, settings: Any, django_capture_on_commit_callbacks: Any) -> Iterator[Any]:
    """``console_workflow(workflow, data, *, user_id="test")`` → :class:`ConsoleRun`: start a
    session of the registered ``workflow`` with ``data`` (its input) and run it until it
    completes or waits.

    Fails the test (an error, not a skip) with :data:`NO_SETTINGS` when no Django settings are
    configured. Raises (from the call): ``UnknownWorkflowError`` (not registered),
    ``engine.WorkflowDataError`` (``data`` does not fit the input schema; ``details["errors"]``).
    """
    settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}

    def run_hooks() -> Any:
        return django_capture_on_commit_callbacks(execute=True)

    def start(workflow: str, data: Any, *, user_id: str = "test") -> ConsoleRun:
        from reviewconsole.workflow_sessions.services import session_start  # imports models: loaded before Django

        reviewer = _reviewer_of(get(workflow).queue)
        with run_hooks():
            session = session_start(workflow=workflow, data=data, user_id=user_id)
        return ConsoleRun(session, reviewer, run_hooks)

    yield start
