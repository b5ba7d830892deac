"""Deployment parts read from the environment: database, channel layer, task backend, mailer, workflows.

``DATABASE_URL`` (e.g. ``postgres://user:pass@host:5432/db``; psycopg 3) selects the database,
``REDIS_URL`` (e.g. ``redis://127.0.0.1:6379/0``) the ``channels_redis`` layer shared by every
web process (``REVIEWCONSOLE_CHANNELS_PREFIX`` keeps deployments sharing one Redis apart), and
``REVIEWCONSOLE_TASK_BACKEND`` the ``django.tasks`` backend (default: the
database backend of django-tasks-db, which every worker process on every machine polls).
``REVIEWCONSOLE_EMAIL_BACKEND`` names the mail backend (the inbox's new-item notifications),
``REVIEWCONSOLE_EMAIL_HOST`` and ``REVIEWCONSOLE_EMAIL_PORT`` (default 25) the SMTP backend's server.
Unset, each falls back to the embedded default given by the caller.
``REVIEWCONSOLE_WORKFLOWS`` (comma-separated dotted module paths) replaces the default list of
workflow modules (:func:`workflow_modules`); ``REVIEWCONSOLE_TEST_WORKFLOWS=1`` adds the fault
tests' probe module to it.

On PostgreSQL each process keeps a connection pool (psycopg's): ``DB_POOL_MAX_SIZE`` connections at
most (default 10; ``0`` turns pooling off and ``DB_CONN_MAX_AGE`` applies), ``DB_POOL_MIN_SIZE``
kept open, ``DB_POOL_TIMEOUT`` seconds to wait for one. Size PostgreSQL's ``max_connections`` for
(web processes + worker processes) × ``DB_POOL_MAX_SIZE``. ``DB_LOCK_TIMEOUT_MS`` bounds row-lock
waits (default 5000).
"""

from __future__ import annotations

import os
from ipaddress import ip_address
from typing import Any
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

__all__ = [
    "DEMO_WORKFLOWS",
    "PROBE_WORKFLOWS",
    "EnvironmentValueError",
    "channel_layers",
    "database",
    "is_local_url",
    "mailers",
    "number",
    "tasks",
    "workflow_modules",
]

DEMO_WORKFLOWS = "reviewconsole.demo"
"""The demo workflows' module: the embedded and test settings' default list."""
PROBE_WORKFLOWS = "reviewconsole.demo.probes"
"""The probe workflow of the fault and scale-out tests (``REVIEWCONSOLE_TEST_WORKFLOWS=1``)."""


class EnvironmentValueError(ImproperlyConfigured):
    """An environment variable the settings read holds a value of the wrong form; the message
    names the variable, its value and the form expected (``manage.py`` prints it without a traceback)."""


def number[N: (int, float)](name: str, default: N | None, kind: type[N]) -> N | None:
    """The environment variable ``name`` read as ``kind`` (``int`` or ``float``); unset or empty: ``default``.

    Raises:
        EnvironmentValueError: the value is not such a number (the message names the variable,
            its value and the form expected), so a typo stops every command with one clear line.
    """
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return kind(raw)
    except ValueError:
        form = "a whole number, e.g. 3" if kind is int else "a number, e.g. 0.2"
        raise EnvironmentValueError(f"The environment variable {name} is {raw!r}: expected {form}.") from None


def is_local_url(url: str) -> bool:
    """Whether ``url``'s host is this machine (``localhost`` or a loopback address), as a local
    model server's base URL is (``http://127.0.0.1:8080/v1``)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


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
        options = config.setdefault("OPTIONS", {})
        options["options"] = f"-c lock_timeout={timeout_ms}"
        pool_max = int(os.environ.get("DB_POOL_MAX_SIZE", "10"))
        if pool_max > 0:
            # Daphne runs each request on a thread of its own, so without a pool every request
            # opens a server connection (and keeps it, with persistent connections): a few dozen
            # busy reviewers exhaust max_connections. A pool per process bounds them; a request
            # that waits longer than the timeout for one is answered 503.
            options["pool"] = {
                "min_size": int(os.environ.get("DB_POOL_MIN_SIZE", "1")),
                "max_size": pool_max,
                "timeout": float(os.environ.get("DB_POOL_TIMEOUT", "10")),
            }
            config["CONN_MAX_AGE"] = 0  # the pool keeps connections; Django must not
    return config


REDIS_SOCKET_TIMEOUT = 15.0
"""Seconds a read from Redis may take: longer than channels_redis's blocking pop (5 s)."""


def channel_layers(default: dict[str, Any]) -> dict[str, Any]:
    """``CHANNEL_LAYERS`` on Redis when ``REDIS_URL`` is set, else ``default``."""
    url = os.environ.get("REDIS_URL")
    if not url:
        return default
    # A pooled connection broken by a Redis restart fails its next command once; retrying it on a
    # fresh connection keeps the restart from reaching a reviewer's websocket as an error.
    from redis.exceptions import ConnectionError as RedisConnectionError  # redis takes 0.4 s: Redis setups only

    host = {
        "address": url,
        "retry_on_error": [RedisConnectionError],
        "health_check_interval": 10,
        # redis-py 8 reads with a 5 s socket timeout by default, and channels_redis's receive blocks
        # in BZPOPMIN for 5 s: an idle websocket or progress stream then failed with "Timeout reading
        # from …" (django/channels_redis#422). The read must outlast the blocking pop.
        "socket_timeout": REDIS_SOCKET_TIMEOUT,
    }
    config: dict[str, Any] = {"hosts": [host]}
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


def workflow_modules(default: list[str]) -> list[str]:
    """``REVIEWCONSOLE["WORKFLOWS"]``: ``$REVIEWCONSOLE_WORKFLOWS`` split on commas when set (it
    replaces ``default``: name ``reviewconsole.demo`` in it to keep the demo), else ``default``;
    plus :data:`PROBE_WORKFLOWS` when ``REVIEWCONSOLE_TEST_WORKFLOWS=1``."""
    raw = os.environ.get("REVIEWCONSOLE_WORKFLOWS")
    modules = list(default) if raw is None else [m.strip() for m in raw.split(",") if m.strip()]
    if os.environ.get("REVIEWCONSOLE_TEST_WORKFLOWS") == "1" and PROBE_WORKFLOWS not in modules:
        modules.append(PROBE_WORKFLOWS)
    return modules


def mailers(default_backend: str) -> dict[str, Any]:
    """``MAILERS``: the ``default`` mailer's backend from ``REVIEWCONSOLE_EMAIL_BACKEND`` (else
    ``default_backend``), its SMTP server from ``REVIEWCONSOLE_EMAIL_HOST`` / ``_PORT`` when set."""
    mailer: dict[str, Any] = {"BACKEND": os.environ.get("REVIEWCONSOLE_EMAIL_BACKEND", default_backend)}
    if os.environ.get("REVIEWCONSOLE_EMAIL_HOST"):
        mailer["OPTIONS"] = {
            "host": os.environ["REVIEWCONSOLE_EMAIL_HOST"],
            "port": int(os.environ.get("REVIEWCONSOLE_EMAIL_PORT", "25")),
        }
    return {"default": mailer}
