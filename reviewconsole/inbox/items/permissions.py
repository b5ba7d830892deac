"""Who manages a workflow: the managers of its queue (``Queue.managers``), and superusers.

Managers retry a workflow's failed sessions, see its sessions that failed before any request, and
start it from the console. The session service does not know queues, so the doors (the console's
pages, the admin) ask here first.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied

from engine import SessionStatus

from ...workflow_sessions.models import WorkflowSession
from ...workflows import UnknownWorkflowError, all_specs, get
from ..models import Queue
from .selectors import is_queue_manager, managed_queues_for

__all__ = ["can_retry", "managed_workflows", "manages_workflow", "require_retry_permission"]

User = AbstractBaseUser | AnonymousUser


def manages_workflow(user: User, workflow: str) -> bool:
    """Whether ``user`` is a manager of ``workflow``'s queue (a superuser manages every one)."""
    if not user.is_authenticated:
        return False
    if getattr(user, "is_superuser", False):
        return True
    try:
        slug = get(workflow).queue
    except UnknownWorkflowError:
        return False
    queue = Queue.objects.filter(slug=slug).values_list("pk", flat=True).first()
    return queue is not None and is_queue_manager(user, queue)  # type: ignore[arg-type]


def managed_workflows(user: User) -> list[str]:
    """Names of the registered workflows whose queue ``user`` manages (every one for a superuser)."""
    if getattr(user, "is_superuser", False):
        return [spec.name for spec in all_specs()]
    slugs = set(managed_queues_for(user).values_list("slug", flat=True))
    return [spec.name for spec in all_specs() if spec.queue in slugs]


def can_retry(user: User, session: WorkflowSession) -> bool:
    """Whether ``user`` may retry ``session`` now: it failed and they manage its workflow's queue."""
    return session.status == SessionStatus.FAILED and manages_workflow(user, session.workflow)


def require_retry_permission(user: User, session: WorkflowSession) -> None:
    """Raise unless ``user`` manages ``session``'s workflow (before ``session_retry``).

    Raises:
        PermissionDenied: ``user`` does not manage the workflow's queue.
    """
    if not manages_workflow(user, session.workflow):
        raise PermissionDenied("Only a manager of this workflow's queue can retry its sessions.")
