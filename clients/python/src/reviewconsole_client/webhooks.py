"""Receiving the console's outbound events: ``verify_webhook`` checks a delivery and parses it.

The console signs each delivery as Standard Webhooks specifies (https://www.standardwebhooks.com/,
``webhook-id``, ``webhook-timestamp`` within 5 minutes, ``webhook-signature: v1,<base64 HMAC-SHA256
of id.timestamp.body>``); the check is the ``standardwebhooks`` package's. A delivery may come more
than once (retries after a lost 2xx): dedupe on :attr:`WebhookEvent.id`, the ``webhook-id``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import standardwebhooks

from .errors import WebhookVerificationError
from .reviews import Review

__all__ = ["WebhookEvent", "verify_webhook"]


@dataclass(frozen=True)
class WebhookEvent:
    """A verified event: ``id`` its ``webhook-id`` (the same for every retry of one delivery),
    ``type`` (e.g. ``review.decided``), ``timestamp`` (ISO 8601, as sent), ``data`` the raw JSON
    object, and ``review`` the :class:`Review` in it for the ``review.*`` events (else ``None``)."""

    id: str
    type: str
    timestamp: str | None
    data: dict[str, Any]
    review: Review | None


def verify_webhook(headers: Mapping[str, str], body: bytes | str, secret: str) -> WebhookEvent:
    """Verify a delivery's signature over the raw ``body`` with ``secret`` (``whsec_…``) and parse it.

    ``headers`` are the request's (any letter case); pass ``body`` exactly as received, before any
    JSON parsing. Raises :class:`~reviewconsole_client.errors.WebhookVerificationError` for a
    missing or wrong signature, a timestamp more than 5 minutes off, or a body that is not an event.
    """
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    try:
        event = standardwebhooks.Webhook(secret).verify(body, lowered)
    except (standardwebhooks.WebhookVerificationError, ValueError) as exc:
        raise WebhookVerificationError(f"the webhook did not verify: {exc}") from exc
    if not isinstance(event, dict) or not isinstance(event.get("type"), str) or not isinstance(event.get("data"), dict):
        raise WebhookVerificationError("the webhook's body is not an event ({'type', 'timestamp', 'data'})")
    data: dict[str, Any] = event["data"]
    review = Review.from_json(data) if event["type"].startswith("review.") and "id" in data else None
    return WebhookEvent(
        id=lowered["webhook-id"], type=event["type"], timestamp=event.get("timestamp"), data=data, review=review
    )
