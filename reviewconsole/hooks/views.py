"""``POST /hooks/<slug>/``: the signed webhook door."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from .models import WebhookEndpoint
from .services import max_body_bytes, verify, webhook_receive


def _error(status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse({"error": code, "message": message}, status=status)


@csrf_exempt  # signed by the sender (Standard Webhooks); no browser session is involved
@require_POST
def receive(request: HttpRequest, slug: str) -> JsonResponse:
    endpoint = WebhookEndpoint.objects.filter(slug=slug, enabled=True).first()
    if endpoint is None:
        return _error(404, "unknown_endpoint", "No such webhook endpoint.")
    length = request.headers.get("Content-Length", "0")
    if not length.isdigit() or int(length) > max_body_bytes():
        return _error(413, "body_too_large", f"The body exceeds {max_body_bytes()} bytes.")
    body = request.body
    if len(body) > max_body_bytes():
        return _error(413, "body_too_large", f"The body exceeds {max_body_bytes()} bytes.")
    if not verify(endpoint, body, dict(request.headers)):
        return _error(401, "bad_signature", "Missing or invalid webhook signature.")
    content_type = request.content_type or ""
    if content_type != "application/json":
        return _error(415, "unsupported_media_type", "Send the body as application/json.")
    result = webhook_receive(endpoint=endpoint, webhook_id=request.headers["webhook-id"], body=body)
    return JsonResponse(result.body, status=result.status)
