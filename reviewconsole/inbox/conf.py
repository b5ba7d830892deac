"""The inbox's settings: ``REVIEWCONSOLE[name]`` when set, else ``$REVIEWCONSOLE_<NAME>``, else a default.

| name | default | meaning |
|---|---|---|
| ``CLAIM_TTL`` | 1800 | seconds a claim lasts (a queue may set its own) |
| ``PAGE_SIZE`` | 50 | items per inbox page |
| ``HEARTBEAT_SECONDS`` | 10 | the inbox socket's ping interval; silent for 2× that means dead |
| ``ACCESS_RECHECK_SECONDS`` | 2 | how long an inbox socket trusts its last check of the login and queues |
| ``REJECT_REASON_REQUIRED`` | true | a rejection needs a reason unless the interrupt says otherwise |
| ``BASE_URL`` | ``http://127.0.0.1:8000`` | the console's address, for links in emails (``serve``: the one it serves) |
| ``NOTIFY_EMAIL`` | true | email queue members about new items |
| ``EXPIRY`` | ``{}`` | per workflow ``{"due_in_seconds", "on_expiry", "escalate_to"}`` (JSON in the environment) |
| ``CHANGE_LOG_DAYS`` | 7 | queue changes kept for catching up; older clients take a snapshot |
| ``DUE_SOON_SECONDS`` | 14400 | the longest lead before a due time when a countdown turns amber (``items/sla.py``) |
| ``COUNT_CAP`` | 10000 | a queue's waiting and overdue items are counted up to this many; more show as "10000+" |
"""

from __future__ import annotations

import json
import os
from typing import Any

from django.conf import settings

__all__ = ["inbox_setting"]

_DEFAULTS: dict[str, Any] = {
    "CLAIM_TTL": 1800,
    "PAGE_SIZE": 50,
    "HEARTBEAT_SECONDS": 10.0,
    "ACCESS_RECHECK_SECONDS": 2.0,
    "REJECT_REASON_REQUIRED": True,
    "BASE_URL": "http://127.0.0.1:8000",
    "NOTIFY_EMAIL": True,
    "EXPIRY": {},
    "CHANGE_LOG_DAYS": 7,
    "DUE_SOON_SECONDS": 14400,
    "COUNT_CAP": 10000,
}


def _from_env(name: str, default: Any) -> Any:
    raw = os.environ.get(f"REVIEWCONSOLE_{name}")
    if raw is None:
        return default
    if isinstance(default, bool):
        return raw.strip().lower() in ("1", "true", "yes", "on")
    if isinstance(default, dict):
        return json.loads(raw)
    return type(default)(raw)


def inbox_setting(name: str) -> Any:
    """The value of one inbox setting (see the module docstring).

    Raises:
        KeyError: ``name`` is not an inbox setting.
    """
    default = _DEFAULTS[name]
    configured = getattr(settings, "REVIEWCONSOLE", {})
    if name in configured:
        return configured[name]
    return _from_env(name, default)
