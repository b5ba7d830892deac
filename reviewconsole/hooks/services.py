"""Receiving a webhook: verify the signature, validate the body, start the session once per id."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from standardwebhooks.webhooks import Webhook

from engine import WorkflowDataError

from ..workflow_sessions.services import session_start
from ..workflows import UnknownWorkflowError
from .models import DeliveryOutcome, WebhookDelivery, WebhookEndpoint

logger = logging.getLogger("reviewconsole.hooks")

__all__ = ["MAX_WEBHOOK_ID", "WebhookResult", "sign", "verify", "webhook_receive"]

MAX_WEBHOOK_ID = WebhookDelivery._meta.get_field("webhook_id").max_length or 200
"""The longest ``webhook-id`` accepted, in characters (the column's width)."""


@dataclass
class WebhookResult:
    """What to answer: an HTTP status and a JSON body."""

    status: int
    body: dict[str, Any]


def verify(endpoint: WebhookEndpoint, body: bytes, headers: dict[str, str]) -> bool:
    """True when any of the endpoint's secrets signed ``body`` (Standard Webhooks, v1, 5 min window)."""
    for secret in endpoint.secrets.values_list("secret", flat=True):
        try:
            Webhook(secret).verify(body, headers, json_parse=False)
        except Exception as exc:  # the library raises several types for malformed headers; all mean "not this secret"
            logger.debug("Webhook for %s not signed by one of its secrets: %r", endpoint.slug, exc)
            continue
        return True
    return False


def sign(secret: str, webhook_id: str, timestamp: int, body: str) -> str:
    """The ``webhook-signature`` header value for a body (used by ``send_webhook`` and tests)."""
    import datetime as dt

    return Webhook(secret).sign(webhook_id, dt.datetime.fromtimestamp(timestamp, tz=dt.UTC), body)


def webhook_receive(*, endpoint: WebhookEndpoint, webhook_id: str, body: bytes) -> WebhookResult:
    """Start a session from a verified delivery, exactly once per ``webhook-id``.

    A repeated id returns the first delivery's response and starts nothing, also when two copies
    arrive at the same moment (the unique constraint decides which one records the delivery).

    Answers: 202 ``{"session_id", "url"}``; 400 ``invalid_json`` (not strict JSON: also NaN,
    Infinity, or nesting too deep to parse); 400 ``invalid_body`` with ``errors`` (``path`` and
    ``message`` per field) when the body does not fit the workflow's input schema; 503
    ``endpoint_unavailable`` when the endpoint names a workflow that is not registered.
    """
    previous = WebhookDelivery.objects.filter(endpoint=endpoint, webhook_id=webhook_id).first()
    if previous is not None:
        return WebhookResult(previous.status_code, previous.response)
    try:
        data = json.loads(body, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return WebhookResult(400, {"error": "invalid_json", "message": "The body is not valid JSON."})
    try:
        with transaction.atomic():
            session = session_start(workflow=endpoint.workflow, data=data, user_id=f"webhook:{endpoint.slug}")
            result = WebhookResult(202, {"session_id": session.id, "url": f"/api/sessions/{session.id}/"})
            WebhookDelivery.objects.create(
                endpoint=endpoint,
                webhook_id=webhook_id,
                outcome=DeliveryOutcome.ACCEPTED,
                status_code=result.status,
                response=result.body,
                session=session,
            )
        return result
    except WorkflowDataError as exc:
        result = WebhookResult(
            400, {"error": "invalid_body", "message": "The body does not match the workflow's input.", **exc.details}
        )
        _record_refusal(endpoint, webhook_id, result, exc.message)
        return result
    except UnknownWorkflowError:
        # A configuration error, not the sender's: answer generically, keep no delivery so that
        # the sender's retry succeeds once an admin fixes the endpoint.
        logger.error("Webhook endpoint %s names unregistered workflow %r", endpoint.slug, endpoint.workflow)
        return WebhookResult(503, {"error": "endpoint_unavailable", "message": "The endpoint cannot start sessions."})
    except IntegrityError:
        # Another copy with the same webhook-id won the race; answer as it did.
        previous = WebhookDelivery.objects.get(endpoint=endpoint, webhook_id=webhook_id)
        return WebhookResult(previous.status_code, previous.response)


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _record_refusal(endpoint: WebhookEndpoint, webhook_id: str, result: WebhookResult, error: str) -> None:
    try:
        WebhookDelivery.objects.create(
            endpoint=endpoint,
            webhook_id=webhook_id,
            outcome=DeliveryOutcome.REJECTED,
            status_code=result.status,
            response=result.body,
            error=error,
        )
    except IntegrityError:
        logger.info("Refused delivery %s of %s was already recorded", webhook_id, endpoint.slug)


def max_body_bytes() -> int:
    """The largest body accepted, in bytes."""
    return int(settings.REVIEWCONSOLE["WEBHOOK_MAX_BYTES"])
