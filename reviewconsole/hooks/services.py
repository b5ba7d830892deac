"""Receiving a webhook: verify the signature, validate the body, start the session once per id."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from engine import SessionBusyError, WorkflowDataError

from .. import json_input
from ..audit.services import audit_record
from ..json_errors import error_body
from ..workflow_sessions.arrivals import ArrivalResult, SessionWaitingError, arrival_rejected, session_arrive
from ..workflows import UnknownWorkflowError
from ..workflows import get as get_workflow
from .mapping import HEADER, map_input, thread_key_of
from .models import DeliveryOutcome, WebhookDelivery, WebhookEndpoint

logger = logging.getLogger("reviewconsole.hooks")

__all__ = [
    "AUDITED_DUPLICATES",
    "MAX_WEBHOOK_ID",
    "WebhookResult",
    "body_digest",
    "sign",
    "signing_secret",
    "used_elsewhere",
    "verify",
    "webhook_receive",
    "webhook_repeat",
]

MAX_WEBHOOK_ID = WebhookDelivery._meta.get_field("webhook_id").max_length or 200
"""The longest ``webhook-id`` accepted, in characters (the column's width)."""

AUDITED_DUPLICATES = 100
"""Copies of one delivery audited one by one (``webhook.delivery``, outcome ``duplicate``); later
copies are only counted on the delivery (``duplicates``, ``last_duplicate_at``)."""


@dataclass
class WebhookResult:
    """What to answer: an HTTP status and a JSON body."""

    status: int
    body: dict[str, Any]


def _strict_base64(text: str) -> bool:
    """Whether ``text`` is canonical base64 (the library's ``b64decode`` drops stray characters,
    so ``v1,<sig>!!!`` verified as ``v1,<sig>``)."""
    try:
        return base64.b64encode(base64.b64decode(text, validate=True)).decode() == text
    except ValueError:
        return False


def _header(headers: dict[str, str], name: str) -> str:
    return next((value for key, value in headers.items() if key.lower() == name), "")


def signing_secret(endpoint: WebhookEndpoint, body: bytes, headers: dict[str, str]) -> str | None:
    """The endpoint's secret that signed ``body`` (Standard Webhooks, v1, 5 min window), or None.

    ``webhook-timestamp`` must be Unix seconds in ASCII digits: the library parses it with
    ``float()``, which would also take ``T.0``, ``+T`` or ``Te0`` for the signed ``T``. Every
    signature in ``webhook-signature`` must be ``v<n>,<canonical base64>``: one that is not
    refuses the delivery.
    """
    timestamp = _header(headers, "webhook-timestamp")
    if not (timestamp.isascii() and timestamp.isdigit()):
        return None
    signatures = _header(headers, "webhook-signature").split(" ")
    if not all(version and _strict_base64(sig) for version, _, sig in (s.partition(",") for s in signatures)):
        return None
    for secret in endpoint.secrets.values_list("secret", flat=True):
        try:
            Webhook(secret).verify(body, headers, json_parse=False)
        except Exception as exc:  # the library raises several types for malformed headers; all mean "not this secret"
            logger.debug("Webhook for %s not signed by one of its secrets: %r", endpoint.slug, exc)
            continue
        return secret
    return None


def verify(endpoint: WebhookEndpoint, body: bytes, headers: dict[str, str]) -> bool:
    """True when one of the endpoint's secrets signed ``body`` (see :func:`signing_secret`)."""
    return signing_secret(endpoint, body, headers) is not None


def used_elsewhere(endpoint: WebhookEndpoint, webhook_id: str, secret: str) -> bool:
    """Whether ``webhook_id`` was delivered to another endpoint that shares ``secret``: a captured
    delivery replayed at another endpoint (the signature covers id, timestamp and body, not the
    endpoint). A ``webhook-id`` is unique per secret."""
    return (
        WebhookDelivery.objects.filter(webhook_id=webhook_id, endpoint__secrets__secret=secret)
        .exclude(endpoint=endpoint)
        .exists()
    )


def sign(secret: str, webhook_id: str, timestamp: int, body: str) -> str:
    """The ``webhook-signature`` header value for a body (used by ``send_webhook`` and tests)."""
    return Webhook(secret).sign(webhook_id, dt.datetime.fromtimestamp(timestamp, tz=dt.UTC), body)


def _audit(endpoint: WebhookEndpoint, webhook_id: str, result: WebhookResult, outcome: str, request: Any) -> None:
    audit_record(
        action="webhook.delivery",
        actor=f"webhook:{endpoint.slug}",
        target=endpoint,
        request=request,
        after={"status": result.status, "outcome": outcome, "session_id": result.body.get("session_id")},
        detail={"webhook_id": webhook_id},
    )


def _kept(body: bytes) -> tuple[str, bool]:
    # A raw NUL byte (never valid JSON) cannot be stored in a PostgreSQL text column: keep nothing.
    if len(body) > int(settings.REVIEWCONSOLE["WEBHOOK_KEEP_BYTES"]) or b"\x00" in body:
        return "", False
    return body.decode("utf-8", errors="replace"), True


def webhook_receive(
    *,
    endpoint: WebhookEndpoint,
    webhook_id: str,
    body: bytes,
    request: HttpRequest | None = None,
    replay_of: WebhookDelivery | None = None,
) -> WebhookResult:
    """Start a session from a verified delivery, exactly once per ``webhook-id``.

    A repeated id with the same raw body (by SHA-256, :func:`webhook_repeat`) returns the first
    delivery's response (an accepted one with its ``session_url`` on the host the copy was sent
    to) and starts nothing, also when two copies arrive at the same moment (the unique constraint
    decides which one records the delivery); the first delivery counts the copies. A repeated id
    with another body is refused, 422 ``webhook_id_reused``, and changes nothing. Every other
    outcome is audited (``webhook.delivery``; copies of a delivery up to
    :data:`AUDITED_DUPLICATES`). The body is kept on the delivery for replay when it is under
    ``WEBHOOK_KEEP_BYTES``; its digest always (``body_sha256``).

    With a ``thread_key`` on the endpoint, input for a key whose session is still open follows the
    workflow's ``on_arrival`` (``workflow_sessions/arrivals.py``).

    Answers: 202 ``{"session_id", "session_url", "url"}`` (``session_url``: the absolute
    ``/api/v1/sessions/<id>`` a sender reads with an API token; ``url``: the console's staff
    JSON; ``superseded``: the sessions a ``supersede`` cancelled), or 202 ``{"status": "queued",
    "arrival_id", "waiting_session_id", "waiting_session_url"}``; 409 ``session_waiting``
    (``reject``: the open ``session_id`` and its ``pending`` interrupts; audited, not stored, so
    the sender's retry with the same id is judged again, and accepted once that session has
    ended); 409 ``session_busy`` (not stored, when a supersede finds its run busy); 400
    ``thread_key_missing`` (no key where the endpoint's ``thread_key`` says); 400
    ``invalid_json`` (not strict JSON: also NaN, Infinity, or nesting too deep to parse); 400
    ``invalid_body`` with ``errors`` (``path`` and ``message`` per field) when the body does not
    fit the workflow's input schema, or holds a value no database column can (a NUL character, a
    number like ``1e400``: see :mod:`reviewconsole.json_input`); 404 ``unknown_workflow`` when the
    endpoint names a workflow that is not registered (nothing stored, so the sender's retry
    succeeds once it is).
    """
    digest = body_digest(body)
    repeated = _repeat(endpoint, webhook_id, digest, request)
    if repeated is not None:
        return repeated
    try:
        get_workflow(endpoint.workflow)
    except UnknownWorkflowError:
        return _unknown_workflow(endpoint)
    text, kept = _kept(body)
    try:
        data = json_input.loads(body)
    except json_input.UnstorableValueError as exc:
        message = (
            "The body holds a value that cannot be stored "
            "(a NUL character, an unpaired surrogate or a number out of range)."
        )
        result = WebhookResult(400, error_body("invalid_body", message, errors=exc.errors))
        _record_refusal(endpoint, webhook_id, result, exc.message, text, kept, digest, replay_of, request)
        return result
    except (ValueError, RecursionError):
        result = WebhookResult(400, error_body("invalid_json", "The body is not valid JSON."))
        _record_refusal(endpoint, webhook_id, result, "invalid JSON", text, kept, digest, replay_of, request)
        return result
    key = ""
    if endpoint.thread_key:
        if replay_of is not None and endpoint.thread_key.startswith(HEADER):
            found = replay_of.thread_key or None  # the sender's headers are gone: the key it named is kept
        else:
            headers = dict(request.headers) if request is not None and replay_of is None else {}
            found = thread_key_of(endpoint.thread_key, data, headers)
        if found is None:
            message = f"The delivery has no thread key at {endpoint.thread_key}: a string or a whole number."
            if replay_of is not None and endpoint.thread_key.startswith(HEADER):
                message += " A replay uses the key the original delivery named, and it named none."
            result = WebhookResult(400, error_body("thread_key_missing", message, thread_key=endpoint.thread_key))
            _record_refusal(endpoint, webhook_id, result, "thread key missing", text, kept, digest, replay_of, request)
            return result
        key = found
    try:
        with transaction.atomic():
            arrived = session_arrive(
                workflow=endpoint.workflow,
                data=map_input(data, endpoint.input_mapping),
                user_id=f"webhook:{endpoint.slug}",
                correlation_key=key,
            )
            result = WebhookResult(202, _arrival_body(arrived, request))
            WebhookDelivery.objects.create(
                endpoint=endpoint,
                webhook_id=webhook_id,
                outcome=DeliveryOutcome.ACCEPTED,
                status_code=result.status,
                response=result.body,
                session=None if arrived.outcome == "queued" else arrived.session,
                body=text,
                body_kept=kept,
                body_sha256=digest,
                thread_key=key,
                replay_of=replay_of,
            )
            _audit(endpoint, webhook_id, result, DeliveryOutcome.ACCEPTED, request)
        return result
    except WorkflowDataError as exc:
        message = "The body does not match the workflow's input."
        result = WebhookResult(400, error_body("invalid_body", message, **exc.details))
        _record_refusal(endpoint, webhook_id, result, exc.message, text, kept, digest, replay_of, request, key)
        return result
    except SessionBusyError:  # supersede while a run holds the open session: nothing stored, retry
        return WebhookResult(409, error_body("session_busy", "The open session of this key is running; retry."))
    except SessionWaitingError as exc:
        # Audited, not stored: a stored refusal would be the answer to every retry of this id, also
        # once the waiting session has ended; the sender's retry is judged again instead.
        result = WebhookResult(409, error_body(exc.code, exc.message, **exc.details))
        _audit(endpoint, webhook_id, result, DeliveryOutcome.REJECTED, request)
        arrival_rejected(exc, actor=f"webhook:{endpoint.slug}", request=request)
        return result
    except UnknownWorkflowError:  # unregistered since the check above (a registry reload)
        return _unknown_workflow(endpoint)
    except IntegrityError:
        # Another delivery with the same webhook-id won the race: answer as it did, or refuse ours
        # when its body was another one.
        previous = WebhookDelivery.objects.get(endpoint=endpoint, webhook_id=webhook_id)
        return _repeat_answer(endpoint, previous, digest, request)


def _session_url(session_id: str, request: HttpRequest | None) -> str:
    """The API's URL of the session (``GET /api/v1/sessions/<id>`` with an API token), absolute
    on the host the delivery was sent to; a path when there is no request."""
    path = reverse("api-v1:session_read", kwargs={"session_id": session_id})
    return request.build_absolute_uri(path) if request is not None else path


def _accepted_body(session_id: str, request: HttpRequest | None) -> dict[str, Any]:
    """The 202 answer: the session's id, its ``session_url`` in the API (what a sender with an
    API token follows) and its ``url`` in the console's session JSON (for staff)."""
    return {
        "session_id": session_id,
        "session_url": _session_url(session_id, request),
        "url": reverse("session_json", kwargs={"session_id": session_id}),
    }


def _arrival_body(arrived: ArrivalResult, request: HttpRequest | None) -> dict[str, Any]:
    """The 202 answer for an input that started a session (:func:`_accepted_body`, with
    ``superseded``: the ids of the sessions it cancelled, when it superseded them), or that was
    queued: ``{"status": "queued", "arrival_id", "waiting_session_id", "waiting_session_url"}``."""
    if arrived.outcome == "queued" and arrived.arrival is not None:
        return {
            "status": "queued",
            "arrival_id": arrived.arrival.pk,
            "waiting_session_id": arrived.session.id,
            "waiting_session_url": _session_url(arrived.session.id, request),
        }
    body = _accepted_body(arrived.session.id, request)
    if arrived.superseded:
        body["superseded"] = arrived.superseded
    return body


def _unknown_workflow(endpoint: WebhookEndpoint) -> WebhookResult:
    """404 for an endpoint whose workflow is not registered: a configuration error, not the
    sender's; no delivery is kept, so the sender's retry succeeds once an admin fixes it."""
    logger.error("Webhook endpoint %s names unregistered workflow %r", endpoint.slug, endpoint.workflow)
    message = (
        f"This endpoint starts the workflow {endpoint.workflow!r}, which is not registered on this console: "
        "nothing was started or stored. Ask its administrator to register the workflow or to point the "
        "endpoint at a registered one, then send the delivery again."
    )
    return WebhookResult(404, error_body("unknown_workflow", message))


def body_digest(body: bytes) -> str:
    """The hex SHA-256 of a delivery's raw body (``WebhookDelivery.body_sha256``)."""
    return hashlib.sha256(body).hexdigest()


def webhook_repeat(
    *, endpoint: WebhookEndpoint, webhook_id: str, body: bytes, request: HttpRequest | None = None
) -> WebhookResult | None:
    """The answer to ``webhook_id`` delivered to ``endpoint`` before, else None (a new delivery).

    The same raw ``body`` (by its SHA-256) is a copy: the stored answer, counted on the delivery.
    Another body is refused, 422 ``webhook_id_reused`` (nothing started or stored; the first
    delivery is unchanged), as the API refuses an ``Idempotency-Key`` reused for another request:
    answering the first delivery's 202 would drop the new body unseen. A delivery stored before
    digests were kept (``body_sha256 == ""``) has an unknown body, treated as the same.

    The view asks this after verifying the signature and before counting the rate limit, so a
    replayed copy of a signed request is answered (and counted on its delivery) without using
    up the limit the sender's new deliveries need.
    """
    return _repeat(endpoint, webhook_id, body_digest(body), request)


def _repeat(endpoint: WebhookEndpoint, webhook_id: str, digest: str, request: Any) -> WebhookResult | None:
    previous = WebhookDelivery.objects.filter(endpoint=endpoint, webhook_id=webhook_id).first()
    return _repeat_answer(endpoint, previous, digest, request) if previous is not None else None


def _repeat_answer(endpoint: WebhookEndpoint, previous: WebhookDelivery, digest: str, request: Any) -> WebhookResult:
    """The first answer for a copy of ``previous`` (same digest, or ``previous`` has none), else
    422 ``webhook_id_reused`` (logged, not stored or audited: the id's row is the first delivery)."""
    if previous.body_sha256 and previous.body_sha256 != digest:
        logger.warning("Webhook %s: id %r reused with another body; refused", endpoint.slug, previous.webhook_id[:80])
        message = (
            f"This webhook-id was used at {previous.received_at.isoformat()} for a different body; "
            "nothing was started or stored. Send a new delivery with a new webhook-id."
        )
        return WebhookResult(422, error_body("webhook_id_reused", message))
    return _duplicate(endpoint, previous, request)


def _duplicate(endpoint: WebhookEndpoint, previous: WebhookDelivery, request: Any) -> WebhookResult:
    WebhookDelivery.objects.filter(pk=previous.pk).update(
        duplicates=F("duplicates") + 1, last_duplicate_at=timezone.now()
    )
    body = dict(previous.response)
    if previous.session_id is not None:  # accepted: the session's URL on the host this copy was sent to
        body["session_url"] = _session_url(previous.session_id, request)
    result = WebhookResult(previous.status_code, body)
    # Copies are not rate limited: audit the first ones only, so that replaying one captured
    # request cannot grow the append-only audit log without bound (the delivery counts them all).
    if previous.duplicates < AUDITED_DUPLICATES:
        _audit(endpoint, previous.webhook_id, result, DeliveryOutcome.DUPLICATE, request)
    return result


def _record_refusal(
    endpoint: WebhookEndpoint,
    webhook_id: str,
    result: WebhookResult,
    error: str,
    text: str,
    kept: bool,
    digest: str,
    replay_of: WebhookDelivery | None,
    request: Any,
    thread_key: str = "",
) -> None:
    try:
        with transaction.atomic():
            WebhookDelivery.objects.create(
                endpoint=endpoint,
                webhook_id=webhook_id,
                outcome=DeliveryOutcome.REJECTED,
                status_code=result.status,
                response=result.body,
                error=error[:2000],
                body=text,
                body_kept=kept,
                body_sha256=digest,
                thread_key=thread_key,
                replay_of=replay_of,
            )
            _audit(endpoint, webhook_id, result, DeliveryOutcome.REJECTED, request)
    except IntegrityError:
        logger.info("Refused delivery %s of %s was already recorded", webhook_id, endpoint.slug)


def max_body_bytes() -> int:
    """The largest body accepted, in bytes."""
    return int(settings.REVIEWCONSOLE["WEBHOOK_MAX_BYTES"])
