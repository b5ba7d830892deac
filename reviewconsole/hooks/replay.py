"""An admin's replay of a kept webhook delivery (the admin's **Replay** action)."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.http import HttpRequest

from ..audit.services import audit_record
from .models import WebhookDelivery
from .services import MAX_WEBHOOK_ID, WebhookResult, webhook_receive

__all__ = ["webhook_replay"]


def webhook_replay(
    *, delivery: WebhookDelivery, user: AbstractBaseUser, request: HttpRequest | None = None
) -> WebhookResult:
    """Run a kept delivery's body again as a new delivery (id ``<id>:replay:<n>``), for an admin.

    The signature was checked when it first arrived; the replay is authorised by the admin's
    permission instead, and audited (``webhook.replay``). A thread key read from a header is the
    one the original delivery named (``WebhookDelivery.thread_key``): the sender's headers are not
    kept, and the admin's request carries none of them.

    Raises:
        ValueError: the body was not kept (over the cap) or the endpoint is disabled.
    """
    if not delivery.body_kept:
        raise ValueError("The body of this delivery was not kept (it was over the size cap, or held a NUL byte).")
    endpoint = delivery.endpoint
    if not endpoint.enabled:
        raise ValueError("The endpoint is disabled.")
    number = WebhookDelivery.objects.filter(replay_of=delivery).count() + 1
    replay_id = f"{delivery.webhook_id[: MAX_WEBHOOK_ID - 20]}:replay:{number}"
    result = webhook_receive(
        endpoint=endpoint, webhook_id=replay_id, body=delivery.body.encode(), request=request, replay_of=delivery
    )
    audit_record(
        action="webhook.replay",
        user=user,
        target=delivery,
        request=request,
        after={"status": result.status, "webhook_id": replay_id, "session_id": result.body.get("session_id")},
    )
    return result
