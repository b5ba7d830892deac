"""The demo's webhook secrets: one per endpoint, derived from ``$DEMO_WEBHOOK_SECRET``.

Imports nothing from Django, so scripts and the scale-out tests can compute an endpoint's secret.
"""

from __future__ import annotations

import base64
import hashlib
import hmac

__all__ = ["README_ENDPOINT", "endpoint_secret"]

README_ENDPOINT = "email-review"
"""The endpoint whose secret is ``$DEMO_WEBHOOK_SECRET`` itself (the README signs for it with curl)."""


def endpoint_secret(secret: str, slug: str) -> str:
    """The demo secret of endpoint ``slug`` made from ``$DEMO_WEBHOOK_SECRET`` (``whsec_…``):
    the secret itself for :data:`README_ENDPOINT`, else ``whsec_`` + base64 of the first 24 bytes
    of HMAC-SHA256(key = the secret's decoded bytes, message = ``slug``): one of its own per
    endpoint, which anyone holding ``$DEMO_WEBHOOK_SECRET`` can compute again (tests, scripts)."""
    if slug == README_ENDPOINT:
        return secret
    key = base64.b64decode(secret.removeprefix("whsec_"))
    return "whsec_" + base64.b64encode(hmac.new(key, slug.encode(), hashlib.sha256).digest()[:24]).decode()
