"""The one-command default: SQLite in ``var/``, in-memory channel layer, in-process task worker.

Secrets come from the environment when set; otherwise a random key is generated once and kept in
``var/secret_key`` so sessions survive restarts. Not for production (see ``production.py``).

``var/`` is made ``0700`` and the SQLite database file ``0600`` before Django opens it (SQLite
gives its ``-wal`` and ``-shm`` files the database file's mode): it holds webhook secrets, hashed
tokens and session keys, which no other local user may read.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from . import env
from .base import *  # noqa: F403
from .base import REVIEWCONSOLE, VAR_DIR

VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
VAR_DIR.chmod(0o700)


def private_file(path: Path) -> str:
    """Create ``path`` (if missing) readable and writable by its owner only (``0600``); return it as text."""
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    os.close(fd)
    path.chmod(0o600)
    return str(path)


def _secret_key() -> str:
    if os.environ.get("DJANGO_SECRET_KEY"):
        return os.environ["DJANGO_SECRET_KEY"]
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50), encoding="utf-8")
        path.chmod(0o600)
    return path.read_text(encoding="utf-8").strip()


SECRET_KEY = _secret_key()
DEBUG = os.environ.get("DJANGO_DEBUG", "") == "1"
# Loopback by default; `serve --host <address>` adds the address it binds. Others from the environment.
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "[::1]"] + [
    h for h in os.environ.get("DJANGO_ALLOWED_HOSTS", "").split(",") if h
]
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("DJANGO_CSRF_TRUSTED_ORIGINS", "").split(",") if o]

DATABASES = {
    "default": env.database(
        {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("REVIEWCONSOLE_SQLITE_PATH", str(VAR_DIR / "reviewconsole.sqlite3")),
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    )
}
# The demo workflows unless REVIEWCONSOLE_WORKFLOWS names the modules (replacing the demo).
REVIEWCONSOLE = {**REVIEWCONSOLE, "WORKFLOWS": env.workflow_modules([env.DEMO_WORKFLOWS])}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3" and DATABASES["default"]["NAME"] != ":memory:":
    private_file(Path(DATABASES["default"]["NAME"]))
CHANNEL_LAYERS = env.channel_layers(CHANNEL_LAYERS)  # noqa: F405
TASKS = env.tasks(TASKS)  # noqa: F405

# Email (the inbox's new-item notifications) goes to the console unless a backend is named (env.py).
MAILERS = env.mailers("django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = os.environ.get("REVIEWCONSOLE_FROM_EMAIL", "reviewconsole@localhost")
