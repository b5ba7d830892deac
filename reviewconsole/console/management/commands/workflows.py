"""``python manage.py workflows [--json]``: the registered workflows, as a table or as JSON.

Per workflow: ``name``, ``title``, ``version`` (its root node's, as the engine's ``Runner``
stores it with each session: a ``Workflow``'s, ``"1"`` by default; ``""`` for a root that is an
agent, which has none, shown ``none`` in the table), ``module`` (the one whose
``WORKFLOWS`` registers it), ``queue``, ``model`` (the spec's model name, ``"default"`` when it
names none), ``webhook_endpoints`` (``[{"slug", "enabled"}]``) and ``paused_sessions``
(``{version: count}`` of its waiting sessions). ``--json`` prints
``{"workflows": [...], "unregistered_endpoints": [{"slug", "workflow"}]}``, the latter being
webhook endpoints whose workflow is no longer registered (they answer 404 ``unknown_workflow``).
Like every command it runs the system checks first, so a broken registry is reported, not listed.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db.models import Count

from engine import SessionStatus
from reviewconsole.hooks.models import WebhookEndpoint
from reviewconsole.workflow_sessions.models import WorkflowSession
from reviewconsole.workflows import WorkflowSpec, all_specs, module_of

COLUMNS = ("name", "title", "version", "module", "queue", "model", "webhook endpoints", "paused sessions")


def _row(spec: WorkflowSpec) -> dict[str, Any]:
    paused = (
        WorkflowSession.objects.filter(workflow=spec.name, status=SessionStatus.WAITING)
        .values_list("workflow_version")
        .annotate(count=Count("id"))
        .order_by("workflow_version")
    )
    endpoints = WebhookEndpoint.objects.filter(workflow=spec.name).order_by("slug")
    return {
        "name": spec.name,
        "title": spec.title,
        "version": str(getattr(spec.build(None), "version", "")),
        "module": module_of(spec.name),
        "queue": spec.queue,
        "model": str(getattr(spec, "model", "") or "default"),
        "webhook_endpoints": [{"slug": e.slug, "enabled": e.enabled} for e in endpoints],
        "paused_sessions": dict(paused),
    }


def _shown(version: str) -> str:
    """A version as the table shows it: ``v1``, or ``none`` for a root without one (an agent)."""
    return f"v{version}" if version else "none"


def _cells(row: dict[str, Any]) -> list[str]:
    endpoints = ", ".join(e["slug"] + ("" if e["enabled"] else " (disabled)") for e in row["webhook_endpoints"])
    paused = ", ".join(f"{_shown(version)}: {count}" for version, count in row["paused_sessions"].items())
    fixed = [row[k] or "-" for k in ("name", "title")] + [row["version"] or "none"]
    fixed += [row[k] or "-" for k in ("module", "queue", "model")]
    return [*fixed, endpoints or "-", paused or "-"]


class Command(BaseCommand):
    help = "List the registered workflows (name, title, version, module, queue, model, endpoints, paused sessions)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--json", dest="as_json", action="store_true", help="Print JSON (for scripts) instead of a table."
        )

    def handle(self, *args: Any, as_json: bool = False, **options: Any) -> None:
        rows = [_row(spec) for spec in all_specs()]
        names = {row["name"] for row in rows}
        orphans = [
            {"slug": e.slug, "workflow": e.workflow}
            for e in WebhookEndpoint.objects.exclude(workflow__in=names).order_by("slug")
        ]
        if as_json:
            self.stdout.write(json.dumps({"workflows": rows, "unregistered_endpoints": orphans}, indent=2))
            return
        if not rows:
            self.stdout.write("No workflows registered: name modules in REVIEWCONSOLE_WORKFLOWS.")
        else:
            table = [list(COLUMNS), *(_cells(row) for row in rows)]
            widths = [max(len(line[i]) for line in table) for i in range(len(COLUMNS))]
            for line in table:
                self.stdout.write(
                    "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
                )
        for orphan in orphans:
            self.stdout.write(
                f"Webhook endpoint {orphan['slug']} names {orphan['workflow']!r}, which is not registered "
                "(it answers 404 unknown_workflow)."
            )
