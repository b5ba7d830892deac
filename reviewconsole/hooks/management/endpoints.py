"""The webhook endpoint a management command names (``send_webhook``, ``webhook_secret``), or an
error that lists the endpoints there are."""

from __future__ import annotations

from django.core.management.base import CommandError

from reviewconsole.hints import venv_python
from reviewconsole.hooks.models import WebhookEndpoint

__all__ = ["endpoint_named", "unknown_endpoint"]


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


def endpoint_named(slug: str) -> WebhookEndpoint:
    """The endpoint ``slug``.

    Raises:
        CommandError: no such endpoint (:func:`unknown_endpoint`).
    """
    endpoint = WebhookEndpoint.objects.filter(slug=slug).first()
    if endpoint is None:
        raise unknown_endpoint(slug)
    return endpoint
