"""Idempotency keys: the same ``Idempotency-Key`` and request get the first response again.

The header is IETF draft-ietf-httpapi-idempotency-key-header's. Here it is optional: a write
without one runs every time it is sent and is not deduplicated.

A write runs in one transaction together with the :class:`IdempotencyRecord` of its answer, so the
effect and the record commit together or not at all: across processes and restarts a repeat finds
the record and gets the stored answer (with ``Idempotent-Replayed: true``) and changes nothing.
Two copies racing: the unique constraint on (client, key) lets one record commit; the other's
transaction rolls back whatever it did and it answers with the winner's record.

Only successful answers are kept. A refused write changed nothing, so a retry with the same key is
judged afresh (e.g. after a busy session frees up). The same key with a different request (method,
path or JSON body) is refused with 422 ``idempotency_key_reused``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from django.db import IntegrityError, transaction

from .errors import ApiError
from .models import ApiClient, IdempotencyRecord

__all__ = ["MAX_KEY_CHARS", "idempotent", "request_hash"]

MAX_KEY_CHARS = IdempotencyRecord._meta.get_field("key").max_length or 200

Answer = tuple[int, dict[str, Any]]


def request_hash(method: str, path: str, body: Any) -> str:
    """SHA-256 of the method, the path and the body as canonical JSON (key order ignored)."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(f"{method.upper()} {path}\n{canonical}".encode()).hexdigest()


class _KeyTaken(Exception):
    pass


def _replay(record: IdempotencyRecord, digest: str) -> Answer:
    if record.request_hash != digest:
        raise ApiError(
            422,
            "idempotency_key_reused",
            f"This Idempotency-Key was used at {record.created_at.isoformat()} for a different request.",
        )
    return record.status_code, {**record.response, "_replayed": True}


def idempotent(*, client: ApiClient, key: str | None, digest: str, action: Callable[[], Answer]) -> Answer:
    """Run ``action`` (returns ``(status, body)``) once per ``(client, key)``; see the module doc.

    Without a key the action simply runs in a transaction. A replayed body carries
    ``"_replayed": True`` (the view turns it into the ``Idempotent-Replayed`` header).

    Raises:
        ApiError: 400 ``invalid_request`` for an empty or overlong key; 422
            ``idempotency_key_reused``; whatever ``action`` raises (nothing is kept then).
    """
    if key is None:
        with transaction.atomic():
            return action()
    if not key.strip() or len(key) > MAX_KEY_CHARS or not key.isprintable():
        raise ApiError(400, "invalid_request", f"Idempotency-Key must be 1 to {MAX_KEY_CHARS} printable characters.")
    found = IdempotencyRecord.objects.filter(client=client, key=key).first()
    if found is not None:
        return _replay(found, digest)
    try:
        with transaction.atomic():
            status, body = action()
            try:
                with transaction.atomic():
                    IdempotencyRecord.objects.create(
                        client=client, key=key, request_hash=digest, status_code=status, response=body
                    )
            except IntegrityError:
                raise _KeyTaken from None  # rolls back the action's work with the outer block
        return status, body
    except Exception as exc:
        # A copy with the same key committed while we worked: answer as it did, ours is undone.
        found = IdempotencyRecord.objects.filter(client=client, key=key).first()
        if found is not None:
            return _replay(found, digest)
        if isinstance(exc, _KeyTaken):
            raise ApiError(
                409, "idempotency_in_flight", "A request with this Idempotency-Key is in progress."
            ) from None
        raise
