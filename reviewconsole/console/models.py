"""The task workers' heartbeats (how a worker tells the others it is alive), and the one-time
tokens of the "New request" forms (:class:`StartToken`, see ``console/start_tokens.py``), and
:class:`Decision`, the admin's list of decided items.

Heartbeats:

Every worker process (``manage.py serve``'s threads, each ``manage.py worker``) keeps one row,
written every ``TASK_LEASE / 3`` seconds. A django-tasks-db task left ``RUNNING`` by a worker
whose row is older than ``TASK_LEASE`` seconds (or missing) was cut off by a dead process and is
queued again (``console/task_recovery.py``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from ..inbox.models import Item, ItemStatus


class WorkerHeartbeat(models.Model):
    """One worker process: its id (the prefix of its threads' django-tasks-db worker ids), where it
    runs (``host``, ``pid``) and when it last said it was alive (``beat_at``, UTC)."""

    worker_id = models.CharField(primary_key=True, max_length=64)
    host = models.CharField(max_length=255, blank=True)
    pid = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField()
    beat_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-beat_at"]

    def __str__(self) -> str:
        return f"{self.worker_id} ({self.host}:{self.pid})"


class StartToken(models.Model):
    """A one-time token of one "New request" form: issued with the form (``GET /new/<workflow>/``),
    consumed by the first POST that starts a session (``session`` is set in the same transaction);
    a repeated POST of the same form finds it used and is sent to that session.

    ``key`` is random (``secrets.token_urlsafe``), bound to ``user`` and ``workflow``; tokens are
    deleted :data:`~reviewconsole.console.start_tokens.TOKEN_TTL` after they were issued.
    """

    key = models.CharField(primary_key=True, max_length=64)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    workflow = models.CharField(max_length=100)
    created_at = models.DateTimeField(db_index=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    session = models.ForeignKey(
        "workflow_sessions.WorkflowSession", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )

    def __str__(self) -> str:
        return f"{self.workflow} form of {self.user_id}"


class DecidedManager(models.Manager["Decision"]):
    """Only the decided items: resolved, with the time of their decision."""

    def get_queryset(self) -> models.QuerySet[Decision]:
        return super().get_queryset().filter(status=ItemStatus.RESOLVED, decided_at__isnull=False)


class Decision(Item):
    """A decided item, as the admin lists decisions for auditors (``console/admin_decisions.py``):
    a proxy of ``inbox.Item`` (no table of its own) whose rows are the decided items only, newest
    decision first."""

    objects = DecidedManager()

    class Meta:
        proxy = True
        ordering = ["-decided_at", "-id"]
        verbose_name = "decision"
        verbose_name_plural = "decisions"

    def __str__(self) -> str:
        return f"{self.decision or 'decision'} by {self.decided_by_label or 'nobody'} ({self.interrupt_id})"
