"""Starting a session from the console ("New request"): who may start what, and the start itself.

A user may start a registered workflow when they manage its queue (a member of the queue's
``managers`` group, see :func:`reviewconsole.inbox.items.selectors.is_queue_manager`), hold the
permission ``workflow_sessions.start_<workflow>`` ("Can start <title>", one per workflow, created
after ``migrate``; give it to a user or a group in the admin), or are a superuser. Chat
workflows (``spec.chat``) are not offered: only an AG-UI client carries their conversation on; nor is the
built-in review request (``spec.builtin``), asked through ``POST /api/v1/reviews`` only.

The start goes through :func:`reviewconsole.workflow_sessions.services.session_start`, as a
webhook's and an API call's do, and is audited as ``session.start`` with the user.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Permission
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest
from pydantic import BaseModel, TypeAdapter

from ..audit.services import audit_record
from ..inbox.items.selectors import is_queue_manager
from ..inbox.models import Queue
from ..workflow_sessions.models import WorkflowSession
from ..workflow_sessions.services import session_start
from ..workflows import UnknownWorkflowError, WorkflowSpec, all_specs, get

__all__ = [
    "console_user_id",
    "input_json_schema",
    "may_start",
    "session_start_by_user",
    "start_permission_codename",
    "startable_spec",
    "startable_specs",
    "sync_start_permissions",
]

User = AbstractBaseUser | AnonymousUser


def start_permission_codename(workflow: str) -> str:
    """The codename of the permission to start ``workflow``: ``start_<workflow>`` (on sessions)."""
    return f"start_{workflow}"


def console_user_id(user: AbstractBaseUser) -> str:
    """The ``user_id`` of sessions a user starts: ``user:<username>``, as audit entries name them."""
    return f"user:{user.get_username()}"


def input_json_schema(spec: WorkflowSpec) -> dict[str, Any] | None:
    """The JSON Schema of the spec's ``input_schema`` (a pydantic model, a type, or a schema dict);
    None when the workflow declares none."""
    schema = spec.input_schema
    if schema is None:
        return None
    if isinstance(schema, dict):
        return schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_json_schema()
    return TypeAdapter(schema).json_schema()


def _offered(spec: WorkflowSpec) -> bool:
    return not spec.chat and not spec.builtin and spec.input_schema is not None


def _rights(user: User) -> tuple[set[str], set[str]]:
    """``(permissions, managed queue slugs)`` of an authenticated user, in two queries (Django
    caches the permissions on the user object)."""
    from ..inbox.items.selectors import managed_queues_for

    managed = set(managed_queues_for(user).values_list("slug", flat=True))
    return user.get_all_permissions(), managed  # type: ignore[union-attr]


def _allowed(spec: WorkflowSpec, permissions: set[str], managed: set[str]) -> bool:
    return spec.queue in managed or f"workflow_sessions.{start_permission_codename(spec.name)}" in permissions


def may_start(user: User, spec: WorkflowSpec) -> bool:
    """Whether ``user`` may start ``spec`` from the console (see the module docstring)."""
    if not user.is_authenticated or not _offered(spec):
        return False
    if user.is_superuser:
        return True
    if user.has_perm(f"workflow_sessions.{start_permission_codename(spec.name)}"):
        return True
    queue = Queue.objects.filter(slug=spec.queue).values_list("pk", flat=True).first()
    return queue is not None and is_queue_manager(user, queue)


def startable_specs(user: User) -> list[WorkflowSpec]:
    """The workflows ``user`` may start, by title (a couple of queries, whatever their number)."""
    if not user.is_authenticated:
        return []
    offered = [s for s in all_specs() if _offered(s)]
    if not user.is_superuser:
        permissions, managed = _rights(user)
        offered = [s for s in offered if _allowed(s, permissions, managed)]
    return sorted(offered, key=lambda s: (s.title.lower(), s.name))


def startable_spec(user: User, workflow: str) -> WorkflowSpec:
    """The spec of ``workflow`` if ``user`` may start it.

    Raises:
        UnknownWorkflowError: not registered, or not startable by this user (the same answer, so
            that a page does not tell outsiders which workflows exist).
    """
    spec = get(workflow)
    if not may_start(user, spec):
        raise UnknownWorkflowError(f"No workflow named {workflow!r} may be started here.")
    return spec


@transaction.atomic
def session_start_by_user(
    *, user: AbstractBaseUser, workflow: str, data: Any, request: HttpRequest | None = None
) -> WorkflowSession:
    """Start a session of ``workflow`` with ``data`` (its input) for ``user``, audited.

    The session's ``user_id`` is ``user:<username>`` and its metadata ``{"started_by": username,
    "door": "console"}``; the audit entry is ``session.start`` with ``detail={"workflow",
    "door": "console"}``, in the same transaction.

    Raises:
        PermissionDenied: the user may not start it.
        UnknownWorkflowError: no such workflow.
        engine.WorkflowDataError: ``data`` does not fit the input schema (``details["errors"]``);
            nothing is stored.
    """
    spec = get(workflow)
    if not may_start(user, spec):
        raise PermissionDenied("You may not start this workflow.")
    session = session_start(
        workflow=spec.name,
        data=data,
        user_id=console_user_id(user),
        metadata={"started_by": user.get_username(), "door": "console"},
    )
    audit_record(
        action="session.start",
        user=user,
        target=session,
        request=request,
        detail={"workflow": spec.name, "door": "console"},
    )
    return session


def sync_start_permissions(**kwargs: Any) -> None:
    """Create the permission ``start_<workflow>`` of every registered workflow that lacks it
    (a ``post_migrate`` receiver: ``migrate``, ``./run`` and the tests' database set-up call it)."""
    content_type = ContentType.objects.get_for_model(WorkflowSession)
    for spec in all_specs():
        if spec.chat:
            continue
        Permission.objects.get_or_create(
            content_type=content_type,
            codename=start_permission_codename(spec.name),
            defaults={"name": f"Can start {spec.title}"[:255]},
        )
