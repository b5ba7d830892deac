"""The webhook endpoint a management command names (``send_webhook``, ``webhook_secret``), or an
error that lists the endpoints there are."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import CommandError
from django.db import DatabaseError

from reviewconsole.hints import venv_python
from reviewconsole.hooks.models import WebhookEndpoint

__all__ = ["endpoint_named", "find_endpoint", "unknown_endpoint"]


def unknown_endpoint(slug: str) -> CommandError:
    """The error for an endpoint ``slug`` that does not exist: it names the enabled endpoints (with
    their workflows), or, when there is none at all, the command that makes the demo's."""
    enabled = list(WebhookEndpoint.objects.filter(enabled=True).values_list("slug", "workflow"))
    if not enabled:
        return CommandError(
            f"No webhook endpoint {slug!r}, and there is none yet: run `{venv_python()} manage.py demo` "
            "(./run does) or add one in the admin (Webhooks → Webhook endpoints)."
        )
    listed = ", ".join(name if name == workflow else f"{name} (workflow {workflow})" for name, workflow in enabled)
    return CommandError(f"No webhook endpoint {slug!r}. The endpoints are: {listed}.")


def find_endpoint(slug: str) -> WebhookEndpoint | None:
    """The endpoint ``slug``, or None.

    Raises:
        CommandError: no console database where this process looks (not migrated: e.g. run with
            another ``REVIEWCONSOLE_VAR_DIR`` than the console's).
    """
    try:
        return WebhookEndpoint.objects.filter(slug=slug).first()
    except DatabaseError:
        where = settings.DATABASES["default"].get("NAME")
        raise CommandError(
            f"No console database at {where}: start the console first (./run), and give this command "
            "the same REVIEWCONSOLE_VAR_DIR (or DATABASE_URL) as the console."
        ) from None


def endpoint_named(slug: str) -> WebhookEndpoint:
    """The endpoint ``slug``.

    Raises:
        CommandError: no such endpoint (:func:`unknown_endpoint`), or no console database
            (:func:`find_endpoint`).
    """
    endpoint = find_endpoint(slug)
    if endpoint is None:
        raise unknown_endpoint(slug)
    return endpoint
