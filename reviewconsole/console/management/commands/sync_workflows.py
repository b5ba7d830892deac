"""``python manage.py sync_workflows``: each registered workflow's queue, created when missing.

Also the queues workflows escalate to and triage, each with its reviewers group
(``queue:<slug>``) and managers group (``managers:<slug>``); see
:func:`reviewconsole.inbox.items.queues.workflow_queues_sync`. Idempotent: what exists is left as it
is. ``manage.py demo`` runs it.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from reviewconsole.inbox.items.queues import workflow_queue_slugs, workflow_queues_sync


class Command(BaseCommand):
    help = "Create the queues (and their reviewers and managers groups) of the registered workflows when missing."

    def handle(self, *args: Any, **options: Any) -> None:
        created = set(workflow_queues_sync())
        if options["verbosity"] < 1:
            return
        for slug in workflow_queue_slugs():
            state = "created" if slug in created else "exists"
            self.stdout.write(f"Queue {slug}: {state} (reviewers queue:{slug}, managers managers:{slug})")
