"""``review.decided``: how a review ended, as an outbound event, from the sessions' outbox.

The API registers :func:`review_consume` as an outbox consumer after the inbox's and outbound's
(``apps.py``, order 30): when a review's interrupt is answered (``interrupt.answered``, its wire id
the review's id: decided, expired, or cancelled by a queue manager with the cancelled answer) or
cancelled with its session by someone else than its own client (``interrupt.cancelled``: a queue
manager cancelled the whole session; a cancel or revision by the client itself sends nothing, the
client knows), in the relay's transaction it writes one outbound message to the review's
``callback_url`` (``outbound.services.callback_emit``, signed with the API client's webhook
secret: :func:`client_secret`, registered as the ``api_client`` signer) and one per subscription to
``review.decided`` (``event_emit``), all keyed by the outbox row's id: a row relayed again (a
crash mid-row) writes none twice, so a receiver that dedupes on ``webhook-id`` hears of each
decision once. The message's ``data`` is the review JSON (``reviews.review_json``); delivery,
signing and retries with back-off are outbound's.
"""

from __future__ import annotations

from ..outbound.services import callback_emit, enabled_subscriptions, event_emit
from ..workflow_sessions.domain_events import DomainEvent, InterruptAnswered, InterruptCancelled
from ..workflows import review as review_workflow
from .models import ApiClient, Review
from .reviews import review_json

__all__ = ["EVENT_TYPE", "SIGNER", "client_secret", "review_consume", "review_wants"]

EVENT_TYPE = "review.decided"
SIGNER = "api_client"


def client_secret(key: str) -> str | None:
    """The webhook secret of the active API client ``key`` (its pk), or None."""
    if not key.isdigit():
        return None
    active = ApiClient.objects.filter(pk=int(key), revoked_at__isnull=True)
    return active.values_list("webhook_secret", flat=True).first()


def review_wants(event: DomainEvent) -> bool:
    """A review's interrupt answered, or cancelled with its session (its wire id is the review's
    ``rv_…`` id): no query."""
    if isinstance(event, InterruptCancelled) and event.cause != "superseded":
        return False  # the session failed (a Retry asks again) or was restored to before it
    return isinstance(event, InterruptAnswered | InterruptCancelled) and event.interrupt_id.startswith("rv_")


def review_consume(event: DomainEvent, outbox_id: int) -> None:
    """Emit ``review.decided`` for a review that ended (see the module docstring)."""
    if not isinstance(event, InterruptAnswered | InterruptCancelled) or not review_wants(event):
        return
    review = (
        Review.objects.select_related("session", "client", "revision_of")
        .filter(pk=event.interrupt_id, session_id=event.session_id)
        .first()
    )
    if review is None:
        return
    data = review_json(review)
    if isinstance(event, InterruptCancelled) and (data["status"] != "cancelled" or review.cancelled_at is not None):
        return  # superseded by its client's revision, or cancelled by its client: nothing to tell
    if data["status"] == "cancelled" and (data["cancelled"] or {}).get("by") == f"client:{review.client.name}":
        return  # its client cancelled it through the sessions API's lifecycle operation
    if review.callback_url:
        callback_emit(
            event_type=EVENT_TYPE,
            url=review.callback_url,
            signer=f"{SIGNER}:{review.client_id}",
            data=data,
            outbox_id=outbox_id,
        )
    if enabled_subscriptions():
        event_emit(event_type=EVENT_TYPE, workflow=review_workflow.NAME, data=data, outbox_id=outbox_id)
