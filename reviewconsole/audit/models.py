"""Audit entries. Rows are written once and never changed or deleted (the model refuses both)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models


class AppendOnlyError(RuntimeError):
    """An attempt to change or delete an audit entry."""


class AuditQuerySet(models.QuerySet["AuditEntry"]):
    """Bulk updates and deletes are refused too (the admin's and any caller's)."""

    def update(self, **kwargs: Any) -> int:
        raise AppendOnlyError("Audit entries cannot be changed.")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise AppendOnlyError("Audit entries cannot be deleted.")

    def bulk_update(self, *args: Any, **kwargs: Any) -> int:
        raise AppendOnlyError("Audit entries cannot be changed.")


class AuditEntry(models.Model):
    """One action: ``actor`` (a person, a client or the system) did ``action`` to ``target``."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    actor = models.CharField(max_length=200, help_text="user:<name>, client:<name>, webhook:<slug> or system.")
    action = models.CharField(max_length=60, db_index=True, help_text="e.g. login, item.view, interrupt.decide.")
    target_type = models.CharField(max_length=60, blank=True)
    target_id = models.CharField(max_length=200, blank=True, db_index=True)
    ip = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=500, blank=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    detail = models.JSONField(default=dict, blank=True)

    objects = AuditQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor} {self.action} {self.target_type}:{self.target_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise AppendOnlyError("Audit entries cannot be changed.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        raise AppendOnlyError("Audit entries cannot be deleted.")
