"""``python manage.py webhook_secret <endpoint>``: print the endpoint's signing secret (``whsec_…``).

The newest of the endpoint's secrets (the one ``send_webhook`` signs with), alone on one line, so a
shell can read it: ``secret=$(.venv/bin/python manage.py webhook_secret email-review)`` (the
README's curl example). It reads the console's database: only whoever runs the console can. Exits
non-zero (CommandError) for an unknown endpoint, naming those that exist, or one without a secret.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviewconsole.hooks.management.endpoints import endpoint_named


class Command(BaseCommand):
    help = "Print a webhook endpoint's newest signing secret (whsec_…), e.g. for a curl example."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("endpoint", help="The webhook endpoint's slug, e.g. email-review.")

    def handle(self, *args: Any, endpoint: str, **options: Any) -> None:
        secret = endpoint_named(endpoint).secrets.values_list("secret", flat=True).first()
        if secret is None:
            raise CommandError(f"Webhook endpoint {endpoint!r} has no secret: add one in the admin (Webhooks).")
        self.stdout.write(secret)
