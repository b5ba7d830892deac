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
from .models import DeliveryOutcome, WebhookDelivery, WebhookEndpoint

logger = logging.getLogger("reviewconsole.hooks")

__all__ = ["WebhookResult", "sign", "verify", "webhook_receive"]


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
        except Exception:  # the library raises several types for malformed headers; all mean "not this secret"
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
    """
    previous = WebhookDelivery.objects.filter(endpoint=endpoint, webhook_id=webhook_id).first()
    if previous is not None:
        return WebhookResult(previous.status_code, previous.response)
    try:
        data = json.loads(body)
    except ValueError:
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
    except IntegrityError:
        # Another copy with the same webhook-id won the race; answer as it did.
        previous = WebhookDelivery.objects.get(endpoint=endpoint, webhook_id=webhook_id)
        return WebhookResult(previous.status_code, previous.response)


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
