"""``python manage.py send_webhook <endpoint> --data '<json>'``: sign, send, print the answer.

Signs with the endpoint's newest secret (Standard Webhooks headers), POSTs to ``--url`` and prints
the console's JSON answer; exits non-zero (CommandError) on a refusal, when the console is
unreachable, or for an unknown endpoint (naming those that exist).
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import httpx
from django.core.management.base import BaseCommand, CommandError, CommandParser

from reviewconsole.hints import DEFAULT_CONSOLE_URL
from reviewconsole.hooks.management.endpoints import find_endpoint, unknown_endpoint
from reviewconsole.hooks.services import sign
from reviewconsole.workflows import UnknownWorkflowError
from reviewconsole.workflows import get as get_workflow


def _is_chat(name: str) -> bool:
    try:
        return get_workflow(name).chat
    except UnknownWorkflowError:
        return False


class Command(BaseCommand):
    help = "Sign a JSON body with a webhook endpoint's secret, POST it to the console, print the response."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("endpoint", help="The webhook endpoint's slug, e.g. email-review.")
        parser.add_argument("--data", required=True, help="The JSON body.")
        parser.add_argument(
            "--url", default=DEFAULT_CONSOLE_URL, help=f"The console's base URL ({DEFAULT_CONSOLE_URL})."
        )
        parser.add_argument("--id", dest="webhook_id", default=None, help="webhook-id (default: a new one).")

    def handle(self, *args: Any, endpoint: str, data: str, url: str, webhook_id: str | None, **options: Any) -> None:
        try:
            json.loads(data)
        except ValueError as exc:
            raise CommandError(f"--data is not valid JSON: {exc}") from exc
        hook = find_endpoint(endpoint)
        if (hook is None or not hook.enabled) and _is_chat(endpoint):
            raise CommandError(
                f"{endpoint} is a chat: it waits for the user's next message, which a webhook cannot send. "
                f"Drive it from an AG-UI client at POST /agui/{endpoint}/ (README: 'Drive a workflow from an "
                "AG-UI client')."
            )
        if hook is None:
            raise unknown_endpoint(endpoint)
        secret = hook.secrets.values_list("secret", flat=True).first()
        if secret is None:
            raise CommandError(f"Webhook endpoint {endpoint!r} has no secret.")
        webhook_id = webhook_id or f"msg_{uuid.uuid4().hex}"
        timestamp = int(time.time())
        headers = {
            "content-type": "application/json",
            "webhook-id": webhook_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": sign(secret, webhook_id, timestamp, data),
        }
        try:
            response = httpx.post(f"{url.rstrip('/')}/hooks/{endpoint}/", content=data.encode(), headers=headers)
        except httpx.HTTPError as exc:
            raise CommandError(f"Could not reach the console at {url}: {exc}") from exc
        try:
            body = response.json()
        except ValueError:
            body = {"status": response.status_code, "body": response.text[:500]}
        self.stdout.write(json.dumps(body, indent=2))
        if response.status_code >= 400:
            raise CommandError(f"The console answered {response.status_code}.")
