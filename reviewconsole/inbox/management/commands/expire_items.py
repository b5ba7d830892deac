"""``python manage.py expire_items``: expire every item whose due time has passed, and prune the
queues' change logs.

Expiry normally fires from the ``expire_interrupt`` task enqueued for each due item; this sweep
covers task backends that cannot defer and any task lost on the way (run it from cron, or with
``--every 5`` as a small loop). Each item's expiry is a conditional update, so the sweep and the
tasks may run at the same time without doing anything twice.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import close_old_connections

from reviewconsole.inbox.items.expiry import expire_due_interrupts
from reviewconsole.inbox.live.changes import queue_changes_prune


class Command(BaseCommand):
    help = "Expire due inbox items (escalate or time out) and prune old queue changes."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--every", type=float, default=0, help="Repeat every N seconds until stopped.")

    def handle(self, *args: Any, every: float, **options: Any) -> None:
        while True:
            outcomes = expire_due_interrupts()
            pruned = queue_changes_prune()
            if outcomes or pruned or not every:
                done = ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items())) or "nothing due"
                self.stdout.write(f"{done}; {pruned} old queue changes pruned")
            if not every:
                return
            close_old_connections()  # a long loop must not hold a connection the database dropped
            time.sleep(every)
