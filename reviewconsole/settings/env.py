"""Deployment parts read from the environment: database, channel layer, task backend.

``DATABASE_URL`` (e.g. ``postgres://user:pass@host:5432/db``; psycopg 3) selects the database,
``REDIS_URL`` (e.g. ``redis://127.0.0.1:6379/0``) the ``channels_redis`` layer shared by every
web process (``REVIEWCONSOLE_CHANNELS_PREFIX`` keeps deployments sharing one Redis apart), and
``REVIEWCONSOLE_TASK_BACKEND`` the ``django.tasks`` backend (default: the
database backend of django-tasks-db, which every worker process on every machine polls).
Unset, each falls back to the embedded default given by the caller.
"""

from __future__ import annotations

import os
from typing import Any

import dj_database_url

__all__ = ["channel_layers", "database", "tasks"]


def database(default: dict[str, Any]) -> dict[str, Any]:
    """``DATABASES["default"]`` from ``DATABASE_URL``, else ``default``."""
    url = os.environ.get("DATABASE_URL")
    if not url:
        return default
    config: dict[str, Any] = dj_database_url.parse(url, conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "60")))
    config["CONN_HEALTH_CHECKS"] = True
    if config["ENGINE"] == "django.db.backends.postgresql":
        # Fail a statement stuck on a row lock after a bounded wait instead of hanging a request.
        timeout_ms = int(os.environ.get("DB_LOCK_TIMEOUT_MS", "5000"))
        config.setdefault("OPTIONS", {})["options"] = f"-c lock_timeout={timeout_ms}"
    return config


def channel_layers(default: dict[str, Any]) -> dict[str, Any]:
    """``CHANNEL_LAYERS`` on Redis when ``REDIS_URL`` is set, else ``default``."""
    url = os.environ.get("REDIS_URL")
    if not url:
        return default
    config: dict[str, Any] = {"hosts": [url]}
    if os.environ.get("REVIEWCONSOLE_CHANNELS_PREFIX"):
        # Keeps deployments (or test stacks) that share one Redis apart: their group names would clash.
        config["prefix"] = os.environ["REVIEWCONSOLE_CHANNELS_PREFIX"]
    return {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": config}}


def tasks(default: dict[str, Any]) -> dict[str, Any]:
    """``TASKS`` with ``REVIEWCONSOLE_TASK_BACKEND`` as the backend's dotted path when set."""
    backend = os.environ.get("REVIEWCONSOLE_TASK_BACKEND")
    if not backend:
        return default
    return {"default": {**default["default"], "BACKEND": backend}}
