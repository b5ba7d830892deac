"""AG-UI threads: which workflow session a client's ``threadId`` is (AG-UI 1.0, RunAgentInput.threadId)."""

from __future__ import annotations

from django.db import models


class AguiThread(models.Model):
    """One AG-UI thread of one API client on one workflow: a workflow session.

    ``last_seq`` is the seq of the newest session event the client was sent (events after it are
    caught up on its next request, e.g. what a reviewer's decision in the inbox led to);
    ``last_message_id`` is the id of the newest user message already taken as input.
    """

    client = models.ForeignKey("api.ApiClient", on_delete=models.PROTECT, related_name="+")
    workflow = models.CharField(max_length=100)
    thread_id = models.CharField(max_length=200)
    session = models.OneToOneField(
        "workflow_sessions.WorkflowSession", on_delete=models.PROTECT, related_name="agui_thread"
    )
    last_seq = models.PositiveIntegerField(default=0)
    last_message_id = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["client", "workflow", "thread_id"], name="agui_thread_once"),
        ]

    def __str__(self) -> str:
        return f"{self.workflow} thread {self.thread_id}"


class AguiRewind(models.Model):
    """A rewind a thread made or is making (``rewinds``), known by ``key``: a SHA-256 hex digest of
    its run's ``runId``, the checkpoint id and the ``resume`` entries. ``done`` once what it asked
    is stored; until then ``claimed_at`` says since when a request has been making it."""

    thread = models.ForeignKey(AguiThread, on_delete=models.CASCADE, related_name="rewinds")
    key = models.CharField(max_length=64)
    done = models.BooleanField(default=False)
    claimed_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["thread", "key"], name="agui_rewind_once"),
        ]

    def __str__(self) -> str:
        return f"rewind {self.key[:12]} of {self.thread}"
