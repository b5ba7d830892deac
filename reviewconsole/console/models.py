"""The task workers' heartbeats: how a worker tells the others it is alive.

Every worker process (``manage.py serve``'s threads, each ``manage.py worker``) keeps one row,
written every ``TASK_LEASE / 3`` seconds. A django-tasks-db task left ``RUNNING`` by a worker
whose row is older than ``TASK_LEASE`` seconds (or missing) was cut off by a dead process and is
queued again (``console/task_recovery.py``).
"""

from __future__ import annotations

from django.db import models


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
