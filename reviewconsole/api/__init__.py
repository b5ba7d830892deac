"""The API for outside systems: per-client tokens, idempotency keys, and (later) the endpoints."""
