"""``POST /hooks/<slug>/``: the signed webhook door."""

from __future__ import annotations

import logging

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from ..json_errors import error_response
from .models import WebhookEndpoint
from .ratelimit import rate_limit_check
from .services import MAX_WEBHOOK_ID, max_body_bytes, signing_secret, used_elsewhere, webhook_receive, webhook_repeat

logger = logging.getLogger("reviewconsole.hooks")


@csrf_exempt  # signed by the sender (Standard Webhooks); no browser session is involved
@require_POST
def receive(request: HttpRequest, slug: str) -> JsonResponse:
    """Verify, validate and start a session; see :func:`.services.webhook_receive` for the answers.

    Refusals, checked in this order: 404 unknown or disabled endpoint, 413 ``body_too_large`` body
    over the limit (a ``Content-Length`` over it, or a chunked body that turns out longer),
    400 body not UTF-8, 401 missing or bad signature (or a missing or empty signature header, or a
    timestamp outside the window), 415 not JSON, 400 ``webhook-id`` blank, with control characters
    or too long, 409 ``webhook_id_used`` (the id was delivered to another endpoint signed with
    the same secret: a captured delivery replayed elsewhere), 422 ``webhook_id_reused`` (the id was
    delivered here before with another body), 429 over the endpoint's rate limit (with
    ``Retry-After``). Every signature must be canonical base64 (else 401).
    A ``webhook-id`` delivered before with the same body gets its first answer before the rate
    limit is counted: a replayed copy of a signed request must not use up the limit of the
    sender's new deliveries.
    Hostile input gets one of these, never a 500. Refusals before the signature is verified are
    logged, not stored: unsigned noise must not be able to fill the database.
    """
    endpoint = WebhookEndpoint.objects.filter(slug=slug, enabled=True).first()
    if endpoint is None:
        return error_response(404, "unknown_endpoint", "No such webhook endpoint.")
    length = request.headers.get("Content-Length", "0")
    if not (length.isascii() and length.isdigit()) or int(length) > max_body_bytes():  # not "²": int() refuses it
        return error_response(413, "body_too_large", f"The body exceeds {max_body_bytes()} bytes.")
    try:  # a chunked body (no Content-Length) over DATA_UPLOAD_MAX_MEMORY_SIZE is refused as it is read
        body = request.body
    except RequestDataTooBig:
        body = None
    if body is None or len(body) > max_body_bytes():
        return error_response(413, "body_too_large", f"The body exceeds {max_body_bytes()} bytes.")
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return error_response(400, "invalid_encoding", "The body is not UTF-8.")
    secret = signing_secret(endpoint, body, dict(request.headers))
    if secret is None:
        logger.warning("Webhook %s: bad or missing signature from %s", slug, request.META.get("REMOTE_ADDR"))
        return error_response(401, "bad_signature", "Missing or invalid webhook signature.")
    content_type = request.content_type or ""
    if content_type != "application/json":
        return error_response(415, "unsupported_media_type", "Send the body as application/json.")
    webhook_id = request.headers["webhook-id"]
    if not webhook_id.strip() or not webhook_id.isprintable() or len(webhook_id) > MAX_WEBHOOK_ID:
        # Blank ids would all be copies of one another; control characters have no place in an id.
        message = f"Send a webhook-id of 1 to {MAX_WEBHOOK_ID} printable characters, not only spaces."
        return error_response(400, "invalid_webhook_id", message)
    if used_elsewhere(endpoint, webhook_id, secret):
        logger.warning("Webhook %s: id %r was delivered to another endpoint with this secret", slug, webhook_id[:80])
        message = "This webhook-id was delivered to another endpoint; nothing was started."
        return error_response(409, "webhook_id_used", message)
    repeated = webhook_repeat(endpoint=endpoint, webhook_id=webhook_id, body=body, request=request)
    if repeated is not None:  # a verified copy: its first answer (422 for another body), no rate limit
        return JsonResponse(repeated.body, status=repeated.status)
    retry_after = rate_limit_check(endpoint=endpoint)
    if retry_after is not None:
        message = "Too many deliveries to this endpoint; retry later."
        return error_response(429, "rate_limited", message, retry_after=retry_after)
    result = webhook_receive(endpoint=endpoint, webhook_id=webhook_id, body=body, request=request)
    return JsonResponse(result.body, status=result.status)
