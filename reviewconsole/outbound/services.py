"""Emitting events, delivering them (signed, with retries and exponential back-off), redelivering.

A message is delivered by the ``deliver_message`` task. A 2xx answer delivers it; anything else
(another status, a timeout, a refused connection) is logged as an attempt and retried after
``OUTBOUND_BACKOFF * 2**(n-1)`` seconds (``run_after``) until ``attempt_limit`` attempts, then the
message is failed (visible in the admin, where an admin may redeliver it).

A message goes to its subscription (its URL, signed with its secret) or, for a callback
(:func:`callback_emit`: a review's ``callback_url``), to its own ``url``, signed with the secret of
its ``signer``: a downstream app registers where its signers' secrets are (:func:`register_signer`;
the API's clients, ``api_client:<pk>``), so no secret is copied into a message.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable
from typing import Any

import httpx
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from .addresses import PrivateAddressError, check_destination
from .models import Attempt, MessageStatus, OutboundMessage, Subscription

logger = logging.getLogger("reviewconsole.outbound")

__all__ = [
    "backoff_seconds",
    "callback_emit",
    "enabled_subscriptions",
    "event_emit",
    "message_deliver",
    "message_redeliver",
    "register_signer",
]

SUBSCRIPTIONS_TTL = 5.0
"""Seconds a process reuses its list of enabled subscriptions (every commit asks; they rarely change).
A change in the admin is seen at once by the process that made it and within this time by others."""

_subscriptions: tuple[float, list[Subscription]] | None = None


def enabled_subscriptions() -> list[Subscription]:
    """The enabled subscriptions, read at most every :data:`SUBSCRIPTIONS_TTL` seconds."""
    global _subscriptions
    now = time.monotonic()
    if _subscriptions is None or now - _subscriptions[0] > SUBSCRIPTIONS_TTL:
        _subscriptions = (now, list(Subscription.objects.filter(enabled=True)))
    return _subscriptions[1]


def forget_subscriptions(**kwargs: Any) -> None:
    """Drop the cached list (connected to Subscription saves and deletes)."""
    global _subscriptions
    _subscriptions = None


def _conf(name: str) -> Any:
    return settings.REVIEWCONSOLE[name]


def backoff_seconds(attempt: int) -> float:
    """Seconds to wait after failed attempt number ``attempt`` (1-based): base × 2^(attempt-1)."""
    return float(_conf("OUTBOUND_BACKOFF")) * (2 ** (attempt - 1))


def event_emit(
    *, event_type: str, workflow: str, data: dict[str, Any], outbox_id: int | None = None
) -> list[OutboundMessage]:
    """Create a message per interested subscription and queue its first attempt after commit.

    ``outbox_id``: the outbox row this event comes from; a subscription that already has a
    message for it gets none again (a row relayed twice).
    """
    subscriptions = [s for s in enabled_subscriptions() if s.wants(event_type, workflow)]
    if outbox_id is not None and subscriptions:
        done = set(OutboundMessage.objects.filter(outbox_id=outbox_id).values_list("subscription_id", flat=True))
        subscriptions = [s for s in subscriptions if s.pk not in done]
    if not subscriptions:
        return []
    payload = {"type": event_type, "timestamp": timezone.now().isoformat(), "data": data}
    messages = []
    with transaction.atomic():
        for subscription in subscriptions:
            message = OutboundMessage.objects.create(
                subscription=subscription,
                event_type=event_type,
                payload=payload,
                attempt_limit=int(_conf("OUTBOUND_MAX_ATTEMPTS")),
                next_attempt_at=timezone.now(),
                outbox_id=outbox_id,
            )
            messages.append(message)
            _enqueue(message.pk)
    return messages


SecretOf = Callable[[str], str | None]
_signers: dict[str, SecretOf] = {}


def register_signer(kind: str, secret_of: SecretOf) -> None:
    """Sign callbacks whose ``signer`` is ``<kind>:<key>`` with ``secret_of(key)`` (None: the signer
    is gone or revoked, and the attempt fails without sending). Called from an app's ``ready()``."""
    _signers[kind] = secret_of


def _callback_secret(signer: str) -> str | None:
    kind, _, key = signer.partition(":")
    secret_of = _signers.get(kind)
    return secret_of(key) if secret_of is not None else None


def callback_emit(
    *, event_type: str, url: str, signer: str, data: dict[str, Any], outbox_id: int
) -> OutboundMessage | None:
    """One message of ``event_type`` to the callback ``url``, signed by ``signer``, queued after
    commit; None when ``url`` already has one for the outbox row ``outbox_id`` (relayed again)."""
    if OutboundMessage.objects.filter(subscription__isnull=True, url=url, outbox_id=outbox_id).exists():
        return None
    payload = {"type": event_type, "timestamp": timezone.now().isoformat(), "data": data}
    message = OutboundMessage.objects.create(
        url=url,
        signer=signer,
        event_type=event_type,
        payload=payload,
        attempt_limit=int(_conf("OUTBOUND_MAX_ATTEMPTS")),
        next_attempt_at=timezone.now(),
        outbox_id=outbox_id,
    )
    _enqueue(message.pk)
    return message


def _destination(message: OutboundMessage) -> tuple[str, str | None, str]:
    """``(url, secret, why not)``: where the message goes, what signs it, and, when it may not be
    sent now, why (a disabled subscription, a signer without a secret)."""
    if message.subscription is not None:
        sub = message.subscription
        return sub.url, sub.secret, "" if sub.enabled else "subscription disabled"
    secret = _callback_secret(message.signer)
    return message.url, secret, "" if secret else "no signing secret (the client is revoked or gone)"


