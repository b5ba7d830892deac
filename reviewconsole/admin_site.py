"""The admin as auditors read it: what happened up front, internals for superusers only.

:class:`ConsoleAdminSite` is the project's ``admin.site`` (``ConsoleAdminConfig`` replaces
``django.contrib.admin`` in ``INSTALLED_APPS``, so every ``@admin.register`` lands here):

- its index opens with **The record**: workflow sessions, items, decisions, webhook deliveries,
  outbound messages and the audit log (:data:`RECORD`), then the apps in :data:`APP_ORDER`, their
  models in :data:`MODEL_ORDER` (anything else after them, alphabetically);
- the models in :data:`INTERNAL` (the machinery: login throttling rows, task results, idempotency
  records, checkpoints, the outbox, stored answers awaiting a run) are shown and opened only by
  superusers, whatever permissions a user holds (:class:`SuperusersOnly`, mixed into their admin
  class when it is registered);
- no navigation sidebar: at 1280 px its 300 px left the changelists too little room.

Models are named by ``app_label.model_name`` (``_meta.label_lower``); nothing is imported from
the apps, so every layer may register here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.db.models.base import ModelBase
from django.http import HttpRequest
from django.urls import reverse

__all__ = ["APP_ORDER", "INTERNAL", "MODEL_ORDER", "RECORD", "ConsoleAdminConfig", "ConsoleAdminSite"]

RECORD = (
    "workflow_sessions.workflowsession",
    "inbox.item",
    "console.decision",
    "hooks.webhookdelivery",
    "outbound.outboundmessage",
    "audit.auditentry",
)
"""What happened, in the first section of the index: the rows an auditor reads first."""

INTERNAL = frozenset(
    {
        "axes.accessattempt",
        "axes.accessfailurelog",
        "axes.accesslog",
        "django_tasks_database.dbtaskresult",
        "api.idempotencyrecord",
        "workflow_sessions.checkpoint",
        "workflow_sessions.outboxevent",
        "workflow_sessions.answer",
    }
)
"""The machinery behind the record, for superusers only (:class:`SuperusersOnly`)."""

APP_ORDER = (
    "workflow_sessions",
    "inbox",
    "console",
    "policies",
    "hooks",
    "outbound",
    "api",
    "audit",
    "auth",
    "axes",
    "django_tasks_database",
)
"""The apps after the record, in this order; any other app follows, alphabetically."""

MODEL_ORDER = (
    "workflow_sessions.event",
    "workflow_sessions.arrival",
    "inbox.queue",
    "policies.policyrule",
    "policies.policyverdict",
    "policies.standingapproval",
    "policies.firstapproval",
    "hooks.webhookendpoint",
    "outbound.subscription",
    "api.apiclient",
    "api.review",
    "auth.user",
    "auth.group",
)
"""Within an app, these models first, in this order; the rest alphabetically."""


def _is_superuser(request: HttpRequest) -> bool:
    user = request.user
    return bool(user.is_active and user.is_superuser)


class SuperusersOnly:
    """Mixed into an :data:`INTERNAL` model's admin: nobody but a superuser lists, views, adds,
    changes or deletes its rows (a 403 for anyone else, who does not see it in the index)."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return _is_superuser(request) and super().has_module_permission(request)  # type: ignore[misc]

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _is_superuser(request) and super().has_view_permission(request, obj)  # type: ignore[misc]

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        return _is_superuser(request) and super().has_add_permission(request, *args)  # type: ignore[misc]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _is_superuser(request) and super().has_change_permission(request, obj)  # type: ignore[misc]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return _is_superuser(request) and super().has_delete_permission(request, obj)  # type: ignore[misc]


def _rank(order: Iterable[str], name: str, key: str) -> tuple[int, str]:
    order = tuple(order)
    return (order.index(key), "") if key in order else (len(order), name.lower())


class ConsoleAdminSite(admin.AdminSite):
    """The admin site: ordered for auditors, internals for superusers (see the module docstring)."""

    site_header = "reviewconsole admin"
    site_title = "reviewconsole admin"
    index_title = "The record and the settings"
    enable_nav_sidebar = False

    def register(self, model_or_iterable: Any, admin_class: Any = None, **options: Any) -> None:
        """As Django's, but the admin of an :data:`INTERNAL` model is made :class:`SuperusersOnly`."""
        models = [model_or_iterable] if isinstance(model_or_iterable, ModelBase) else list(model_or_iterable)
        for model in models:
            chosen = admin_class or admin.ModelAdmin
            if model._meta.label_lower in INTERNAL:
                chosen = type(chosen.__name__, (SuperusersOnly, chosen), {})
            super().register(model, chosen, **options)

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[dict[str, Any]]:
        """The record first (on the index only), then the apps and their models in our order."""
        apps = self._build_app_dict(request, app_label)
        record: list[dict[str, Any]] = []
        for app in apps.values():
            for model in app["models"]:
                model["label"] = model["model"]._meta.label_lower
            if app_label is None:
                record += [m for m in app["models"] if m["label"] in RECORD]
                app["models"] = [m for m in app["models"] if m["label"] not in RECORD]
            app["models"].sort(key=lambda m: _rank(MODEL_ORDER, m["name"], m["label"]))
        listed = sorted(
            (app for app in apps.values() if app["models"]),
            key=lambda app: _rank(APP_ORDER, app["name"], app["app_label"]),
        )
        if not record:
            return listed
        record.sort(key=lambda m: RECORD.index(m["label"]))
        first = {
            "name": "The record",
            "app_label": "record",
            "app_url": reverse("admin:index", current_app=self.name),
            "has_module_perms": True,
            "models": record,
        }
        return [first, *listed]


class ConsoleAdminConfig(AdminConfig):
    """``django.contrib.admin`` with :class:`ConsoleAdminSite` as ``admin.site``."""

    default_site = "reviewconsole.admin_site.ConsoleAdminSite"
