"""Audit entries for actions Django performs itself: logins and admin changes.

- ``login``, ``logout`` and ``login.failed`` (with the username tried, never the password).
- ``admin.add`` / ``admin.change`` / ``admin.delete`` for every admin change, from the admin's own
  :class:`~django.contrib.admin.models.LogEntry` (so admins added later are covered too), with the
  row before (snapshot taken by ``pre_save`` / ``pre_delete`` during an admin request) and after.
  Secret fields are written as ``"***"``.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.core import serializers
from django.db.models import Model
from django.db.models.signals import post_save, pre_delete, pre_save
from django.dispatch import receiver

from .middleware import current_request, snapshots
from .services import audit_record

logger = logging.getLogger("reviewconsole.audit")

SECRET_FIELDS = {"password", "secret", "token_hash", "webhook_secret"}
_ACTIONS = {ADDITION: "admin.add", CHANGE: "admin.change", DELETION: "admin.delete"}


def row_snapshot(obj: Model) -> dict[str, Any]:
    """The row's fields as JSON values (many-to-many as lists of ids), secrets masked."""
    data = serializers.serialize("python", [obj])[0]["fields"]
    return {k: ("***" if k in SECRET_FIELDS and v else _jsonable(v)) for k, v in data.items()}


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


def _in_admin() -> bool:
    request = current_request()
    return request is not None and request.path.startswith("/admin/")


@receiver(pre_save)
@receiver(pre_delete)
def _snapshot_before(sender: type[Model], instance: Model, **kwargs: Any) -> None:
    taken = snapshots()
    if taken is None or not _in_admin() or instance.pk is None or sender is LogEntry:
        return
    key = (sender._meta.label_lower, str(instance.pk))
    if key in taken:
        return
    old = sender._default_manager.filter(pk=instance.pk).first()
    taken[key] = row_snapshot(old) if old is not None else None


@receiver(post_save, sender=LogEntry)
def _admin_change(sender: type[LogEntry], instance: LogEntry, created: bool, **kwargs: Any) -> None:
    if not created:
        return
    model = instance.content_type.model_class() if instance.content_type_id else None
    label = model._meta.label_lower if model is not None else ""
    key = (label, str(instance.object_id))
    before = (snapshots() or {}).get(key)
    after = None
    if model is not None and instance.action_flag != DELETION:
        obj = model._default_manager.filter(pk=instance.object_id).first()
        after = row_snapshot(obj) if obj is not None else None
    if instance.action_flag == DELETION and before is None and model is not None:
        obj = model._default_manager.filter(pk=instance.object_id).first()
        before = row_snapshot(obj) if obj is not None else None
    audit_record(
        action=_ACTIONS.get(instance.action_flag, "admin.change"),
        user=instance.user,
        target_type=label,
        target_id=str(instance.object_id or ""),
        request=current_request(),
        before=before,
        after=after,
        detail={"object": instance.object_repr, "message": instance.get_change_message()},
    )


@receiver(user_logged_in)
def _logged_in(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    audit_record(action="login", user=user, request=request, target=user)


@receiver(user_logged_out)
def _logged_out(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    if user is not None:
        audit_record(action="logout", user=user, request=request, target=user)


@receiver(user_login_failed)
def _login_failed(sender: Any, credentials: dict[str, Any], request: Any = None, **kwargs: Any) -> None:
    username = str(credentials.get("username", ""))[:150]
    audit_record(
        action="login.failed", actor=f"anonymous:{username}"[:200], request=request, detail={"username": username}
    )