def _enqueue(message_id: str, run_after: dt.datetime | None = None) -> None:
    from .tasks import deliver_message

    def go() -> None:
        task = deliver_message
        if run_after is not None:
            if not task.get_backend().supports_defer:
                logger.warning("Task backend cannot defer; message %s waits for a redeliver", message_id)
                return
            task = task.using(run_after=run_after)
        task.enqueue(message_id)

    transaction.on_commit(go, robust=True)


def _post(message: OutboundMessage, url: str, secret: str) -> tuple[int | None, str]:
    body = _body(message)
    now = timezone.now()
    headers = {
        "content-type": "application/json",
        "user-agent": "reviewconsole-webhooks/1",
        "webhook-id": message.pk,
        "webhook-timestamp": str(int(now.timestamp())),
        "webhook-signature": Webhook(secret).sign(message.pk, now, body),
    }
    try:
        check_destination(url)
    except PrivateAddressError as exc:
        return None, f"Refused: {exc}"[:1000]
    try:
        response = httpx.post(
            url,
            content=body.encode(),
            headers=headers,
            timeout=float(_conf("OUTBOUND_TIMEOUT")),
            follow_redirects=False,
        )
    except httpx.HTTPError as exc:
        return None, f"{type(exc).__name__}: {exc}"[:1000]
    if 200 <= response.status_code < 300:
        return response.status_code, ""
    # The receiver's reply body is not kept: it is the receiver's, and auditors read the attempts.
    return response.status_code, f"HTTP {response.status_code}"


def _body(message: OutboundMessage) -> str:
    import json

    return json.dumps(message.payload, separators=(",", ":"), ensure_ascii=False)


def message_deliver(*, message_id: str, after_crash: bool = False) -> str:
    """Make the next attempt at ``message_id``; returns its status afterwards.

    The attempt is claimed with a conditional UPDATE on the attempt count, so a redeliver and a
    scheduled retry running at once send it once between them. Run again after a crash (the task
    is queued again by ``console/task_recovery.py``): a message whose 2xx was recorded is not sent
    again (its status is ``delivered``); one whose worker died mid-send is sent again, same
    ``webhook-id``, after logging the cut-off attempt as interrupted (``after_crash``: this task
    was claimed before by a worker that died).
    """
    message = OutboundMessage.objects.select_related("subscription").filter(pk=message_id).first()
    if message is None or message.status != MessageStatus.PENDING:
        return message.status if message is not None else "missing"
    number = message.attempts + 1
    # The race this guards: two workers taking the same attempt; only one UPDATE finds the old count.
    claimed = OutboundMessage.objects.filter(pk=message.pk, status=MessageStatus.PENDING, attempts=number - 1).update(
        attempts=number
    )
    if not claimed:
        return "claimed-elsewhere"
    if after_crash:
        _record_interrupted(message, number - 1)
    started = time.monotonic()
    url, secret, refused = _destination(message)
    status_code, error = (None, refused) if refused or not secret else _post(message, url, secret)
    took = int((time.monotonic() - started) * 1000)
    with transaction.atomic():
        Attempt.objects.create(message=message, number=number, status_code=status_code, error=error, duration_ms=took)
        if not error:
            OutboundMessage.objects.filter(pk=message.pk).update(
                status=MessageStatus.DELIVERED, delivered_at=timezone.now(), next_attempt_at=None, last_error=""
            )
            return MessageStatus.DELIVERED
        if number >= message.attempt_limit:
            OutboundMessage.objects.filter(pk=message.pk).update(
                status=MessageStatus.FAILED, next_attempt_at=None, last_error=error
            )
            logger.warning("Outbound message %s failed after %d attempts: %s", message.pk, number, error)
            return MessageStatus.FAILED
        retry_at = timezone.now() + dt.timedelta(seconds=backoff_seconds(number))
        OutboundMessage.objects.filter(pk=message.pk).update(next_attempt_at=retry_at, last_error=error)
        _enqueue(message.pk, run_after=retry_at)
    return MessageStatus.PENDING


INTERRUPTED = "interrupted: the worker stopped during this attempt; no answer was recorded"
"""The error of an attempt that was claimed but never recorded (its worker died mid-send)."""


def _record_interrupted(message: OutboundMessage, number: int) -> None:
    """Log attempt ``number`` as interrupted when it was claimed and never recorded.

    That happens when the worker died during the POST (``kill -9``): the receiver may or may not
    have got it, so the next attempt sends it again with the same ``webhook-id`` (at least once;
    receivers dedupe on it), and the log shows every try.
    """
    if number >= 1 and not Attempt.objects.filter(message=message, number=number).exists():
        Attempt.objects.create(message=message, number=number, status_code=None, error=INTERRUPTED)


def message_redeliver(*, message: OutboundMessage) -> OutboundMessage:
    """Send ``message`` again now (any status), with a fresh budget of attempts."""
    with transaction.atomic():
        OutboundMessage.objects.filter(pk=message.pk).update(
            status=MessageStatus.PENDING,
            attempt_limit=message.attempts + int(_conf("OUTBOUND_MAX_ATTEMPTS")),
            next_attempt_at=timezone.now(),
        )
        _enqueue(message.pk)
    message.refresh_from_db()
    return message
