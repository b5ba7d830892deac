"""The API's root: ``/api/v1/`` with its OpenAPI document at ``/api/v1/openapi.json`` and docs at ``/api/v1/docs``."""

from __future__ import annotations

from ninja import NinjaAPI

from .auth import ClientBearer
from .errors import install_handlers
from .lifecycle_views import router as lifecycle_router
from .review_views import router as review_router
from .views import router

__all__ = ["api"]

api = NinjaAPI(
    title="reviewconsole API",
    version="1",
    description=(
        "For outside systems that start sessions and resume them (long-running tool results, answers), "
        "and ask people for reviews (`/reviews`). "
        "Authenticate with `Authorization: Bearer <token>` (a per-client token from the admin). An "
        "`Idempotency-Key` header is optional on every write: a retry with the same key and body gets the first "
        "answer again (`Idempotent-Replayed: true`) and does nothing twice; a write without one is not "
        "deduplicated (sent twice, a start starts two sessions). Errors are "
        '`{"error": {"code", "message", ...}}`.'
    ),
    auth=ClientBearer(),
    urls_namespace="api-v1",
)
install_handlers(api)
api.add_router("", router)
api.add_router("", review_router)
api.add_router("", lifecycle_router)
